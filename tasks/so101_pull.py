"""SO101Pull-v1: pull a cube back toward the arm's base into a square region with LeRobot's SO-101 arm.

Goal: reach past the 25 mm, 10 g cube and drag it, without lifting it, toward the base until its
centre lies inside the coloured target square (6 cm a side) on the floor, and leave it there
released. Instruction: "Pull the red cube back into the blue square." (the episode's colours).

Randomisation per reset env (env-local metres; the arm's base at the origin facing +x): the cube
at 0.27-0.31 m from the base at a bearing within +-0.35 rad of +x, turned to face the base; the
square's centre ``goal_distance`` (0.08-0.10 m) from the cube in a direction within
``goal_angle`` (+-0.35 rad) of straight toward the base, the square turned along that direction;
then the colours (cube, square, distractors: distinct, from the variant's set); the robot at its
rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, no distractor);
``"heldout"`` changes every axis: colours orange, purple, cyan, pink; a cylinder (25 mm across
and tall) instead of the cube; two distractors of the same shape clear of the cube, the square
and the path between them; the cube at bearings of 0.55-0.8 rad either side. ``"heldout_<axis>"``
changes one axis.

Success, fail, observation (35 floats) and rewards are SO101Push-v1's (``tasks/so101_push.py``):
success is the cube's centre inside the square, on the floor, not grasped (so it holds at the
episode's last step); fail is the cube's centre outside the ring [0.08, 0.40] m around the base;
dense reward ``reach + push`` (the reach term pulls the TCP to the cube's far side),
``success_reward`` on success, 0 on fail; normalised dense in [0, 1]; sparse +1 / -1. The
episode terminates on success or fail and is truncated after ``max_episode_steps`` (80).

SO100Pull-v1 is the same task with the SO-100 arm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.so101_push import SO101PushConfig, SO101PushEnv
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region


@dataclass(frozen=True)
class SO101PullConfig(SO101PushConfig):
    """Every tunable of SO101Pull-v1, with units; env-local metres. Those not restated here
    (the square, the reward terms, ``max_episode_steps``) are ``SO101PushConfig``'s."""

    region: Region = Region((0.27, 0.31), (0.0, 0.35))  # the cube's spawn sector
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2},
        "positions": {"region": Region((0.27, 0.31), (0.55, 0.8))},
    })


@register_env("SO101Pull-v1", max_episode_steps=SO101PullConfig.max_episode_steps)
class SO101PullEnv(SO101PushEnv):
    """Pull a cube toward the base into a square region with the SO-101 (see the module docstring)."""

    cfg = SO101PullConfig()
    default_max_episode_steps = cfg.max_episode_steps
    goal_direction = -1.0  # the square lies toward the base

    def instructions(self) -> list[str]:
        """"Pull the <colour> <shape> back into the <colour> square." per env (``SuiteEnv``)."""
        return [f"Pull the {color} {shape} back into the {square} square."
                for color, shape, square in zip(self.color_names(0), self.shape_names(self.cube), self.color_names(1))]


@register_env("SO100Pull-v1", max_episode_steps=SO101PullConfig.max_episode_steps)
class SO100PullEnv(SO101PullEnv):
    """SO101Pull-v1 with the SO-100 arm."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
