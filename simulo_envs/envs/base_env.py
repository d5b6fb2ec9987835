"""``BaseEnv``: the batched Gymnasium environment every task subclasses (maniskill-baseenv seed).

Lifecycle (a task overrides the hooks, in this order)::

    __init__ -> _reconfigure: Scene -> _load_agent -> _load_scene -> _load_lighting -> attach backend
    reset(seed, options) -> _initialize_episode(env_idx, options) for the reset envs only
    step(action) -> _before_control_step -> agent.set_action -> sim_steps_per_control x
                    (_before_simulation_step, PhysX step, _after_simulation_step)
                 -> _after_control_step -> evaluate -> obs, reward, terminated, truncated, info

Everything is batched over ``num_envs``: observations, rewards, ``terminated`` and
``truncated`` have the env dimension first, on ``env.device``.

Episode end (Gymnasium's contract, per env):
- ``terminated[i]``: env ``i`` reached a terminal state of the task (``info["success"]`` or
  ``info["fail"]``); the value of later states is zero.
- ``truncated[i]``: env ``i`` ran ``max_episode_steps`` steps without terminating (a time-out,
  not a terminal state); bootstrap from its value.
The env does not reset by itself: reset the done envs with
``reset(options={"env_idx": done_ids})`` (a partial reset), or use the vector wrapper's autoreset.
Truncation is counted per env inside the env (``max_episode_steps``, settable): ``gym.make(id,
num_envs=N)`` applies the registered limit per env, ``gym.make(..., max_episode_steps=k)`` sets it
(-1: none); Gymnasium's one-counter ``TimeLimit`` never stays on a batched env (``simulo_envs/vector/gym_spec.py``).

Where the parts live: construction and keyword checks here (``env_keywords.py``, ``env_options.py``,
``sensors.py``); building the scene ``reconfigure.py``; ``reset`` ``reset.py``; ``step``, its outputs
and the per-env step counter (``elapsed_steps``, ``set_elapsed_steps``, ``max_episode_steps``)
``step.py`` (CPU fast path ``fast_step.py``); observation assembly ``observations.py``; the mixins
named in ``BaseEnv``'s bases for state, rendering, the viewer and the seed's remaining names; the
components for domain randomization (``env.randomization``, ``randomization.py``) and faults
(``env.faults``, ``faults.py``). Each attribute has one owner that alone writes it
(docs/architecture.md, "Who owns BaseEnv's state").

Reset options: the keys declared in ``reset_option_keys`` over the class hierarchy (a task adds
those its ``_initialize_episode`` reads); any other key raises ValueError (``reset_options.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional, Sequence, Union

import gc

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector.utils import batch_space

from simulo_envs.cloner.plan import CloneCfg
from simulo_envs.envs.actions import dict_action_bounds
from simulo_envs.envs.env_keywords import check_env_keywords
from simulo_envs.envs.env_options import check_env_options
from simulo_envs.envs.fast_step import NumpyStepMixin
from simulo_envs.envs.instructions import task_instruction
from simulo_envs.envs.faults import Faults
from simulo_envs.envs.maniskill_api import ManiSkillApiMixin
from simulo_envs.envs.observations import ObservationMixin
from simulo_envs.envs.randomization import Randomizer
from simulo_envs.envs.randomization_presets import randomization_table
from simulo_envs.envs.reconfigure import ReconfigureMixin
from simulo_envs.envs.rendering import RenderingMixin
from simulo_envs.envs.reset import ResetMixin, episode_seeds
from simulo_envs.envs.rng import MAIN_SEED, EpisodeRNG
from simulo_envs.envs.sensors import STATE_OBS_MODES, apply_overrides, parse_obs_mode
from simulo_envs.envs.state import StateMixin
from simulo_envs.envs.step import StepMixin
from simulo_envs.envs.viewer import HumanViewerMixin, check_human_render
from simulo_envs.sim import backend_device, resolve_backend_name
from simulo_envs.sim.config import SimConfig
from simulo_envs.sim.render import require_vulkan
from simulo_envs.tensors import as_float32

__all__ = ["BaseEnv", "episode_seeds"]


class BaseEnv(ReconfigureMixin, ResetMixin, StepMixin, ObservationMixin, NumpyStepMixin,
              RenderingMixin, HumanViewerMixin, StateMixin, ManiSkillApiMixin, gym.Env):
    """Superclass of simulo_envs tasks.

    Args:
        num_envs: parallel envs, stepped together (CPU or GPU).
        obs_mode: ``"state"`` (default; None means it too: flat float32 ``(N, D)``), ``"state_dict"`` (nested dict of tensors),
            ``"none"`` (empty dict), or visual: ``"rgb"``, ``"depth"``, ``"segmentation"``,
            ``"normal"``, ``"albedo"``, ``"rgbd"``, ``"sensor_data"`` and ``+`` combinations, giving
            ``{"agent", "extra", "sensor_data": {camera: {texture: (N, H, W, C)}}, "sensor_param"}``
            (see ``simulo_envs/envs/rendering.py``), or ``"pointcloud"`` (the cameras fused into
            ``obs["pointcloud"]``, see ``simulo_envs/envs/pointcloud.py``). Image modes carry the
            robot's own state only (``agent``, and ``extra`` cut to ``image_obs_extra``);
            ``"+state"`` adds the privileged state flat as ``obs["state"]`` (float32 (N, D), in
            place of ``agent`` and ``extra``), ``"+state_dict"`` as whole ``agent``/``extra``
            dicts (ManiSkill's spelling: ``"rgb+state"``; ``simulo_envs/envs/observations.py``).
        reward_mode: ``"normalized_dense"`` (in [0, 1]; the default, ``SUPPORTED_REWARD_MODES[0]``,
            also for None), ``"dense"``, ``"sparse"`` (+1 success, -1 fail, else 0) or ``"none"`` (zeros).
        control_mode: the agent's control mode; None takes the agent's default.
        render_mode: None, ``"rgb_array"`` (``render()`` -> uint8 (N, H, W, 3) from the human
            render camera), ``"sensors"`` (every sensor texture as an image, side by side),
            ``"all"`` (both side by side) or ``"human"`` (SAPIEN's viewer window; refused at
            construction where no display exists). See ``simulo_envs/envs/rendering.py``.
        clone_cfg: how heterogeneous props pick their variant per env (``CloneCfg``); None takes
            the task's ``default_clone_cfg``.
        sensor_configs / human_render_camera_configs: overrides of the task's camera configs:
            ``{camera_name: {field: value}}`` or ``{field: value}`` for every camera (fields of
            ``CameraConfig``: pose, width, height, fov, near, far, shader_pack).
        sim_config: a dict of ``SimConfig`` fields overriding the task's defaults, or a ``SimConfig``.
        sim_backend: ``"auto"``, ``"physx_cpu"``, ``"physx_cuda"`` / ``"physx_cuda:N"`` (tensors on
            ``cuda:N``) or ``"physx_cuda_emulated"`` (the GPU code path on the CPU, for tests): ``simulo_envs.sim``.
        max_episode_steps: per-env truncation limit [env steps]; None takes the task's default
            (``default_max_episode_steps``); -1: no limit (Gymnasium's convention); settable later.
        enhanced_determinism: every reset draws fresh episode seeds from the per-env main streams
            (so each episode replays alone from ``_episode_seed``); by default an unseeded reset
            continues the episode streams (``simulo_envs/envs/rng.py``).
        randomization: a domain randomization table (``Randomize`` entries) replacing the task's
            ``default_randomization``, or a preset by name: ``"default"`` (the task's table),
            ``"none"`` (no randomization), ``"visual"`` (the task's table plus its
            ``visual_randomization``: lights, colours, camera poses, for image policies); see
            ``simulo_envs/envs/randomization.py``.
        visual_detail: ``"fast"`` (simplified copies of the visual meshes: sensors, ``render()``
            and videos render several times faster) or ``"full"`` (the assets' own meshes); None
            takes the task's ``default_visual_detail``. Collision geometry is the same in both
            (``simulo_envs/sim/visual_meshes.py``, figures in ``docs/cameras.md``).
        robot_uids, reconfiguration_freq, shader_dir, enable_shadow, viewer_camera_configs,
            render_backend, parallel_in_single_scene: the seed's keywords, with their meaning here
            in ``simulo_envs/envs/env_options.py``.

    Raises:
        ValueError: an unknown keyword (named, with the closest accepted one: ``env_keywords.py``),
            an unknown mode or bad ``num_envs`` / ``sim_config`` / camera override.
        RuntimeError: rendering asked for (``render_mode`` or a visual ``obs_mode``) where no
            Vulkan driver exists; the message says what to install. Raised before anything is built.
    """

    SUPPORTED_OBS_MODES: ClassVar[tuple[str, ...]] = STATE_OBS_MODES + ("sensor_data", "any_textures", "pointcloud")
    """The seed's tuple; ``"any_textures"`` stands for any of ``rgb``, ``depth``, ``segmentation``,
    ``normal``, ``albedo`` (and ``rgbd``) joined with ``+``."""
    SUPPORTED_REWARD_MODES: ClassVar[tuple[str, ...]] = ("normalized_dense", "dense", "sparse", "none")
    SUPPORTED_RENDER_MODES: ClassVar[tuple[str, ...]] = ("human", "rgb_array", "sensors", "all")
    #: Per instance, ``render_fps`` is the env's ``control_freq`` (one frame per env step).
    metadata: dict[str, Any] = {"render_modes": ["human", "rgb_array", "sensors", "all"], "render_fps": 20}

    _first_env: ClassVar[int] = 0
    """Index of env 0 in the batch these envs belong to: a worker shard of the sharded vector env
    holds envs ``_first_env ..`` of a bigger batch and seeds them as that batch does
    (``reset(seed=s)``: env ``i`` here gets ``s + _first_env + i``)."""

    default_sim_config: ClassVar[SimConfig] = SimConfig()
    default_clone_cfg: ClassVar[CloneCfg] = CloneCfg()
    default_max_episode_steps: ClassVar[Optional[int]] = None
    SUPPORTED_ROBOTS: ClassVar[Optional[Sequence]] = None
    """``robot_uids`` values the task supports (None: any registered agent)."""
    default_robot_uids = None
    """The agent(s) built when ``robot_uids`` is None (a uid of ``simulo_envs.agents.REGISTERED_AGENTS``)."""
    default_control_mode: ClassVar[Optional[str]] = None
    """The control mode when ``control_mode`` is None (None: the agent's own default)."""
    default_visual_detail: ClassVar[str] = "fast"
    """``visual_detail`` when the keyword is None: ``"fast"`` or ``"full"``."""
    default_randomization: ClassVar[tuple] = ()
    """The task's randomization table (a tuple of ``Randomize``); ``randomization=`` replaces it."""
    visual_randomization: ClassVar[tuple] = ()
    """What ``randomization="visual"`` adds to ``default_randomization``: the task's visual domain
    randomization (lights, colours, textures, camera poses and fields of view, image noise,
    distractors), drawn per env on every reset."""
    visual_randomization_v1: ClassVar[tuple] = ()
    """What ``randomization="visual_v1"`` adds: the first visual preset (lights, an object's colour,
    the front camera's pose), which checkpoints trained with it name (``randomization_presets.py``)."""
    visual_distractor_size: ClassVar[float] = 0.04
    """The extent [m] of the distractor shapes a randomization table places (``envs/distractors.py``)."""
    #: ``reset(options=...)`` keys this class reads; each subclass (or mixin) lists only its own
    #: additions, the accepted set is the union over the MRO (``reset_options.known_reset_option_keys``).
    reset_option_keys: ClassVar[tuple[str, ...]] = ("env_idx", "reconfigure", "reset_to_env_states")
    xp_hooks: ClassVar[bool] = False
    """Set True in a task class whose step hooks (``evaluate``, ``compute_*_reward``,
    ``_get_obs_agent``, ``_get_obs_extra``) compute with ``self.xp`` alone: its functions, state
    read through ``state_in(self.xp)`` and the agent's ``xp=`` queries, the task's own tensors
    through ``self.as_xp``. The framework then runs those same hooks on numpy arrays where that is
    cheaper (physx_cpu, ``state`` obs mode; ``fast_step.py``). A subclass that overrides a hook
    without setting it again gets the torch path."""
    episodes_from_states: ClassVar[bool] = False
    """Set True in a task class whose episode is wholly in ``get_state_dict()`` (no per-episode
    buffer outside the scene's objects, such as a goal drawn in ``_initialize_episode``, and every
    env built alike), so that an env can start an episode from a state recorded in another env:
    what a training recipe's ``start_states`` needs (``simulo_envs.training.start_states``)."""
    # ------------------------------------------------------------------ the state BaseEnv owns
    # Each attribute of an env is declared once, by the class that owns it (this one or a mixin
    # of its bases), and written only by that class's code; docs/architecture.md has the table.
    # (``metadata``, above, is one too: the class's, replaced per instance in __init__.)
    # Set in __init__ from the keywords, then fixed:
    num_envs: int
    obs_mode: str
    reward_mode: str
    render_mode: Optional[str]
    sim_config: SimConfig
    sim_backend: str
    device: torch.device
    clone_cfg: CloneCfg
    robot_uids: Any
    reconfiguration_freq: Optional[int]
    enable_shadow: bool
    visual_detail: str
    _requested_control_mode: Optional[str]
    _textures: frozenset
    """The texture names of a visual ``obs_mode`` (empty for the state modes)."""
    _render: bool
    """Whether anything renders here (a visual ``obs_mode`` or a ``render_mode``)."""
    _render_config: Any
    _shader_pack: Optional[str]
    _parallel_in_single_scene: bool
    _sensor_overrides: Optional[dict]
    _human_overrides: Optional[dict]
    _viewer_overrides: Optional[dict]
    _viewer_camera_configs: dict
    _enhanced_determinism: bool
    _rng: EpisodeRNG
    """Per-env episode and main random streams (``episode_rng``)."""
    faults: Faults
    """Fault detection and quarantine (``simulo_envs/envs/faults.py``)."""
    randomization: Randomizer
    """The domain randomization table and its draws: ``terms``, ``values()``, ``privileged()``,
    ``privileged_names`` (``simulo_envs/envs/randomization.py``)."""
    _closed: bool
    # The action space and its bounds, from the agent once the first scene is built:
    action_space: Any
    single_action_space: Any
    _dict_action_bounds: Optional[dict]
    _action_low_np: np.ndarray
    _action_high_np: np.ndarray
    _action_low: torch.Tensor
    _action_high: torch.Tensor
    _init_raw_state: dict
    """``get_state_dict()`` right after construction."""
    # Written by the ``_load_agent`` hook at each scene build:
    agent: Any
    """The robot agent (``simulo_envs.agents``), built by ``_load_agent``."""

    def __new__(cls, *args, **kwargs):
        check_env_keywords(cls, kwargs)   # before any __init__ runs, a task's own too (env_keywords.py)
        return super().__new__(cls)

    def __init__(
        self,
        num_envs: int = 1,
        obs_mode: str = "state",
        reward_mode: Optional[str] = None,
        control_mode: Optional[str] = None,
        render_mode: Optional[str] = None,
        sim_config: Union[None, dict, SimConfig] = None,
        sim_backend: str = "auto",
        max_episode_steps: Optional[int] = None,
        sensor_configs: Optional[dict] = None,
        human_render_camera_configs: Optional[dict] = None,
        clone_cfg: Optional[CloneCfg] = None,
        enhanced_determinism: bool = False,
        randomization: Optional[Sequence] = None,
        robot_uids=None,
        reconfiguration_freq: Optional[int] = None,
        shader_dir: Optional[str] = None,
        enable_shadow: bool = False,
        viewer_camera_configs: Optional[dict] = None,
        render_backend: Optional[str] = "gpu",
        parallel_in_single_scene: bool = False,
        visual_detail: Optional[str] = None,
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        obs_mode = self.SUPPORTED_OBS_MODES[0] if obs_mode is None else obs_mode
        reward_mode = self.SUPPORTED_REWARD_MODES[0] if reward_mode is None else reward_mode
        self._textures = parse_obs_mode(obs_mode)
        if render_mode == "sensors" and not self._textures:
            raise ValueError("render_mode='sensors' shows the sensor cameras: use a visual obs_mode such as 'rgb'")
        if sim_config is not None and not isinstance(sim_config, (dict, SimConfig)):
            raise TypeError(f"sim_config must be a dict of SimConfig fields or a SimConfig, got {type(sim_config).__name__}")
        if reward_mode not in self.SUPPORTED_REWARD_MODES:
            raise ValueError(f"reward_mode {reward_mode!r} not supported; choose from {self.SUPPORTED_REWARD_MODES}")
        if render_mode is not None and render_mode not in self.SUPPORTED_RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r} not supported; choose from {self.SUPPORTED_RENDER_MODES} or None")
        extra = check_env_options(
            type(self), textures=self._textures, render_mode=render_mode, robot_uids=robot_uids,
            reconfiguration_freq=reconfiguration_freq, render_backend=render_backend, shader_dir=shader_dir,
            enable_shadow=enable_shadow, viewer_camera_configs=viewer_camera_configs,
            parallel_in_single_scene=parallel_in_single_scene, enhanced_determinism=enhanced_determinism,
            visual_detail=self.default_visual_detail if visual_detail is None else visual_detail)
        limit = self.default_max_episode_steps if max_episode_steps is None else max_episode_steps
        self.num_envs = int(num_envs)
        self.obs_mode = obs_mode
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.sim_config = self.default_sim_config.merged(sim_config)
        # One frame per env step: videos play in real time at the control rate (20 Hz by default).
        self.metadata = {**type(self).metadata, "render_fps": self.sim_config.control_freq}
        self.sim_backend = resolve_backend_name(sim_backend)
        self.device = backend_device(self.sim_backend)
        self._requested_control_mode = control_mode
        self.clone_cfg = clone_cfg or self.default_clone_cfg
        self._sensor_overrides = sensor_configs
        self._human_overrides = human_render_camera_configs
        self._viewer_overrides = viewer_camera_configs
        self._shader_pack = extra.shader_pack
        self._render_config = extra.render
        self.robot_uids = extra.robot_uids
        self.reconfiguration_freq = extra.reconfiguration_freq
        self.enable_shadow = extra.render.shadows
        self.visual_detail = extra.render.visual_detail
        self._parallel_in_single_scene = extra.render.single_scene
        self._render = bool(self._textures) or render_mode is not None
        if self._render:
            require_vulkan()
        if render_mode == "human":
            check_human_render()  # no display: a clear error now, not at the first render()
        self._viewer_camera_configs = apply_overrides(self._default_viewer_camera_configs, viewer_camera_configs)
        self._closed = False
        self._enhanced_determinism = extra.enhanced_determinism
        self._rng = EpisodeRNG(self.num_envs)  # main seeds MAIN_SEED + i
        self.randomization = Randomizer(self, randomization_table(type(self), randomization))
        self.faults = Faults(self)
        self._init_fast_path()
        self._init_step_counter(limit)  # validates the limit, before the scene is built
        # Built and reset as the seed does at creation: env i seeded MAIN_SEED + i, so the first
        # unseeded reset is the same episode in every fresh process.
        obs, _ = self.reset(seed=MAIN_SEED, options={"reconfigure": True})
        self.single_action_space = self.agent.single_action_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # A dict action space (several robots): per-key bounds; else one Box's.
        self._dict_action_bounds = dict_action_bounds(self.single_action_space)
        if self._dict_action_bounds is None:
            self._action_low_np = self.single_action_space.low.astype(np.float32)
            self._action_high_np = self.single_action_space.high.astype(np.float32)
            self._action_low = torch.from_numpy(self._action_low_np).to(self.device)
            self._action_high = torch.from_numpy(self._action_high_np).to(self.device)
        self._init_raw_state = self.get_state_dict()
        self._set_observation_space(obs)

    # ------------------------------------------------------------------ properties
    @property
    def control_mode(self) -> str:
        """The agent's control mode."""
        return self.agent.control_mode

    @property
    def sim_freq(self) -> int:
        """Physics rate [Hz]."""
        return self.sim_config.sim_freq

    @property
    def control_freq(self) -> int:
        """Env step rate [Hz]."""
        return self.sim_config.control_freq

    @property
    def control_timestep(self) -> float:
        """Seconds of simulated time per env step."""
        return 1.0 / self.sim_config.control_freq

    @property
    def fault_counts(self) -> torch.Tensor:
        """int32 (N,): faults of each env since the env was made (``info["sim_fault_count"]``); fresh."""
        return self.faults.counts

    @property
    def quarantined(self) -> torch.Tensor:
        """bool (N,): envs quarantined by a fault, until their next reset; fresh."""
        return self.faults.quarantined

    @property
    def lights(self):
        """Per-env lights (``simulo_envs.envs.visuals.Lights``); usable where the env renders."""
        return self.randomization.lights

    @property
    def sensor_cameras(self) -> dict:
        """Sensor camera name -> ``SensorCamera`` (per-env poses, fields of view, image noise); a copy of the mapping."""
        return self.randomization.sensor_cameras

    @property
    def floor(self):
        """The floor's per-env colour and texture (``simulo_envs.envs.visuals.Floor``); where the env renders."""
        return self.randomization.floor

    @property
    def visual_distractors(self) -> dict:
        """Distractor slots of the randomization table (``simulo_envs/envs/distractors.py``); a copy."""
        return self.randomization.visual_distractors

    @property
    def episode_rng(self) -> EpisodeRNG:
        """Per-env random streams for ``_initialize_episode`` (``uniform``/``integers`` give a row
        per reset env; see ``simulo_envs/envs/rng.py``). Torch's random functions called in
        ``_initialize_episode`` follow the same seeds (``simulo_envs/envs/torch_rng.py``)."""
        return self._rng

    # ------------------------------------------------------------------ hooks for tasks
    def _load_agent(self, options: dict, initial_agent_poses=None, build_separate: bool = False) -> None:
        """Create ``self.agent`` from ``self.robot_uids`` and add its robot(s) to ``self.scene``.

        Args:
            options: the reset options (unused by the default).
            initial_agent_poses: env-local pose of the robot's fixed base (a ``Pose``, a
                ``sapien.Pose`` or ``[x, y, z, qw, qx, qy, qz]``, the same in every env), or a list
                of them, one per robot of a ``robot_uids`` tuple; default the env origin.
            build_separate: accepted for the seed's signature; every env's robot is always its
                own articulation here, so per-env randomisation of robot properties works
                either way.

        Override it to build the agent yourself. Raises ValueError when no robot is named
        (neither ``robot_uids`` nor the task's ``default_robot_uids``).
        """
        from simulo_envs.agents import load_agents

        if self.robot_uids is None:
            raise ValueError(f"{type(self).__name__} names no robot: pass robot_uids=... or set default_robot_uids")
        self.agent = load_agents(self.scene, self.robot_uids, self._requested_control_mode or self.default_control_mode,
                                 initial_agent_poses)

    def _load_scene(self, options: dict) -> None:
        """Add props (``self.scene.add``) and global things (ground)."""

    def _load_lighting(self, options: dict) -> None:
        """Set the scene's lights (``self.scene.set_lighting``); the default is an ambient light
        and one directional light from above and behind. Used only when rendering."""
        self.scene.set_lighting()

    def _after_reconfigure(self, options: dict) -> None:
        """Runs after the scene is attached to a backend."""

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        """Set the initial state of the envs in ``env_idx`` (int64 (k,)) only."""

    def evaluate(self) -> dict:
        """Task predicates, batched: ``{"success": bool (N,), "fail": bool (N,), ...}``."""
        return {}

    def compute_dense_reward(self, obs: Any, action: torch.Tensor, info: dict) -> torch.Tensor:
        """Task hook: dense reward, float32 (N,), from ``info`` (``evaluate``'s predicates).

        Raises:
            NotImplementedError: the task defines none (use another ``reward_mode``).
        """
        raise NotImplementedError(f"{type(self).__name__} has no dense reward")

    def compute_normalized_dense_reward(self, obs: Any, action: torch.Tensor, info: dict) -> torch.Tensor:
        """Task hook: the dense reward scaled into [0, 1], float32 (N,).

        Raises:
            NotImplementedError: the task defines none.
        """
        raise NotImplementedError(f"{type(self).__name__} has no normalized dense reward")

    def compute_sparse_reward(self, obs: Any, action: torch.Tensor, info: dict) -> torch.Tensor:
        """+1 where ``info["success"]``, -1 where ``info["fail"]``, else 0; float32 (N,)."""
        reward = self._zeros()
        if "success" in info:
            reward = reward + as_float32(info["success"])
        if "fail" in info:
            reward = reward - as_float32(info["fail"])
        return reward

    def _get_obs_agent(self) -> dict:
        """Proprioception: ``{"qpos": (N, dof), "qvel": (N, dof)}`` (per agent key for several robots)."""
        proprioception = getattr(self.agent, "get_proprioception", None)
        if proprioception is not None:
            xp = self.xp
            if xp is torch:  # an agent may take no ``xp`` (it then gets no fast path)
                return proprioception()
            return proprioception(xp=xp)
        state = self.agent.robot.state_in(self.xp)
        return {"qpos": state.qpos, "qvel": state.qvel}

    def _get_obs_extra(self, info: dict) -> dict:
        """Task observations (env-local frame), a dict of (N, ...) tensors."""
        return {}

    def instructions(self) -> list[str]:
        """Each env's one-sentence instruction for its current episode (``num_envs`` str): the
        task string a language-conditioned policy gets. Default: the task's sentence
        (``simulo_envs/envs/instructions.py``) in every env; a task whose sentence depends on
        the episode overrides it."""
        return [task_instruction(type(self))] * self.num_envs

    # ------------------------------------------------------------------ render, close (step hooks: step.py)
    def render(self):
        """See ``RenderingMixin.render``. Raises RuntimeError once the env is closed."""
        self._require_open()
        return super().render()

    def close(self) -> None:
        """Release the simulation; calling it again does nothing.

        The released SAPIEN scenes hold reference cycles (entities and their components), so
        CPython's cyclic collector runs once here: their memory is returned at ``close()``, not
        at some later collection (without it, make/close loops raise the process's memory
        high-water mark by about 7 % before it levels off; measured by ``scripts/soak.py``).
        """
        if self._closed:
            return
        self._closed = True
        self._close_viewer()
        self._clear("its env was closed")
        gc.collect()

    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError("this env is closed; make a new one")
