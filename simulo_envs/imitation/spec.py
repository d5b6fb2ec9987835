"""``PolicySpec``: what a policy reads and writes, and the env observation -> policy input mapping.

One mapping serves demonstrations and rollouts, so a policy sees the same numbers in both. Its
starting point is the *flat state*: the observation's ``agent`` then ``extra`` leaves flattened in
order (``flatten_obs``), which is the ``state`` observation itself and the ``observation.state``
column of a dataset recorded in any observation mode (``simulo_envs.datasets``).

- ``state`` policies read the whole flat state, float32 (N, D).
- ``rgb`` policies read the RGB images of one or more cameras (``cameras``: an SO arm's dataset
  records a front and a wrist camera, as LeRobot's SO setups do), all at one size, stacked on the
  channel axis in the spec's camera order: uint8 (N, 3 * K, H, W) for K cameras (channels first,
  as torch convolutions take it), plus the state of the env's ``obs_mode="rgb"`` observation: the agent's
  qpos and qvel and the extras the task keeps in image modes (``BaseEnv.image_obs_extra``: the TCP
  pose, and a goal the cameras do not show; 9 + 9 + 7 for the Panda lifting a cube). Object poses
  are privileged state, which image modes leave out as ManiSkill 3 does: the policy finds the
  object in the image. A dataset recorded with ``"rgb+state"`` / ``"rgb+state_dict"`` (or before
  image modes dropped the privileged state) holds the whole flat state; the policy then reads its
  columns of that observation (``state_columns``) and training may regress the others
  (``other_columns``); a dataset recorded with ``"rgb"`` holds exactly what the policy reads.

A policy trained on a dataset in a real robot's schema (``state_source="robot"``: an SO arm's
LeRobot dataset) reads what the real arm gives instead: its joint positions in the units its
LeRobot driver reports (degrees, the gripper 0..100: ``robot_units``, ``value = scale * (qpos -
offset)``, computed from the observation's ``agent/qpos``), and for ``rgb`` the camera; it acts
in the arm's action space (``pd_joint_pos_lerobot``: joint targets in the same units). In the sim
it runs through the same map, so the numbers it sees are those the real arm would record.

Every policy also carries the env keywords its data was recorded with (``env_kwargs``, encoded by
``simulo_envs.envs.env_settings``): cameras (poses included), randomization, physics and control
frequencies. ``env_kwargs(spec)`` rebuilds exactly that env for evaluation, with the observation
mode the policy reads.

A ``PolicySpec`` is saved in every checkpoint; ``spec_mismatch`` compares two of them (a dataset's
and an env's, a checkpoint's and a dataset's) before any training or rollout.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional, Sequence, Union

import torch

from simulo_envs.envs.observations import flatten_obs

__all__ = ["PolicySpec", "OBS_MODES", "policy_inputs", "env_kwargs", "spec_mismatch", "spec_for_env",
           "flat_state_layout", "image_state_keys"]

OBS_MODES = ("state", "rgb")
"""The policy input kinds ``scripts/train_il.py --obs`` takes."""


@dataclass(frozen=True)
class PolicySpec:
    """The interface of a trained policy; saved in its checkpoint.

    Fields:
        env_id: the task the demonstrations come from (``"FrankaPush-v1"``).
        obs: ``"state"`` or ``"rgb"`` (see the module docstring).
        control_mode: the env's control mode of the actions (``"pd_ee_delta_pos"`` for our experts).
        state_dim: width of the low-dimensional input (the flat state obs, or for ``rgb`` the state
            of the env's ``"rgb"`` observation).
        action_dim: width of an action.
        camera: the first sensor camera an ``rgb`` policy reads (None for ``state``).
        image_size: ``(height, width)`` [px] of its cameras' images, one size for all (None for
            ``state``).
        control_freq: env steps per second [Hz] (actions are per env step).
        state_columns: the columns of the demonstrations' flat state the policy reads, in order
            (None: all of them).
        state_names: the names of the demonstrations' flat state columns (``simulo_envs.datasets``
            naming), all of them, so a dataset or env whose state means something else is recognised
            (for ``state_source="robot"``: the robot's recorded names, ``shoulder_pan.pos`` ...).
        state_source: ``"env"`` (the flat state) or ``"robot"`` (the real robot's joint readings,
            ``robot_units``; module docstring).
        robot_units: for ``state_source="robot"``: ``{"names", "joints", "scale", "offset",
            "units", "qpos_columns"}`` (``qpos_columns``: each joint's column in the observation's
            ``agent/qpos``); None otherwise.
        env_kwargs: the encoded env keywords of the demonstrations' env (None: the task's
            defaults, a checkpoint written before they were recorded).
        randomization: the randomization preset the policy is evaluated under (``"default"``,
            ``"none"``, ``"visual"``: ``BaseEnv(randomization=...)``), over the recorded env
            keywords; None: the recorded ones (or the task's own table).
        cameras: every sensor camera an ``rgb`` policy reads, in the order their images are
            stacked (``cameras[0] == camera``; None in the constructor: ``(camera,)``, as in a
            checkpoint written before policies read several cameras); None for ``state``.
    """

    env_id: str
    obs: str
    control_mode: str
    state_dim: int
    action_dim: int
    camera: Optional[str] = None
    image_size: Optional[tuple[int, int]] = None
    control_freq: Optional[float] = None
    state_columns: Optional[tuple[int, ...]] = None
    state_names: Optional[tuple[str, ...]] = None
    state_source: str = "env"
    robot_units: Optional[dict] = None
    env_kwargs: Optional[dict] = None
    randomization: Optional[str] = None
    cameras: Optional[tuple[str, ...]] = None

    def __post_init__(self):
        if self.obs not in OBS_MODES:
            raise ValueError(f"obs must be one of {OBS_MODES}, got {self.obs!r}")
        if self.state_source not in ("env", "robot"):
            raise ValueError(f"state_source must be 'env' or 'robot', got {self.state_source!r}")
        if (self.state_source == "robot") != (self.robot_units is not None):
            raise ValueError("a policy reading the robot's recorded joints (state_source='robot') names its "
                             "robot_units, and only such a policy")
        if (self.obs == "rgb") != (self.camera is not None and self.image_size is not None):
            raise ValueError("an rgb policy names its camera and image size; a state policy names neither")
        if self.obs == "rgb":
            cameras = tuple(self.cameras) if self.cameras is not None else (self.camera,)
            if not cameras or cameras[0] != self.camera or len(set(cameras)) != len(cameras):
                raise ValueError(f"cameras {cameras} must be distinct and begin with camera {self.camera!r}")
            object.__setattr__(self, "cameras", cameras)
        elif self.cameras is not None:
            raise ValueError("a state policy reads no cameras")
        for name in ("image_size", "state_columns", "state_names"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))
        if self.state_columns is not None and len(self.state_columns) != self.state_dim:
            raise ValueError(f"state_dim {self.state_dim} != {len(self.state_columns)} state columns")

    @property
    def read_names(self) -> Optional[tuple[str, ...]]:
        """The names of the state columns the policy reads, in order (None without names)."""
        if self.state_names is None:
            return None
        columns = range(len(self.state_names)) if self.state_columns is None else self.state_columns
        return tuple(self.state_names[c] for c in columns)

    @property
    def other_columns(self) -> tuple[int, ...]:
        """The flat state's columns the policy does not read (an rgb policy's object poses, goal...),
        in order; () for a state policy. Training may use them as auxiliary targets."""
        if self.state_columns is None or self.state_names is None:
            return ()
        read = set(self.state_columns)
        return tuple(c for c in range(len(self.state_names)) if c not in read)

    def to_dict(self) -> dict:
        """Plain data (for a checkpoint)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "PolicySpec":
        """Inverse of ``to_dict``. A spec saved before ``state_source`` existed has version-1
        state names (radians named ``.pos``): renamed as datasets are (``upgrade_names``)."""
        data = dict(data)
        if "state_source" not in data and data.get("state_names"):
            from simulo_envs.datasets.schema import upgrade_names

            upgraded = upgrade_names(tuple(data["state_names"]), (), data.get("control_mode", ""))
            data["state_names"] = upgraded.get("state_names", data["state_names"])
        return cls(**data)

    def describe(self) -> str:
        """``"FrankaPush-v1, state (41), actions (4) in pd_ee_delta_pos"``."""
        state = "robot joints" if self.state_source == "robot" else "state"
        what = f"{state} ({self.state_dim})" if self.obs == "state" else \
            f"rgb {'+'.join(self.cameras)} {self.image_size[0]}x{self.image_size[1]} + {state} ({self.state_dim})"
        return f"{self.env_id}, {what}, actions ({self.action_dim}) in {self.control_mode}"


