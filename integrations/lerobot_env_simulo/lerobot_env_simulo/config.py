"""``SimuloEnv``: LeRobot's ``EnvConfig`` for our tasks, registered as ``--env.type=simulo``.

LeRobot finds this distribution by its name (``register_third_party_plugins`` imports every
installed distribution named ``lerobot_env_*``: ``lerobot/utils/import_utils.py``, 0.6.1); the
import runs ``EnvConfig.register_subclass("simulo")`` below (draccus' choice registry,
``lerobot/envs/configs.py``). ``lerobot-eval`` / ``lerobot-train`` then build the env with
``make_env(cfg, n_envs, use_async_envs)`` (``lerobot/envs/factory.py``), which calls
``create_envs``: here ``simulo_envs.lerobot.make_env``, one batched env for all ``n_envs``,
returned as LeRobot's ``{suite: {task_id: vec_env}}`` mapping (``{"simulo": {0: env}}``).

``features`` / ``features_map`` follow LeRobot's built-in configs (``AlohaEnv``, ``PushtEnv``):
``action``, ``agent_pos`` -> ``observation.state`` and ``pixels/<camera>`` ->
``observation.images.<camera>``; ``lerobot/envs/utils.py: env_to_policy_features`` reads them
to build a policy's inputs and outputs. They are filled at construction from
``simulo_envs.lerobot.describe`` (a one-env build of the task without a renderer).
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot.configs import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.utils.constants import ACTION, OBS_IMAGES, OBS_STATE

from simulo_envs import lerobot as simulo_lerobot

_KINDS = {"ACTION": FeatureType.ACTION, "STATE": FeatureType.STATE, "VISUAL": FeatureType.VISUAL}


@EnvConfig.register_subclass("simulo")
@dataclass
class SimuloEnv(EnvConfig):
    """A simulo_envs task as a LeRobot environment (``--env.type=simulo``).

    Attributes:
        task: a registered task id (``SO100Lift-v1``, ``SO100PickPlace-v1``, ``FrankaLift-v1``...).
        fps: the control (and recording) rate [Hz]; None: the task's (20 Hz); filled in.
        robot: the robot uid (None: the task's).
        cameras: which sensor cameras become ``observation.images.<name>``: LeRobot's
            comma-separated names, each ``camera`` or ``name=camera`` to rename
            (``front=base_camera``); None: every sensor camera under its own name.
        obs_type: ``pixels_agent_pos`` (images and robot state) or ``agent_pos``.
        control_mode: None: joint targets in the LeRobot follower's units for the SO arms
            (degrees, gripper 0-100), the task's default for other robots.
        episode_length: steps per episode (None: the task's).
        observation_width / observation_height: every sensor camera's image size [px] (None:
            the task's, 128); LeRobot's ``AlohaEnv`` names.
        visualization_width / visualization_height: the render camera's frame size [px] for
            the evaluation videos (None: the task's, 512); LeRobot's ``PushtEnv`` names.
        variant: a suite task's variant (``train``, ``heldout``, ``heldout_colors`` ...;
            ``tasks/so_suite.py``); None: the task's default. ``scripts/benchmark_suite.py``'s
            splits are these variants, with its published first seeds as ``--seed``.
    """

    task: str | None = "SO100Lift-v1"
    fps: int | None = None
    robot: str | None = None
    cameras: str | None = None
    obs_type: str = "pixels_agent_pos"
    control_mode: str | None = None
    episode_length: int | None = None
    observation_width: int | None = None
    observation_height: int | None = None
    visualization_width: int | None = None
    visualization_height: int | None = None
    variant: str | None = None

    def __post_init__(self) -> None:
        described = simulo_lerobot.describe(self.task, **self._make_kwargs())
        self.features = {key: PolicyFeature(type=_KINDS[kind], shape=shape) for key, (kind, shape) in described.items()}
        self.features_map = {ACTION: ACTION, "agent_pos": OBS_STATE}
        for key in described:
            if key.startswith("pixels/"):
                self.features_map[key] = f"{OBS_IMAGES}.{key.removeprefix('pixels/')}"
        if self.fps is None:
            self.fps = int(simulo_lerobot.check_request(self.task).task_cls.default_sim_config.control_freq)

    def _make_kwargs(self) -> dict:
        kwargs = {"robot": self.robot, "cameras": self.cameras, "fps": self.fps, "obs_type": self.obs_type,
                  "control_mode": self.control_mode}
        if self.episode_length is not None:
            kwargs["max_episode_steps"] = self.episode_length
        if self.variant is not None:
            kwargs["variant"] = self.variant
        sensor = _size(self.observation_width, self.observation_height)
        if sensor:
            kwargs["sensor_configs"] = sensor
        render = _size(self.visualization_width, self.visualization_height)
        if render:
            kwargs["human_render_camera_configs"] = render
        return kwargs

    @property
    def gym_kwargs(self) -> dict:
        """The keywords ``create_envs`` passes to ``simulo_envs.lerobot.make_env``."""
        return self._make_kwargs()

    def create_envs(self, n_envs: int, use_async_envs: bool = False):
        """``{"simulo": {0: env}}``: all ``n_envs`` in one batched env (LeRobot's ``use_async_envs``
        has nothing to spread over processes and is ignored)."""
        env = simulo_lerobot.make_env(self.task, n_envs=n_envs, use_async_envs=use_async_envs, **self.gym_kwargs)
        return {self.type: {0: env}}


def _size(width: int | None, height: int | None) -> dict:
    """A camera override for every camera: the sizes given."""
    return {k: v for k, v in (("width", width), ("height", height)) if v is not None}
