"""The configs of the simulated SO followers, registered as LeRobot robot types
``simulo_so101_follower`` and ``simulo_so100_follower`` (``--robot.type=...``).

LeRobot finds this distribution by its name (``register_third_party_plugins`` imports every
installed distribution named ``lerobot_robot_*``: ``lerobot/utils/import_utils.py``, 0.6.1);
importing it runs ``RobotConfig.register_subclass`` below (draccus' choice registry,
``lerobot/robots/config.py``). ``make_robot_from_config`` then finds the robot class by the
config class's name without ``Config`` in this package (``make_device_from_device_class``).

The fields a real SO follower has (``lerobot/robots/so_follower/config_so_follower.py``) keep
their meaning: ``id``, ``cameras`` (here of type ``simulo``: ``camera_simulo.py``) and
``max_relative_target``; ``port``, calibration and the servo gains have nothing to configure
in a simulation. The others say which scene is behind the arm and how it is stepped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lerobot.cameras import CameraConfig
from lerobot.robots.config import RobotConfig

from lerobot_robot_simulo.camera_simulo import SimuloCameraConfig
from simulo_envs.lerobot import FollowerCamera, SimFollower


@dataclass(kw_only=True)
class SimuloFollowerConfig(RobotConfig):
    """A simulated SO follower arm (``simulo_follower.py``).

    Attributes:
        task: the scene behind the arm: a registered task with this arm
            (``SO101PickPlace-v1``, ``SO101Lift-v1``; ``SO100...`` for the SO-100).
        cameras: LeRobot camera name -> ``SimuloCameraConfig`` (``{front: {type: simulo,
            camera: base_camera, width: 640, height: 480}}``); None: every camera of the task
            (its front ``base_camera`` and the arm's ``wrist_camera``) under its own name at
            its own size (128x128); ``{}``: none.
        fps: the sim's control rate [Hz]: it steps its physics in periods of ``1 / fps``;
            the task's physics rate (120 Hz) must be a multiple. LeRobot's loops run at 30 Hz.
        real_time: True: the sim follows the wall clock (a person teleoperating); False:
            lockstep, one control period per action, as fast as the driver calls (a policy, a
            replay); ``simulo_envs/lerobot/step_clock.py``.
        seed: the first episode's seed; the k-th episode of the session uses ``seed + k``;
            None: random seeds. Each episode's seed is logged (and recorded with
            ``dataset_root``).
        max_relative_target: as the real follower's: the most a joint target may move from the
            present position per action, in the joint's units (one number for all, or
            ``{motor: value}`` keyed ``shoulder_pan`` ... ``gripper``); None: no cap. Clipped by
            LeRobot's own ``ensure_safe_goal_position``.
        dataset_root: the root of the LeRobot dataset this session records into (the
            ``--dataset.root`` of ``lerobot-record`` / ``lerobot-rollout``): when the robot
            disconnects, every recorded episode's seed and the task's success are written into
            its episode table (``simulo_envs/datasets/episode_outcomes.py``). None: logged only.
        trace_path: an ``.npz`` to write, when the robot disconnects, every observed joint
            state and applied action with their times (``SimFollower.trace``).
        max_catch_up: in real time, the most control periods one call steps (time beyond
            that, a stall, is dropped).
    """

    robot_uid: ClassVar[str] = ""
    task: str = ""
    cameras: dict[str, CameraConfig] | None = None
    fps: int = 30
    real_time: bool = True
    seed: int | None = 0
    max_relative_target: float | dict[str, float] | None = None
    dataset_root: str | None = None
    trace_path: str | None = None
    max_catch_up: int = 5

    def __post_init__(self) -> None:
        if self.cameras:
            for key, camera in self.cameras.items():
                if not isinstance(camera, SimuloCameraConfig):
                    raise ValueError(f"camera {key!r}: a simulated follower's cameras are of type 'simulo' "
                                     f"(the scene's cameras), got type {camera.type!r}")
                if camera.fps is None:
                    camera.fps = self.fps
        if isinstance(self.max_relative_target, int) and not isinstance(self.max_relative_target, bool):
            self.max_relative_target = float(self.max_relative_target)  # ensure_safe_goal_position takes a float
        follower = self.make_follower()  # checks task, robot, cameras, fps, seed; builds nothing
        if self.cameras:  # sizes left out: the task camera's own
            for cam in follower.cameras:
                config = self.cameras[cam.name]
                config.width, config.height = cam.width, cam.height
        super().__post_init__()

    def make_follower(self) -> SimFollower:
        """The ``SimFollower`` this config describes (not yet open).

        Raises:
            ValueError: a task without this arm, an unknown camera, a bad fps or seed."""
        cameras = None
        if self.cameras is not None:
            sizes = SimFollower(self.task, self.robot_uid, fps=self.fps, real_time=self.real_time, seed=self.seed).cameras
            own = {cam.camera: cam for cam in sizes}
            cameras = []
            for key, config in self.cameras.items():
                name = config.camera or key
                base = own.get(name)
                cameras.append(FollowerCamera(key, name, config.width or (base.width if base else 0),
                                              config.height or (base.height if base else 0)))
        return SimFollower(self.task, self.robot_uid, cameras=cameras, fps=self.fps, real_time=self.real_time,
                           seed=self.seed, max_catch_up=self.max_catch_up)


@RobotConfig.register_subclass("simulo_so101_follower")
@dataclass(kw_only=True)
class SimuloSO101FollowerConfig(SimuloFollowerConfig):
    """The simulated SO-101 follower (``--robot.type=simulo_so101_follower``)."""

    robot_uid: ClassVar[str] = "so101"
    task: str = "SO101PickPlace-v1"


@RobotConfig.register_subclass("simulo_so100_follower")
@dataclass(kw_only=True)
class SimuloSO100FollowerConfig(SimuloFollowerConfig):
    """The simulated SO-100 follower (``--robot.type=simulo_so100_follower``)."""

    robot_uid: ClassVar[str] = "so100"
    task: str = "SO100PickPlace-v1"
