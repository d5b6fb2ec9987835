"""SO101PickPlace-v1: carry a cube to a goal point in the air with LeRobot's SO-101 arm.

SO100PickPlace-v1 (``tasks/so100_pick_place.py``) with the SO-101 (``agents/so101.py``): the
same 25 mm cube and its spawn region, the goal point (x in 0.265 +- 0.03, y in 0 +- 0.08, z in
[0.04, 0.10] env-local metres, drawn for people only), success (the cube's centre within 15 mm
of the goal), fail (outside the reachable ring), reward terms, 80 steps and the 36-float state
observation. The arm carries a wrist camera (``wrist_camera``) beside the task's front camera.
"""

from __future__ import annotations

from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.so100_pick_place import SO100PickPlaceConfig, SO100PickPlaceEnv


@register_env("SO101PickPlace-v1", max_episode_steps=SO100PickPlaceConfig.max_episode_steps)
class SO101PickPlaceEnv(SO100PickPlaceEnv):
    """Carry a cube to a goal point with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
