"""``DatasetSchema``: what every episode of one dataset shares, read from the env that made it.

A dataset holds episodes of one env id, observation mode and control mode; the schema names
them together with the control rate (the dataset's fps), the robot, the per-dimension names of
the state and action vectors, the cameras and the task's one-sentence instruction. Writers
store it (LeRobot: ``meta/info.json`` + ``meta/simulo_env.json``; HDF5: the JSON sidecar) and
refuse to append episodes of another schema; readers hand it back.

Everything comes from the env and its agent, never from a robot named here:

- ``robot_type``: the agent's ``uid`` (``"panda"``; a SO-100 agent says ``"so100"``).
- state names, depth first over the observation's ``agent`` then ``extra`` leaves (the order
  ``flatten_obs`` concatenates them): the agent's ``qpos`` / ``qvel`` columns are
  ``<joint>.qpos`` [rad, m] / ``<joint>.qvel`` [rad/s, m/s]; a 7-wide ``*pose`` leaf is
  ``<leaf>.x .y .z .qw .qx .qy .qz``; a 3-wide leaf ``<leaf>.x .y .z``; a scalar leaf its own
  name; anything else ``<leaf>.<i>``.
- action names, in action order, from the agent's controller: a joint position part gives
  ``<joint>.qpos`` (absolute targets [rad, m]) or ``<joint>.delta_pos`` (normalised steps);
  a part driving several joints with one action (a parallel gripper) gives its part name
  (``gripper``); a Cartesian part ``<part>.dx .dy .dz`` (+ ``.drx .dry .drz``) in the delta
  modes, ``<part>.x .y .z .rx .ry .rz`` for absolute poses; an agent without such a
  controller ``action.<i>``. In the control mode of the agent's real robot
  (``agent.lerobot.control_mode``), the real robot's names (``shoulder_pan.pos``).
- units: a name means one unit everywhere (``NAME_UNITS``). LeRobot's ``<motor>.pos`` is
  kept for the real robot's driver units (degrees, a gripper's 0..100), never for radians.
- state source: ``"env"`` (``observation.state`` is the env's flat state observation) or
  ``"robot"`` (the real robot's joint readings in its driver's units, ``robot_units``: what a
  dataset in a real robot's schema records; ``robot_units.py``).
- cameras: dataset camera name -> image shape; ``camera_sources`` maps a dataset camera to the
  env's sensor camera it was rendered by, where the names differ (``front`` <- ``base_camera``).
- ``next_features``: whether the frames carry ``next.reward``, ``next.done`` and
  ``next.success`` (a real robot's recordings have none).
- cameras: the RGB sensor images of the observation (``sensor_data/<camera>/rgb``), (H, W, 3).
- action noise: ``action_noise_std`` and ``action_noise_columns`` say whether the episodes were
  recorded with noise on the executed actions (DART, ``action_noise.py``): then the actions are
  the expert's clean labels, not what the env executed. Datasets written before these fields
  existed read as recorded without noise.
- task: the task class's ``task_instruction`` when it has one, else the first sentence of its
  module docstring after ``"<env id>: "`` (a variant described from another task, as in
  ``"FrankaLiftMixed-v1: FrankaLift-v1 with ..."``, takes its parent class's sentence).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np

from simulo_envs.datasets.action_noise import check_noise_std
from simulo_envs.envs.instructions import task_instruction

POSE_PARTS = ("x", "y", "z", "qw", "qx", "qy", "qz")
"""Names of a pose's 7 components (scalar-first quaternion, the framework's convention)."""
XYZ = ("x", "y", "z")
LATER_FIELDS = ("action_noise_std", "action_noise_columns", "state_source", "robot_units", "camera_sources",
                "next_features", "names_version", "full_episodes")
"""``DatasetSchema`` fields added after datasets were first written: absent from those, read as
their defaults (recorded without action noise, the env's state, the env's camera names, with
``next.*`` columns; version-1 names renamed by ``from_json``)."""
NAMES_VERSION = 2
"""Version of the column naming. Version 1 (datasets written before ``names_version`` existed)
named radians ``<joint>.pos`` / ``<joint>.vel``; ``from_json`` renames them."""
NAME_UNITS = {".qpos": "rad (revolute) or m (prismatic)", ".qvel": "rad/s or m/s",
              ".pos": "the real robot's driver units (LeRobot: degrees; a gripper 0..100)",
              ".delta_pos": "a normalised joint step, [-1, 1] = the control mode's bound"}
"""What each joint column suffix means, in every dataset and control mode."""
STATE_SOURCES = ("env", "robot")
EE_ACTION_PARTS = {"delta_pos": ("dx", "dy", "dz"), "delta_pose": ("dx", "dy", "dz", "drx", "dry", "drz"),
                   "pose": ("x", "y", "z", "rx", "ry", "rz")}


@dataclass(frozen=True)
class DatasetSchema:
    """The shared description of a dataset's episodes (see the module docstring).

    Attributes:
        env_id: the registered env id (``"FrankaLift-v1"``).
        obs_mode / control_mode / reward_mode: the env's modes when the episodes were recorded.
        fps: frames per second = the env's control frequency [Hz].
        robot_type: the agent's uid.
        state_names / action_names: one name per column of ``observation.state`` / ``action``.
        cameras: RGB camera name -> image shape ``(H, W, 3)``.
        task: the task's one-sentence instruction.
        max_episode_steps: the env's time limit [steps] (None: none).
        env_kwargs: the keywords that rebuild the env (``gym.make(env_id, **env_kwargs)``),
            encoded as JSON by ``simulo_envs.envs.env_settings`` (``decode_env_kwargs`` gives the
            objects back: camera poses, randomization tables, ``SimConfig``); ``env_kwargs_objects``.
        action_noise_std: standard deviation of the Gaussian noise the env's executed actions
            got while recording (action units; DART, ``action_noise.py``); 0.0: none, the
            actions are the executed ones. Otherwise the actions are the expert's clean labels
            and replaying them does not reproduce the episodes.
        action_noise_columns: the ``action_names`` that got that noise (empty without noise).
        state_source: ``"env"`` or ``"robot"`` (module docstring).
        robot_units: with ``state_source="robot"``, the map from the env's joints to the recorded
            columns: ``{"names", "joints", "scale", "offset", "units"}``, ``value = scale * (q -
            offset)`` per column (``agent.lerobot``; ``{}`` for a dataset written before it was
            recorded: the env's agent says); None otherwise.
        camera_sources: dataset camera name -> the env's sensor camera it comes from, for the
            cameras whose names differ ({}: every camera keeps the env's name).
        next_features: the frames carry ``next.reward``, ``next.done``, ``next.success``.
        names_version: ``NAMES_VERSION`` of the column names.
        full_episodes: every episode was recorded to the time limit, the task's terminations
            ignored (``collect_demos.py --full-episodes``); False: episodes end at termination.

    Raises:
        ValueError: a negative or non-finite ``action_noise_std``, noise columns that are not
            action names, an unknown ``state_source`` or one that disagrees with
            ``robot_units``, ``camera_sources`` naming a camera the dataset lacks.
    """

    env_id: str
    obs_mode: str
    control_mode: str
    reward_mode: str
    fps: int
    robot_type: str
    state_names: tuple
    action_names: tuple
    cameras: dict = field(default_factory=dict)
    task: str = ""
    max_episode_steps: Optional[int] = None
    env_kwargs: dict = field(default_factory=dict)
    action_noise_std: float = 0.0
    action_noise_columns: tuple = ()
    state_source: str = "env"
    robot_units: Optional[dict] = None
    camera_sources: dict = field(default_factory=dict)
    next_features: bool = True
    names_version: int = NAMES_VERSION
    full_episodes: bool = False

    def __post_init__(self) -> None:
        if self.state_source not in STATE_SOURCES:
            raise ValueError(f"state_source must be one of {STATE_SOURCES}, got {self.state_source!r}")
        if (self.state_source == "robot") != (self.robot_units is not None):
            raise ValueError("a dataset in a real robot's schema (state_source='robot') records its robot_units, "
                             "and only such a dataset")
        unknown_cams = sorted(set(self.camera_sources) - set(self.cameras))
        if unknown_cams:
            raise ValueError(f"camera_sources names cameras {unknown_cams} the dataset does not have "
                             f"({sorted(self.cameras)})")
        object.__setattr__(self, "action_noise_std", check_noise_std(self.action_noise_std))
        object.__setattr__(self, "action_noise_columns", tuple(self.action_noise_columns))
        unknown = [c for c in self.action_noise_columns if c not in self.action_names]
        if unknown:
            raise ValueError(f"action_noise_columns {unknown} are not action names {list(self.action_names)}")

    @property
    def state_dim(self) -> int:
        """Width of ``observation.state`` (``len(state_names)``)."""
        return len(self.state_names)

    @property
    def action_dim(self) -> int:
        """Width of ``action`` (``len(action_names)``)."""
        return len(self.action_names)

    @property
    def env_kwargs_objects(self) -> dict:
        """``env_kwargs`` decoded: the keywords to pass to the env (camera poses as ``Pose``,
        randomization entries as ``Randomize``, ...). Raises ValueError for an undecodable one."""
        from simulo_envs.envs.env_settings import decode_env_kwargs

        return decode_env_kwargs(self.env_kwargs)

    def env_camera(self, camera: str) -> str:
        """The env's sensor camera that rendered the dataset camera ``camera``."""
        return self.camera_sources.get(camera, camera)

    def to_json(self) -> dict:
        """A JSON-ready dict (tuples as lists)."""
        out = asdict(self)
        out["state_names"], out["action_names"] = list(self.state_names), list(self.action_names)
        out["cameras"] = {k: list(v) for k, v in self.cameras.items()}
        out["action_noise_columns"] = list(self.action_noise_columns)
        return out

    @classmethod
    def from_json(cls, data: dict) -> "DatasetSchema":
        """Inverse of ``to_json``; the fields of ``LATER_FIELDS`` may be missing (a dataset written
        before them) and take their defaults; version-1 names are renamed (``upgrade_names``).
        Raises KeyError naming a missing field, ValueError for a bad field (see the class)."""
        missing = [f for f in cls.__dataclass_fields__ if f not in data and f not in LATER_FIELDS]
        if missing:
            raise KeyError(f"dataset schema is missing {missing}")
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        values["state_names"], values["action_names"] = tuple(data["state_names"]), tuple(data["action_names"])
        values["cameras"] = {k: tuple(v) for k, v in data["cameras"].items()}
        if "names_version" not in data:
            values.update(upgrade_names(values["state_names"], values["action_names"], values["control_mode"]))
        return cls(**values)

    def differences(self, other: "DatasetSchema") -> list[str]:
        """The fields in which ``other`` differs from this schema, as ``"field: a != b"`` lines
        (empty when episodes of both can share one dataset; ``task`` and ``env_kwargs``
        details other than the modes may differ)."""
        out = []
        for name in ("env_id", "obs_mode", "control_mode", "reward_mode", "fps", "robot_type", "state_names",
                     "action_names", "cameras", "action_noise_std", "action_noise_columns", "state_source",
                     "robot_units", "camera_sources", "next_features", "full_episodes"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name}: {_short(mine)} != {_short(theirs)}")
        return out


def upgrade_names(state_names: tuple, action_names: tuple, control_mode: str) -> dict:
    """Version-1 column names renamed to this version's (``NAMES_VERSION``): radians named
    ``<joint>.pos`` / ``.vel`` become ``.qpos`` / ``.qvel``. A version-1 dataset in a real robot's
    schema (its state and actions both the robot's ``.pos`` columns, in the robot's control
    mode ``*_lerobot``) keeps its names and reads as ``state_source="robot"`` (its units then come
    from the env's agent). Returns the fields to update."""
    real_mode = control_mode.endswith("_lerobot")
    if real_mode and tuple(state_names) == tuple(action_names):
        return {"state_source": "robot", "robot_units": {}}
    rename = lambda n, old, new: n[: -len(old)] + new if n.endswith(old) else n  # noqa: E731
    state = tuple(rename(rename(n, ".pos", ".qpos"), ".vel", ".qvel") for n in state_names)
    actions = tuple(action_names) if real_mode else tuple(rename(n, ".pos", ".qpos") for n in action_names)
    return {"state_names": state, "action_names": actions}


def schema_from_env(env, env_id: str, env_kwargs: Optional[dict] = None, task: Optional[str] = None) -> DatasetSchema:
    """The schema of episodes recorded from ``env`` (an in-process ``BaseEnv``, wrapped or not).

    Args:
        env_id: the id ``env`` was made from.
        env_kwargs: the keywords it was made with, every one recorded
            (``simulo_envs.envs.env_settings``).
        task: the instruction; None derives it from the task class (module docstring).

    Raises:
        TypeError: an env keyword that cannot be recorded (its path and type named): an env
            that could not be rebuilt from the dataset is not recorded.
    """
    from simulo_envs.envs.env_settings import encode_env_kwargs

    base = env.unwrapped
    raw = base.get_obs(unflattened=True)
    agent = base.agent
    names = _state_names(raw, agent)
    cameras = {cam: tuple(int(s) for s in tex["rgb"].shape[1:]) for cam, tex in _sensor_data(raw).items() if "rgb" in tex}
    kwargs = encode_env_kwargs(_with_frequencies(env_kwargs or {}, base.sim_config))
    kwargs.update(obs_mode=base.obs_mode, control_mode=base.control_mode, reward_mode=base.reward_mode)
    return DatasetSchema(
        env_id=env_id, obs_mode=base.obs_mode, control_mode=base.control_mode, reward_mode=base.reward_mode,
        fps=int(base.control_freq), robot_type=str(getattr(agent, "uid", type(agent).__name__.lower())),
        state_names=tuple(names), action_names=tuple(action_names(agent, base.single_action_space.shape[0])),
        cameras=cameras, task=task or task_instruction(type(base), env_id),
        max_episode_steps=base.max_episode_steps, env_kwargs=kwargs)


def _with_frequencies(env_kwargs: dict, sim_config) -> dict:
    """``env_kwargs`` with the env's physics and control frequencies written into its
    ``sim_config`` keyword (a dict, or a ``SimConfig`` that holds them already): the dataset
    records the frequencies its episodes ran at, not only those the user changed, so a replay
    or an evaluation rebuilds them even where a task's defaults have changed since."""
    given = env_kwargs.get("sim_config")
    if given is not None and not isinstance(given, dict):
        return dict(env_kwargs)  # a whole SimConfig: recorded as it is
    frequencies = {"sim_freq": int(sim_config.sim_freq), "control_freq": int(sim_config.control_freq)}
    return {**env_kwargs, "sim_config": {**(given or {}), **frequencies}}


def _sensor_data(raw) -> dict:
    return raw.get("sensor_data", {}) if isinstance(raw, dict) else {}


def _state_names(raw: dict, agent) -> list[str]:
    joints = list(getattr(getattr(agent, "robot", None), "joint_names", []) or [])
    names: list[str] = []
    for part in ("agent", "extra"):
        for path, value in _leaves(raw.get(part, {}), ()):
            width = int(np.prod(value.shape[1:])) if value.ndim > 1 else 1
            leaf = path[-1]
            if part == "agent" and leaf in ("qpos", "qvel") and width == len(joints):
                names += [f"{j}.{leaf}" for j in joints]
            elif width == 7 and leaf.endswith("pose"):
                names += [f"{leaf}.{c}" for c in POSE_PARTS]
            elif width == 3:
                names += [f"{leaf}.{c}" for c in XYZ]
            elif width == 1:
                names.append(leaf)
            else:
                names += [f"{leaf}.{i}" for i in range(width)]
    return names


def action_names(agent, action_dim: int) -> list[str]:
    """Per-dimension names of the agent's current action (see the module docstring)."""
    real = getattr(agent, "lerobot", None)
    if real is not None and getattr(agent, "control_mode", None) == real.control_mode and len(real.names) == action_dim:
        return list(real.names)
    controller = getattr(agent, "controller", None)
    parts = getattr(controller, "controllers", None)
    if not isinstance(parts, dict):
        return [f"action.{i}" for i in range(action_dim)]
    names: list[str] = []
    for part, ctrl in parts.items():
        cfg = getattr(ctrl, "config", None)
        mode = getattr(cfg, "mode", None)
        if mode in EE_ACTION_PARTS:
            names += [f"{part}.{c}" for c in EE_ACTION_PARTS[mode]]
        elif getattr(cfg, "mimic", False):
            names.append(part)
        elif cfg is not None and hasattr(cfg, "joint_names"):
            suffix = "delta_pos" if getattr(cfg, "use_delta", False) else "qpos"
            names += [f"{j}.{suffix}" for j in cfg.joint_names]
        else:
            names += [f"{part}.{i}" for i in range(int(getattr(ctrl, "action_dim", 0)))]
    return names if len(names) == action_dim else [f"action.{i}" for i in range(action_dim)]


def _leaves(node, path: tuple):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, path + (key,))
    else:
        yield path, node



def _short(value) -> str:
    text = repr(list(value) if isinstance(value, tuple) else value)
    return text if len(text) <= 80 else text[:77] + "..."
