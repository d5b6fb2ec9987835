"""What a LeRobot environment is asked for, checked before anything is built.

``check_request`` turns ``make_env``'s arguments into a ``LeRobotRequest`` or raises one
``ValueError`` (``TypeError`` for a wrong type) that names the bad argument and what would be
accepted, without loading a scene, a robot or a renderer:

=================  ==========================================================================
argument           refused when
=================  ==========================================================================
``task``           not a registered task id (the message lists them and the closest match)
``robot``          an agent the task does not support, or not one agent (a robot uid)
``cameras``        a camera name the task's sensor cameras do not have (LeRobot's
                   comma-separated string ``"base_camera"`` or, renamed,
                   ``"front=base_camera"``; a list; or ``{"front": "base_camera"}``), or
                   cameras with ``obs_type="agent_pos"``
``fps``            a control (recording) rate the physics rate does not divide (``sim_freq``
                   / ``fps`` steps of physics per action: ``SimConfig``)
``obs_type``       not ``"pixels_agent_pos"`` or ``"agent_pos"``
``control_mode``   not one of the robot's control modes
``n_envs``         not an int >= 1
=================  ==========================================================================

The task's sensor cameras are read from its class (``_default_sensor_configs``, a property of
the task's config) on an instance whose ``__init__`` has not run, and the robot's from its agent
class (``sensor_configs``), so nothing is built; a task
whose cameras depend on the built scene is checked right after construction instead
(``check_camera_names``), with the same message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from simulo_envs.envs.env_keywords import did_you_mean
from simulo_envs.envs.env_options import check_robot_uids
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.envs.sensors import apply_overrides

OBS_TYPES = ("pixels_agent_pos", "agent_pos")
"""``obs_type`` values, LeRobot's names (``lerobot/envs/configs.py``: ``AlohaEnv``, ``PushtEnv``):
camera images and the robot state, or the robot state alone."""

CamerasArg = Union[None, str, Sequence[str], Mapping[str, str]]


@dataclass(frozen=True)
class LeRobotRequest:
    """A checked ``make_env`` request.

    Attributes:
        task: the registered task id.
        task_cls: its class.
        n_envs: number of envs, all stepped in one batched env.
        robot: the agent uid (the task's default when not given).
        cameras: LeRobot camera name -> our sensor camera name, in order; empty for
            ``obs_type="agent_pos"``. None: every sensor camera under its own name, known once
            the env is built.
        fps: the control rate [Hz] (None: the task's).
        obs_type: one of ``OBS_TYPES``.
        control_mode: None: the robot's LeRobot mode (joint targets in the follower's units)
            when the robot describes its real counterpart, else the task's default.
    """

    task: str
    task_cls: type
    n_envs: int
    robot: Optional[str]
    cameras: Optional[tuple[tuple[str, str], ...]]
    fps: Optional[int]
    obs_type: str
    control_mode: Optional[str]


def check_request(task: str, n_envs: int = 1, robot: Optional[str] = None, cameras: CamerasArg = None,
                  fps: Optional[int] = None, obs_type: str = "pixels_agent_pos",
                  control_mode: Optional[str] = None, sim_config: Optional[Mapping] = None) -> LeRobotRequest:
    """Check ``make_env``'s arguments (module docstring) and return them resolved.

    Raises:
        ValueError: an unknown task, unsupported robot, unknown camera, control mode or
            ``obs_type``, an ``fps`` that does not divide the physics rate, ``n_envs < 1``.
        TypeError: an argument of the wrong type.
    """
    cls = _task_class(task)
    if isinstance(n_envs, bool) or not isinstance(n_envs, (int, np.integer)) or n_envs < 1:
        raise ValueError(f"n_envs must be an int >= 1, got {n_envs!r}")
    if obs_type not in OBS_TYPES:
        raise ValueError(f"obs_type must be one of {list(OBS_TYPES)}, got {obs_type!r}")
    uid = _robot_uid(cls, task, robot)
    _check_control_mode(uid, control_mode)
    _check_fps(cls, task, fps, sim_config)
    pairs = _camera_pairs(cameras)
    if obs_type == "agent_pos" and pairs:
        raise ValueError(f"cameras={cameras!r} with obs_type='agent_pos': that observation has no images; "
                         "use obs_type='pixels_agent_pos'")
    if obs_type == "agent_pos":
        pairs = ()
    elif pairs is not None:
        known = task_camera_names(cls, uid)
        if known is not None:
            check_camera_names(task, pairs, known)
    return LeRobotRequest(task=task, task_cls=cls, n_envs=int(n_envs), robot=uid, cameras=pairs,
                          fps=None if fps is None else int(fps), obs_type=obs_type, control_mode=control_mode)


def _task_class(task) -> type:
    if not isinstance(task, str):
        raise TypeError(f"task must be a registered task id (a str), got {type(task).__name__}")
    if task in REGISTERED:
        return REGISTERED[task]
    close = did_you_mean(task, REGISTERED)
    hint = f" (did you mean {close!r}?)" if close else ""
    raise ValueError(f"unknown task {task!r}{hint}; registered tasks: {', '.join(sorted(REGISTERED))}")


def _robot_uid(cls: type, task: str, robot) -> str:
    if robot is not None and not isinstance(robot, str):
        raise TypeError(f"robot must be one robot uid (a str), got {robot!r}")
    try:
        uid = check_robot_uids(cls, robot)
    except ValueError as error:
        raise ValueError(f"robot={robot!r} for {task}: {error}") from None
    if not isinstance(uid, str):
        raise ValueError(f"{task} runs {uid!r}: a LeRobot environment drives one robot")
    return uid


def _check_control_mode(uid: str, control_mode) -> None:
    if control_mode is None:
        return
    from simulo_envs.agents import REGISTERED_AGENTS

    modes = list(REGISTERED_AGENTS[uid].controller_configs)
    if control_mode not in modes:
        raise ValueError(f"control_mode {control_mode!r}: the {uid} robot has {modes}")


def _check_fps(cls: type, task: str, fps, sim_config) -> None:
    """Refuse an ``fps`` the physics rate does not divide (``SimConfig`` says why)."""
    if fps is None:
        return
    if isinstance(fps, bool) or not isinstance(fps, (int, np.integer)) or fps < 1:
        raise ValueError(f"fps must be an int >= 1 [Hz], got {fps!r}")
    sim = cls.default_sim_config.merged(dict(sim_config or {}))  # a bad sim_config raises its own error
    if sim.sim_freq % int(fps):
        rates = [f for f in range(5, 61) if sim.sim_freq % f == 0]
        raise ValueError(f"fps={fps} for {task}: the physics runs at {sim.sim_freq} Hz and takes a whole number "
                         f"of steps per action, so fps must divide {sim.sim_freq} (e.g. {rates}); or set "
                         f"sim_config={{'sim_freq': ...}} to a multiple of {fps}")


def _camera_pairs(cameras: CamerasArg) -> Optional[tuple[tuple[str, str], ...]]:
    """``(lerobot_name, our_name)`` pairs, or None for every camera. A string is LeRobot's
    comma-separated list (``lerobot/envs/utils.py: parse_camera_names``)."""
    if cameras is None:
        return None
    if isinstance(cameras, Mapping):
        pairs = [(str(k).strip(), v.strip() if isinstance(v, str) else v) for k, v in cameras.items()]
    elif isinstance(cameras, str):
        pairs = [_pair(c) for c in cameras.split(",") if c.strip()]
    elif isinstance(cameras, (list, tuple)):
        pairs = [_pair(c) if isinstance(c, str) else (c, c) for c in cameras]
    else:
        raise TypeError(f"cameras must be a comma-separated str, a list of names or a dict "
                        f"{{lerobot_name: camera}}, got {type(cameras).__name__}")
    for name, ours in pairs:
        if not isinstance(ours, str) or not ours or not name:
            raise ValueError(f"cameras={cameras!r}: every camera name must be a non-empty str")
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError(f"cameras={cameras!r}: a LeRobot camera name appears twice")
    return tuple(pairs)


def _pair(entry: str) -> tuple[str, str]:
    """``"front=base_camera"`` -> ``("front", "base_camera")``; ``"base_camera"`` -> twice the name."""
    name, _, ours = entry.partition("=")
    return (name.strip(), ours.strip()) if ours.strip() else (name.strip(), name.strip())


def task_camera_names(cls: type, robot: Optional[str] = None) -> Optional[tuple[str, ...]]:
    """The sensor camera names of task class ``cls`` with robot ``robot`` (None: the task's),
    read without building it (module docstring); None when its cameras depend on the built scene."""
    configs = task_camera_configs(cls, robot)
    return None if configs is None else tuple(configs)


def task_camera_configs(cls: type, robot: Optional[str] = None, overrides: Optional[Mapping] = None) -> Optional[dict]:
    """Camera name -> ``CameraConfig`` of task class ``cls``'s sensor cameras, then those its robot
    carries (the agent class's ``sensor_configs``), with the user's ``sensor_configs`` overrides;
    read without building anything. None when the task's cameras depend on the built scene.

    Raises:
        ValueError: a bad override (``envs/sensors.py: apply_overrides``).
    """
    from simulo_envs.agents import REGISTERED_AGENTS

    bare = cls.__new__(cls)  # no __init__: nothing is built; the property reads the task's config
    try:
        configs = list(bare._default_sensor_configs)
    except AttributeError:
        return None
    uid = cls.default_robot_uids if robot is None else robot
    agent = REGISTERED_AGENTS.get(uid) if isinstance(uid, str) else None
    configs += list(getattr(agent, "sensor_configs", ()))
    return apply_overrides(configs, overrides)


def check_camera_names(task: str, pairs, known: Sequence[str]) -> None:
    """Raise ValueError for the first camera of ``pairs`` that ``known`` lacks."""
    for name, ours in pairs:
        if ours not in known:
            close = did_you_mean(ours, known) or next((k for k in known if k.startswith(ours)), None)
            hint = f" (did you mean {close!r}?)" if close else ""
            raise ValueError(f"camera {ours!r}{hint}: {task} has the sensor cameras {list(known)}")
