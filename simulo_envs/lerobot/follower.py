"""``SimFollower``: one env of a task seen as a LeRobot follower arm (the SO-100 / SO-101), the
simulation behind the ``lerobot_robot_simulo`` plugin (``integrations/lerobot_robot_simulo/``).

It speaks the follower's dict protocol (``lerobot/robots/so_follower/so_follower.py``, LeRobot
0.6.1: ``get_observation`` / ``send_action``) without importing LeRobot:

- joints: the robot agent's ``lerobot`` description (``agents/so101.py``: ``LEROBOT``) names
  them (``shoulder_pan.pos`` ... ``wrist_roll.pos`` in degrees, ``gripper.pos`` 0 closed to 100
  open) and maps them: observations through ``agent.lerobot_from_qpos``, actions through the
  agent's control mode in those units (``pd_joint_pos_lerobot``). Nothing here converts units.
- actions: a dict with exactly those keys, finite numbers, taken as joint targets; targets
  outside the joint limits (the action space of that control mode) are clipped to them, as a
  real follower's servos stop at the calibrated range (``gripper.pos`` is clamped to 0..100 in
  software, ``lerobot/motors/motors_bus.py: _unnormalize``; the arm joints by the servos'
  position limits). ``act`` returns what was applied.
- cameras: ``FollowerCamera``\\ s, each the picture of one of the task's cameras (its sensor
  cameras and the ones its robot carries) at the size asked for, rendered when an observation
  is asked for (as a real follower reads its cameras in ``get_observation``). They see what
  the task draws for people too (the goal point of a pick-and-place): with the follower's
  schema a policy has no other way to know where the goal is.
- stepping: ``StepClock`` (``step_clock.py``): real time for a person, lockstep for a policy or
  a replay. The task's time limit is off (the driver decides when an episode ends) and a
  finished task (success or fail) keeps running; ``episode_success`` says whether the task
  reported success since the last ``reset``.
- episodes: ``reset(seed)`` starts one (the task's randomisation from ``seed``); without a
  seed, the one after the last episode's (the first: the constructor's ``seed``; with None,
  random seeds).

``trace()`` returns every observation's joints and every applied action with their times
(``save_trace`` writes them to an ``.npz``), from which replay errors and the action-to-
observation latency are computed.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, replace
from typing import Mapping, Optional, Sequence

import numpy as np
import torch

from simulo_envs.envs.registration import REGISTERED
from simulo_envs.lerobot.request import check_camera_names, check_request, task_camera_configs
from simulo_envs.lerobot.step_clock import StepClock


@dataclass(frozen=True)
class FollowerCamera:
    """A camera of the follower: the observation key ``name`` holds uint8 ``(height, width, 3)``
    RGB pictures of the task's camera ``camera`` (a sensor camera of the task or of its robot)."""

    name: str
    camera: str
    width: int
    height: int