def env_kwargs(spec: PolicySpec) -> dict:
    """Keyword arguments of the env a policy of ``spec`` runs in: the recorded env keywords
    (``spec.env_kwargs``, decoded: camera poses, randomization, frequencies, ...), then the
    ``control_mode``, the observation mode the policy reads (``rgb``; ``state``, or
    ``state_dict`` for a robot-state policy, which reads ``agent/qpos``), its cameras' size and
    the ``randomization`` preset (when the spec names one).

    Raises:
        ValueError: recorded keywords that cannot be decoded (an unknown recorded type).
    """
    from simulo_envs.envs.env_settings import decode_env_kwargs

    kwargs = decode_env_kwargs(spec.env_kwargs or {})
    robot = spec.state_source == "robot"
    kwargs.update(control_mode=spec.control_mode,
                  obs_mode="rgb" if spec.obs == "rgb" else ("state_dict" if robot else "state"))
    if spec.randomization is not None:
        kwargs["randomization"] = spec.randomization
    if spec.obs == "rgb":
        height, width = spec.image_size
        sensors = dict(kwargs.get("sensor_configs") or {})
        for camera in spec.cameras:
            sensors[camera] = {**dict(sensors.get(camera) or {}), "width": width, "height": height}
        kwargs["sensor_configs"] = sensors
    elif "sensor_configs" in kwargs:
        kwargs.pop("sensor_configs")  # no camera is rendered in a state obs mode
    return kwargs


