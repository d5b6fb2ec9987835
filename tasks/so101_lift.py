"""SO101Lift-v1: lift a cube with LeRobot's SO-101 arm.

SO100Lift-v1 (``tasks/so100_lift.py``) with the SO-101 (``agents/so101.py``): the same 25 mm,
10 g cube, spawn region (x in 0.265 +- 0.03, y in 0 +- 0.08 env-local metres, under the TCP's rest
position), success (the cube's centre ``lift_height`` (0.05 m) above its spawn height), fail (the
cube's centre outside the ring [0.08, 0.40] m around the base), reward terms, 80 steps, and the
same 30-float state observation. The arm carries a wrist camera (``wrist_camera``) beside the
task's front camera (``base_camera``).
"""

from __future__ import annotations

from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.so100_lift import SO100LiftConfig, SO100LiftEnv


@register_env("SO101Lift-v1", max_episode_steps=SO100LiftConfig.max_episode_steps)
class SO101LiftEnv(SO100LiftEnv):
    """Lift a cube with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
