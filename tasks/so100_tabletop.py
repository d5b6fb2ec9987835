"""What the SO-100 table-top tasks share: the arm at the env origin facing +x, a 25 mm cube
sized for its jaws spawning under the TCP's rest position, the ring around the base the arm
reaches (leaving it is the tasks' fail), the cameras, the physics rate (120 Hz, so that 20 Hz and
LeRobot's 30 Hz control both divide it), and the numbers of all that.

A task subclasses ``SO100TableTopEnv`` (a ``TableTopEnv``) with a config subclassing
``SO100TableTopConfig`` and reads top to bottom as any other task file.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulo_envs.envs.sensors import CameraConfig, look_at
from simulo_envs.geometry import norm
from simulo_envs.sim.config import SimConfig
from simulo_envs.tasks.tabletop import TableTopConfig, TableTopEnv


@dataclass(frozen=True)
class SO100TableTopConfig(TableTopConfig):
    """The SO-100 tasks' shared tunables, with units; env-local metres (``reach_weight`` and
    ``success_reward`` (5) are ``TableTopConfig``'s defaults). The spawn region is where the
    arm grasps from above with its jaw within about 15 deg of vertical; the TCP reaches
    0.06-0.40 m from the base at table height."""

    cube_size: float = 0.025        # cube edge [m]
    cube_mass: float = 0.01         # [kg]
    spawn_x: float = 0.265          # env-local cube spawn [m]
    x_range: float = 0.03           # +- x randomisation around the spawn [m]
    y_range: float = 0.08           # +- y randomisation around the spawn [m]
    reach_min: float = 0.08         # fail: cube centre nearer the base than this, in the plane [m]
    reach_max: float = 0.40         # fail: cube centre farther from the base than this, in the plane [m]
    reach_scale: float = 10.0       # reach term = 1 - tanh(reach_scale * |tcp - cube|) [1/m]
    grasp_weight: float = 1.0
    max_episode_steps: int = 80


class SO100TableTopEnv(TableTopEnv):
    """Base of the SO-100 table-top tasks (module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
    cfg = SO100TableTopConfig()
    ground_color = (0.16, 0.2, 0.27)
    """A dark slate floor: the white (SO-100) or yellow (SO-101) arm and the red cube stand out
    against it in every camera (on the default grey the SO-100's light grey jaw did not)."""
    default_sim_config = SimConfig(sim_freq=120)
    """120 Hz physics: both 20 Hz (the default control) and 30 Hz (``lerobot-record``'s rate)
    divide it; 25 Hz needs a ``sim_freq`` it divides (100, 150)."""

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        return [CameraConfig("base_camera", look_at([0.56, 0.3, 0.34], [0.15, 0.0, 0.06]), 128, 128, 0.95)]

    @property
    def _default_human_render_camera_configs(self) -> list[CameraConfig]:
        return [CameraConfig("render_camera", look_at([0.56, 0.36, 0.34], [0.14, 0.0, 0.08]), 512, 512, 0.9)]

    def out_of_reach(self, position):
        """bool (N,): the world positions (N, 3) whose env-local planar distance from the base is
        outside ``[cfg.reach_min, cfg.reach_max]``, of ``self.xp``."""
        planar = norm(self.local(position)[:, :2])
        return (planar < self.k.reach_min) | (planar > self.k.reach_max)


__all__ = ["SO100TableTopConfig", "SO100TableTopEnv"]