def robot_state(qpos: torch.Tensor, units: dict) -> torch.Tensor:
    """float32 (N, J): the robot's joint readings in its driver's units from the observation's
    ``agent/qpos`` (N, dof) [rad, m]: ``scale * (qpos[:, qpos_columns] - offset)`` (``units``:
    ``PolicySpec.robot_units``; the map is the agent's ``lerobot_from_qpos``)."""
    columns = list(units["qpos_columns"])
    scale = torch.tensor(units["scale"], dtype=torch.float32, device=qpos.device)
    offset = torch.tensor(units["offset"], dtype=torch.float32, device=qpos.device)
    return (qpos[:, columns].to(torch.float32) - offset) * scale


def policy_inputs(obs, spec: PolicySpec) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    """``(state, image)`` a policy of ``spec`` reads from a batched env observation.

    Args:
        obs: the env's observation: float32 (N, D) in ``state`` mode; for an ``rgb`` policy the
            observation dict of ``obs_mode="rgb"`` (its state is what the policy reads), or of
            ``"rgb+state"`` / ``"rgb+state_dict"`` (the policy's ``state_columns`` of it).

    Returns:
        ``state`` float32 (N, state_dim); ``image`` uint8 (N, 3 * K, H, W): the K cameras of
        ``spec.cameras`` stacked on the channel axis in that order (None for ``state``).

    Raises:
        ValueError: the observation does not have the spec's layout (another obs mode, width or
            image size); the message says what differs.
    """
    if spec.state_source == "robot":
        if not (isinstance(obs, dict) and "qpos" in obs.get("agent", {})):
            raise ValueError(f"a policy of the robot's recorded joints reads the observation dict's agent/qpos; got "
                             f"{type(obs).__name__} (is the env in obs_mode='state_dict' or 'rgb'?)")
        state = robot_state(obs["agent"]["qpos"], spec.robot_units)
    else:
        state = _flat_state(obs, spec)
    if spec.obs == "state":
        return state, None
    cameras, images = obs["sensor_data"], []
    for camera in spec.cameras:
        if camera not in cameras or "rgb" not in cameras[camera]:
            raise ValueError(f"the observation has no rgb image of camera {camera!r} (cameras: {sorted(cameras)})")
        image = cameras[camera]["rgb"]
        if tuple(image.shape[1:3]) != tuple(spec.image_size):
            raise ValueError(f"camera {camera!r} gives {image.shape[1]}x{image.shape[2]} images, the policy reads "
                             f"{spec.image_size[0]}x{spec.image_size[1]}")
        images.append(image[..., :3].permute(0, 3, 1, 2))
    return state, torch.cat(images, dim=1).contiguous()


def _flat_state(obs, spec: PolicySpec) -> torch.Tensor:
    """float32 (N, state_dim): the columns of the flat state a policy of the env's state reads."""
    if spec.obs == "state" and not isinstance(obs, torch.Tensor):
        raise ValueError(f"a state policy reads the flat state observation (N, {spec.state_dim}); got "
                         f"{type(obs).__name__} (is the env in obs_mode='state'?)")
    if spec.obs == "rgb" and not (isinstance(obs, dict) and "sensor_data" in obs):
        raise ValueError(f"an rgb policy reads the observation dict of obs_mode='rgb'; got {type(obs).__name__}")
    if spec.obs == "state":
        flat, widths = obs, (len(spec.state_names) if spec.state_names else spec.state_dim,)
    else:
        flat = obs["state"] if "state" in obs else flatten_obs({"agent": obs["agent"], "extra": obs["extra"]})
        widths = (spec.state_dim, len(spec.state_names) if spec.state_names else spec.state_dim)
    if flat.ndim != 2 or flat.shape[1] not in widths:
        raise ValueError(f"the env's state observation has {flat.shape[-1]} values, the policy was trained on "
                         f"{' or '.join(str(w) for w in sorted(set(widths)))} ({spec.env_id})")
    whole = spec.obs == "rgb" and flat.shape[1] == spec.state_dim  # the "rgb" observation: all of it
    state = flat if spec.state_columns is None or whole else flat[:, list(spec.state_columns)]
    return state.to(torch.float32)