class SimFollower:
    """A task's scene behind a LeRobot follower's protocol (module docstring).

    Args:
        task: a registered task id (``"SO101PickPlace-v1"``).
        robot: the robot uid (``"so101"``): one the task supports, with a LeRobot description.
        cameras: the cameras to report; None: every camera of the task under its own name at
            its own size; empty: none (no renderer is made).
        fps: the control rate [Hz]; the task's physics rate must be a multiple of it.
        real_time: True: the sim follows the wall clock; False: lockstep (``step_clock.py``).
        seed: the first episode's seed (each episode reset without one takes the last seed + 1);
            None: a random seed for every episode reset without one.
        max_catch_up: in real time, the most control periods one call steps.

    Raises:
        ValueError: an unknown task, a robot the task does not support or without a LeRobot
            description, an unknown camera, a bad size, fps or seed (nothing is built).
    """

    def __init__(self, task: str, robot: str, cameras: Optional[Sequence[FollowerCamera]] = None, fps: int = 30,
                 real_time: bool = True, seed: Optional[int] = 0, max_catch_up: int = 5):
        from simulo_envs.agents import REGISTERED_AGENTS

        try:
            request = check_request(task, n_envs=1, robot=robot, obs_type="agent_pos")
        except ValueError as error:
            if task in REGISTERED and robot in REGISTERED_AGENTS and str(error).startswith("robot="):
                raise ValueError(f"{error}; the tasks with the {robot} arm: {tasks_for_robot(robot)}") from None
            raise
        spec = getattr(REGISTERED_AGENTS[request.robot], "lerobot", None)
        if spec is None:
            raise ValueError(f"robot {request.robot!r} has no LeRobot follower description (agent.lerobot)")
        check_request(task, n_envs=1, robot=robot, fps=fps, obs_type="agent_pos")  # the rate the physics divides
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
        configs = task_camera_configs(request.task_cls, request.robot) or {}
        if cameras is None:
            cameras = [FollowerCamera(n, n, c.width, c.height) for n, c in configs.items()]
        cameras = tuple(cameras)
        check_camera_names(task, [(c.name, c.camera) for c in cameras], list(configs))
        for cam in cameras:
            if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
                       for v in (cam.width, cam.height)):
                raise ValueError(f"camera {cam.name!r}: width and height must be ints >= 1 [px], got "
                                 f"{cam.width!r} x {cam.height!r}")
        if len({c.name for c in cameras}) != len(cameras):
            raise ValueError(f"cameras: a name appears twice in {[c.name for c in cameras]}")
        self.task, self.robot, self.fps = request.task, request.robot, int(fps)
        self.names: tuple[str, ...] = tuple(spec.names)
        """The joint keys, in order (``shoulder_pan.pos`` ... ``gripper.pos``)."""
        self.robot_type = spec.robot_type
        self.units = dict(zip(spec.names, spec.units))
        self.cameras = cameras
        self._task_cls, self._spec = request.task_cls, spec
        self._render_configs = [replace(configs[c.camera], name=c.name, width=int(c.width), height=int(c.height))
                                for c in cameras]
        self._clock = StepClock(1.0 / self.fps, real_time, max_catch_up)
        self._random_seeds, self._next_seed, self._episodes = seed is None, seed, 0
        self.env = None
        self._trace: dict[str, list] = {k: [] for k in ("obs_start", "obs_wall", "obs_sim", "obs_dropped",
                                                        "obs_joints", "obs_applied", "obs_episode", "act_wall",
                                                        "act_sent")}

    # ------------------------------------------------------------------ lifecycle
    @property
    def is_open(self) -> bool:
        """True between ``open`` and ``close`` (the env is built)."""
        return self.env is not None

    def open(self) -> None:
        """Build the scene, start the first episode and render each camera once (the first
        picture of a process compiles the shaders: seconds on a CPU), so that the driver's loop
        starts at its pace."""
        if self.env is not None:
            return
        cls = _with_render_cameras(self._task_cls, self._render_configs)
        self.env = cls(num_envs=1, obs_mode="state_dict", control_mode=self._spec.control_mode,
                       render_mode="rgb_array" if self.cameras else None, sim_config={"control_freq": self.fps},
                       max_episode_steps=-1, robot_uids=self.robot)
        space = self.env.single_action_space
        self._low, self._high = space.low.astype(np.float32), space.high.astype(np.float32)
        self.reset()
        for cam in self.cameras:  # the first picture of a process compiles the shaders: not in the loop
            self.picture(cam.name)

    def close(self) -> None:
        """Close the env (a no-op when closed); ``open`` builds it again."""
        if self.env is not None:
            self.env.close()
            self.env = None

    def reset(self, seed: Optional[int] = None) -> int:
        """Start an episode: the task's reset from ``seed`` (None: the last episode's seed + 1,
        or the constructor's seed for the first, or random), the arm at its rest pose holding
        it. Returns the seed used.

        Raises:
            RuntimeError: the follower is not open.
        """
        self._require_open()
        if seed is None:
            seed = secrets.randbelow(2**31) if self._random_seeds else self._next_seed
        obs, _ = self.env.reset(seed=int(seed))
        self._next_seed = int(seed) + 1
        self._episodes += 1
        self.seed = int(seed)
        self._qpos = obs["agent"]["qpos"]
        self._target = self.joint_vector()
        self._clock.restart()
        self.episode_success = False
        self._actions, self._applied = 0, -1
        return self.seed

    # ------------------------------------------------------------------ the follower protocol
    @property
    def joint_limits(self) -> dict[str, tuple[float, float]]:
        """Joint key -> (lower, upper) in the follower's units (the action space's bounds)."""
        self._require_open()
        return {n: (float(lo), float(hi)) for n, lo, hi in zip(self.names, self._low, self._high)}

    def joint_vector(self) -> np.ndarray:
        """float32 ``(len(names),)``: the joints now, in the follower's units."""
        return self.env.agent.lerobot_from_qpos(self._qpos)[0].detach().cpu().numpy().astype(np.float32)

    def observe(self) -> dict:
        """``{joint key: float, camera name: uint8 (H, W, 3)}`` now (in real time, after stepping
        the sim to the wall clock).

        Raises:
            RuntimeError: the follower is not open.
        """
        self._require_open()
        start = time.perf_counter()
        self._advance(self._clock.due(action=False))
        joints = self.joint_vector()
        out: dict = dict(zip(self.names, (float(v) for v in joints)))
        for cam in self.cameras:
            out[cam.name] = self.picture(cam.name)
        for key, value in (("obs_start", start), ("obs_wall", time.perf_counter()), ("obs_sim", self._clock.sim_time),
                           ("obs_dropped", self._clock.dropped_s), ("obs_joints", joints),
                           ("obs_applied", self._applied), ("obs_episode", self._episodes - 1)):
            self._trace[key].append(value)
        return out

    def picture(self, camera: str) -> np.ndarray:
        """uint8 ``(height, width, 3)``: what the camera named ``camera`` (a ``FollowerCamera``'s
        name) sees now, without stepping.

        Raises:
            KeyError: no such camera. RuntimeError: the follower is not open.
        """
        self._require_open()
        if camera not in {c.name for c in self.cameras}:
            raise KeyError(f"no camera {camera!r}; the follower has {[c.name for c in self.cameras]}")
        return self.env.render_rgb_array(camera)[0].detach().cpu().numpy().copy()

    def action_vector(self, action: Mapping) -> np.ndarray:
        """float32 ``(len(names),)`` of ``action``'s values in ``names`` order.

        Raises:
            ValueError: the keys are not exactly ``names`` (the message lists the missing and
                unexpected ones), or a value is NaN or infinite.
            TypeError: ``action`` is not a mapping, or a value is not a number.
        """
        if not isinstance(action, Mapping):
            raise TypeError(f"action must be a dict {{joint key: target}}, got {type(action).__name__}")
        missing = [n for n in self.names if n not in action]
        unexpected = [k for k in action if k not in self.names]
        if missing or unexpected:
            raise ValueError(f"action keys do not match the {self.robot_type} follower's: missing {missing}, "
                             f"unexpected {unexpected}; it takes {list(self.names)} (arm joints in degrees, "
                             f"gripper.pos from 0 closed to 100 open)")
        values = np.empty(len(self.names), np.float32)
        for i, name in enumerate(self.names):
            try:
                values[i] = float(action[name])
            except (TypeError, ValueError):
                raise TypeError(f"action[{name!r}] must be a number, got {action[name]!r}") from None
        bad = [n for n, v in zip(self.names, values) if not np.isfinite(v)]
        if bad:
            raise ValueError(f"action values of {bad} are NaN or infinite; nothing was applied")
        return values

    def act(self, action: Mapping) -> dict:
        """Take ``action`` (joint key -> target, the follower's units) as the joints' targets,
        clipped to the joint limits; step the sim (``step_clock.py``). Returns the targets
        applied, as a dict. Bad input raises before anything moves (``action_vector``).

        Raises:
            ValueError / TypeError: as ``action_vector``. RuntimeError: the follower is not open.
        """
        self._require_open()
        sent = np.clip(self.action_vector(action), self._low, self._high)
        n = self._clock.due(action=True)
        if self._clock.real_time:  # the old targets held until now, the new ones from now on
            self._advance(n)
            self._target, self._actions = sent, self._actions + 1
        else:
            self._target, self._actions = sent, self._actions + 1
            self._advance(n)
        self._trace["act_wall"].append(time.perf_counter())
        self._trace["act_sent"].append(sent)
        return dict(zip(self.names, (float(v) for v in sent)))

    def _advance(self, periods: int) -> None:
        if periods <= 0:
            return
        action = torch.from_numpy(self._target)[None]
        for _ in range(periods):
            obs, _, _, _, info = self.env.step(action)
            if "success" in info and bool(info["success"][0]):
                self.episode_success = True
        self._qpos = obs["agent"]["qpos"]
        self._applied = self._actions - 1

    @property
    def dropped_s(self) -> float:
        """Wall-clock time the real-time sim skipped because its driver stalled [s]."""
        return self._clock.dropped_s

    def _require_open(self) -> None:
        if self.env is None:
            raise RuntimeError("the simulated follower is not open: call open() (LeRobot: connect()) first")

    # ------------------------------------------------------------------ trace
    def trace(self) -> dict[str, np.ndarray]:
        """Everything observed and applied since construction: ``obs_start`` / ``obs_wall`` /
        ``act_wall`` (``time.perf_counter`` [s] when each observation was asked for / returned,
        each action's call),
        ``obs_sim`` (sim time in its episode [s]), ``obs_dropped`` (wall-clock time the real-time
        sim had skipped by then [s], ``dropped_s``), ``obs_joints`` float32 (T, J) and
        ``act_sent`` float32 (K, J) (follower units, ``names`` order), ``obs_applied`` (the
        index of the last action the observed state was stepped with, -1: none),
        ``obs_episode`` (the episode count, from 0), ``names``."""
        j = len(self.names)
        out = {k: np.asarray(v, np.float64) for k, v in self._trace.items()
               if k in ("obs_start", "obs_wall", "obs_sim", "obs_dropped", "act_wall")}
        out["obs_joints"] = np.asarray(self._trace["obs_joints"], np.float32).reshape(-1, j)
        out["act_sent"] = np.asarray(self._trace["act_sent"], np.float32).reshape(-1, j)
        out["obs_applied"] = np.asarray(self._trace["obs_applied"], np.int64)
        out["obs_episode"] = np.asarray(self._trace["obs_episode"], np.int64)
        out["names"] = np.asarray(self.names)
        return out

    def save_trace(self, path: str) -> None:
        """``trace()`` as an ``.npz`` at ``path``."""
        np.savez(path, **self.trace())


def _with_render_cameras(task_cls: type, configs: list) -> type:
    """``task_cls`` whose render cameras (rendered only when asked, ``render_rgb_array``) are
    ``configs``: the follower's cameras, drawn on demand instead of at every physics step."""
    return type(task_cls.__name__, (task_cls,), {
        "__module__": task_cls.__module__, "__doc__": task_cls.__doc__,
        "_default_human_render_camera_configs": property(lambda self: list(configs))})


def tasks_for_robot(robot: str) -> list[str]:
    """The registered task ids whose ``SUPPORTED_ROBOTS`` include the robot uid ``robot``, sorted."""
    return sorted(task for task, cls in REGISTERED.items() if robot in (getattr(cls, "SUPPORTED_ROBOTS", None) or ()))