def flat_state_layout(raw: dict) -> dict[str, tuple[int, int]]:
    """``{"agent/qpos": (start, stop), ...}``: the columns of each leaf of an observation dict's
    ``agent`` and ``extra`` parts in the flat state (``flatten_obs``'s order)."""
    layout, start = {}, 0

    def walk(node, path):
        nonlocal start
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}/{key}" if path else key)
            return
        width = int(node.reshape(node.shape[0], -1).shape[1]) if node.ndim > 1 else 1
        layout[path] = (start, start + width)
        start += width

    walk({"agent": raw["agent"], "extra": raw["extra"]}, "")
    return layout


def image_state_keys(env, raw: dict) -> tuple[str, ...]:
    """The leaves of an observation dict with the whole state (``raw``: ``agent`` and ``extra``)
    that ``env``'s image obs modes keep, as ``flat_state_layout`` keys (``"agent/qpos"``,
    ``"extra/tcp_pose"``), in flat-state order: every ``agent`` leaf and the extras of
    ``image_obs_extra`` (``simulo_envs/envs/observations.py``)."""
    keep = set(env.unwrapped.image_obs_extra)
    return tuple(key for key in flat_state_layout(raw)
                 if key.startswith("agent/") or key.partition("/")[2].split("/")[0] in keep)


def spec_mismatch(expected: PolicySpec, actual: PolicySpec, what: str = "dataset") -> Optional[str]:
    """A sentence naming the first field where ``actual`` differs from ``expected`` (env,
    observation kind, control mode, action width, state columns and their names, camera, image
    size), or None when they agree. ``what`` names ``actual`` in the sentence."""
    for field, label in (("env_id", "env"), ("obs", "observation kind"), ("control_mode", "control mode"),
                         ("action_dim", "action dimension"), ("state_dim", "state width"), ("cameras", "cameras"),
                         ("image_size", "image size")):
        want, got = getattr(expected, field), getattr(actual, field)
        if want != got:
            return f"the {what} has {label} {got!r}, expected {want!r}"
    if expected.state_names and actual.state_names and expected.state_names != actual.state_names:
        differ = [f"{a!r} vs {b!r}" for a, b in zip(actual.state_names, expected.state_names) if a != b]
        detail = f"first difference {differ[0]}" if differ else \
            f"{len(actual.state_names)} columns vs {len(expected.state_names)}"
        return f"the {what}'s state columns differ from the expected ones ({detail})"
    if expected.state_columns != actual.state_columns:
        return f"the {what} reads other state columns than expected"
    if expected.state_source != actual.state_source or expected.robot_units != actual.robot_units:
        return (f"the {what}'s state is {actual.state_source!r} ({actual.robot_units}), expected "
                f"{expected.state_source!r} ({expected.robot_units})")
    return None


def spec_for_env(env_id: str, obs: str, control_mode: str, camera: Union[str, Sequence[str], None] = None,
                 image_size: Optional[tuple[int, int]] = None, recorded_kwargs: Optional[dict] = None,
                 robot_units: Optional[dict] = None) -> PolicySpec:
    """The spec of a policy for ``env_id`` in ``control_mode``: widths and state names read from
    one env built for the purpose (rendering one frame for ``rgb``).

    Args:
        camera: for ``rgb``, the sensor camera the policy reads, or a sequence of them (their
            images stacked in that order); default the task's first sensor camera.
        image_size: ``(height, width)`` [px] every camera is rendered at; default the cameras'
            own size, which must then be one size for all.
        recorded_kwargs: the encoded env keywords the demonstrations were recorded with (a
            dataset's ``env_kwargs``): the env is built with them, and the spec keeps them.
        robot_units: a dataset's ``robot_units`` for a policy of the robot's recorded joints
            (``state_source="robot"``); ``{}``: the env's agent's own map (a dataset written
            before the map was recorded).

    Raises:
        KeyError: ``env_id`` is not registered. ValueError: ``obs`` unknown; the task has no such
            control mode or camera, a camera named twice, cameras of different sizes; recorded
            keywords the env refuses; ``robot_units`` for an
            agent without a real-robot map (``agent.lerobot``) or whose map differs from it.
    """
    from simulo_envs.datasets.schema import schema_from_env
    from simulo_envs.envs.env_settings import decode_env_kwargs
    from simulo_envs.envs.registration import REGISTERED

    if obs not in OBS_MODES:
        raise ValueError(f"obs must be one of {OBS_MODES}, got {obs!r}")
    if env_id not in REGISTERED:
        raise KeyError(f"unknown env id {env_id!r}; registered: {', '.join(sorted(REGISTERED))}")
    robot = robot_units is not None
    wanted = (camera,) if isinstance(camera, str) else (tuple(camera) if camera is not None else None)
    if wanted is not None and (not wanted or len(set(wanted)) != len(wanted)):
        raise ValueError(f"cameras must be distinct names, at least one; got {list(wanted)}")
    # An rgb policy's spec: the whole state's names (a dataset may hold them: "rgb+state") and the
    # columns of it that the "rgb" observation keeps.
    kwargs = decode_env_kwargs(recorded_kwargs or {})
    kwargs.update(control_mode=control_mode,
                  obs_mode="rgb+state_dict" if obs == "rgb" else ("state_dict" if robot else "state"))
    if obs != "rgb":
        kwargs.pop("sensor_configs", None)
    elif image_size is not None:
        size = {"height": int(image_size[0]), "width": int(image_size[1])}
        sensors = dict(kwargs.get("sensor_configs") or {})
        if wanted is not None:
            for name in wanted:
                sensors[name] = {**dict(sensors.get(name) or {}), **size}
        else:
            sensors.update(size)
        kwargs["sensor_configs"] = sensors
    env = REGISTERED[env_id](num_envs=1, **kwargs)
    try:
        env.reset(seed=0)
        raw = env.get_obs(unflattened=True)
        names = tuple(schema_from_env(env, env_id).state_names)
        action_dim = int(env.single_action_space.shape[0])
        freq = float(env.control_freq)
        units = None
        if robot:
            units = _robot_units(env, env_id, robot_units)
            names = tuple(units["names"])
        common = dict(control_freq=freq, env_kwargs=recorded_kwargs, state_source="robot" if robot else "env",
                      robot_units=units)
        if obs == "state":
            return PolicySpec(env_id, obs, control_mode, len(names), action_dim, state_names=names, **common)
        cameras = raw["sensor_data"]
        names_read = wanted if wanted is not None else (next(iter(cameras)),)
        sizes = {}
        for name in names_read:
            if name not in cameras or "rgb" not in cameras[name]:
                raise ValueError(f"{env_id} has no rgb sensor camera {name!r} (cameras: {sorted(cameras)})")
            sizes[name] = tuple(int(v) for v in cameras[name]["rgb"].shape[1:3])
        if len(set(sizes.values())) > 1:
            raise ValueError(f"a policy reads its cameras at one size; {env_id}'s are "
                             + ", ".join(f"{n} {h}x{w}" for n, (h, w) in sizes.items()) + ": give one image_size")
        name, size = names_read[0], sizes[names_read[0]]
        common["cameras"] = names_read
        if robot:
            return PolicySpec(env_id, obs, control_mode, len(names), action_dim, name, size, state_names=names,
                              **common)
        layout = flat_state_layout(raw)
        columns = tuple(c for key in image_state_keys(env, raw) for c in range(*layout[key]))
        return PolicySpec(env_id, obs, control_mode, len(columns), action_dim, name, size, state_columns=columns,
                          state_names=names, **common)
    finally:
        env.close()


def _robot_units(env, env_id: str, recorded: dict) -> dict:
    """The agent's real-robot map with its ``qpos_columns``, checked against ``recorded``."""
    from simulo_envs.datasets.robot_units import units_of

    agent = env.unwrapped.agent
    if getattr(agent, "lerobot", None) is None:
        raise ValueError(f"{env_id}'s robot has no real-robot map (agent.lerobot): a dataset of recorded joint "
                         "readings cannot be read by a policy in it")
    mine = units_of(agent.lerobot)
    if recorded and {k: recorded.get(k) for k in mine} != mine:
        differ = [k for k in mine if recorded.get(k) != mine[k]]
        raise ValueError(f"the dataset's robot units differ from {env_id}'s agent in {differ}: recorded "
                         f"{ {k: recorded.get(k) for k in differ} }, the agent's { {k: mine[k] for k in differ} }")
    joints = list(agent.robot.joint_names)
    return {**mine, "qpos_columns": [joints.index(j) for j in mine["joints"]]}
