"""SO101Push-v1: push a cube into a square region on the floor with LeRobot's SO-101 arm.

Goal: slide the 25 mm, 10 g cube, without lifting it, until its centre lies inside the coloured
target square (``goal_size`` 6 cm a side) on the floor, and leave it there released.
Instruction: "Push the red cube into the blue square." (the episode's colours).

Randomisation per reset env (env-local metres; the arm's base at the origin facing +x): the cube
at 0.17-0.21 m from the base at a bearing within +-0.35 rad of +x, turned to face the base; the
square's centre ``goal_distance`` (0.08-0.10 m) from the cube in a direction within
``goal_angle`` (+-0.35 rad) of straight away from the base, the square turned along that
direction; then the colours (cube, square, distractors: distinct, from the variant's set); the
robot at its rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, no distractor);
``"heldout"`` changes every axis: colours orange, purple, cyan, pink; a cylinder (25 mm across
and tall) instead of the cube; two distractors of the same shape clear of the cube, the square
and the path between them; the cube at bearings of 0.55-0.8 rad either side. ``"heldout_<axis>"``
changes one axis.

Success: the cube's centre inside the square (its footprint, in the square's frame), the cube on
the floor (centre below ``cube_size``) and not grasped: pushed there and let go, so it holds at the
episode's last step. Fail: the cube's centre left the ring the arm reaches (planar distance from
the base outside [0.08, 0.40] m). Either terminates the episode; it is truncated after
``max_episode_steps`` (80).

Cameras: the suite's, with ``base_camera`` lower and farther back (``sensor_eye``), so that it
sees the cube under the gripper's rest position.

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), cube pose (7), goal
position (3), all env-local; TCP-to-cube (3) and cube-to-goal (3) vectors -> 35 floats, in every
variant.

Dense reward = ``reach + push`` terms (weights in the config), ``success_reward`` on success, 0
on fail; ``normalized_dense = dense / success_reward`` in [0, 1]; sparse: +1 success, -1 fail.
``reach`` pulls the TCP to a point ``push_offset`` behind the cube, on the far side from the
goal (FrankaPush-v1's terms with this task's numbers). Every term is in ``info["reward_terms"]``.

SO100Push-v1 is the same task with the SO-100 arm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import torch

from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm, quat_axis
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region, SuiteConfig, SuiteEnv


@dataclass(frozen=True)
class SO101PushConfig(SuiteConfig):
    """Every tunable of SO101Push-v1, with units; env-local metres. The cube, the reach ring,
    the reach term and ``max_episode_steps`` (80) are ``SO100TableTopConfig``'s, the colours and
    the layout ``SuiteConfig``'s."""

    region: Region = Region((0.17, 0.21), (0.0, 0.35))  # the cube's spawn sector
    distractor_region: Region = Region((0.14, 0.33), (0.0, 1.0))  # where distractors may lie
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2},
        "positions": {"region": Region((0.17, 0.21), (0.55, 0.8))},
    })
    sensor_eye: tuple = (0.50, 0.0, 0.20)    # base_camera, env-local [m]: lower and farther back than the suite's,
    sensor_target: tuple = (0.20, 0.0, 0.0)  # so that it sees the cube under the gripper's rest position
    sensor_fov: float = 1.15                 # and every held-out position [rad]
    goal_distance: tuple = (0.08, 0.10)  # the square's centre this far from the cube [m]
    goal_angle: float = 0.35        # +- direction of the square from the cube, about straight away from the base [rad]
    goal_size: float = 0.06         # the target square's side [m]; success: the cube's centre over it
    goal_thickness: float = 0.002   # the square's thickness [m] (drawn only, no collision)
    push_offset: float = 0.03       # reach target: this far behind the cube centre [m]
    push_scale: float = 10.0        # push term = 1 - tanh(push_scale * |cube - goal|) [1/m]
    push_weight: float = 2.0
    success_reward: float = 4.0     # dense reward on success; also the normaliser


def in_square(points, square_pose, half_size):
    """bool (N,): world points (N, 3) whose planar offset from the square's centre, in the
    square's frame (its yaw from ``square_pose`` (N, 7), world frame), is within ``half_size`` [m]
    along both of its sides; torch or numpy."""
    offset = points[:, :2] - square_pose[:, :2]
    along = quat_axis(square_pose[:, 3:], 0)[:, :2]
    u = (offset * along).sum(1)
    v = offset[:, 1] * along[:, 0] - offset[:, 0] * along[:, 1]
    return (abs(u) <= half_size) & (abs(v) <= half_size)


@register_env("SO101Push-v1", max_episode_steps=SO101PushConfig.max_episode_steps)
class SO101PushEnv(SuiteEnv):
    """Push a cube into a square region with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101PushConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone
    goal_direction = 1.0
    """+1: the square lies away from the base (push); -1: towards it (SO101Pull-v1)."""

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cube = self.add_object("Cube")
        self.goal = self.add_square("Goal", cfg.goal_size, cfg.goal_thickness)
        self.distractors = self.add_distractors()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, rng = self.cfg, self.episode_rng
        cube = self.layout(env_idx, [(self.cube, cfg.object_clearance)])[:, 0]
        local = cube[:, :2] - self.env_origins[env_idx, :2]
        distance = rng.uniform(env_idx, *cfg.goal_distance, device=self.device)
        heading = torch.atan2(local[:, 1], local[:, 0]) + (0.0 if self.goal_direction > 0 else torch.pi)
        heading = heading + rng.uniform(env_idx, -cfg.goal_angle, cfg.goal_angle, device=self.device)
        goal_xy = local + distance[:, None] * torch.stack([heading.cos(), heading.sin()], dim=1)
        goal = self.place(self.goal, env_idx, goal_xy, heading)
        path = torch.stack([cube, (cube + goal) / 2, goal], dim=1)  # keep the distractors off the path
        clear = [cfg.object_clearance, cfg.object_clearance, cfg.goal_size * 0.71]
        self.layout(env_idx, [(prop, cfg.object_clearance) for prop in self.distractors], fixed=path,
                    fixed_clearance=clear, region=cfg.distractor_region)
        self.draw_colors(env_idx, 2 + len(self.distractors))
        for role, prop in enumerate([self.cube, self.goal] + self.distractors):
            self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped bool (N,); cube/tcp poses (N, 7), tcp_to_cube, cube_to_goal
        (N, 3, planar: z 0), world frame."""
        k = self.k
        cube_pose, tcp_pose, goal_pose = self.cube.state_in(self.xp).pose, self.tcp_pose(), self.goal.state_in(self.xp).pose
        cube_to_goal = goal_pose[:, :3] - cube_pose[:, :3]
        cube_to_goal[:, 2] = 0.0  # the goal is a region on the floor
        grasped = self.agent.is_grasping(self.cube, xp=self.xp)
        on_floor = cube_pose[:, 2] < k.cube_size
        return {
            "success": in_square(cube_pose, goal_pose, k.goal_size / 2) & on_floor & ~grasped,
            "fail": self.out_of_reach(cube_pose[:, :3]),
            "is_grasped": grasped,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": cube_pose[:, :3] - tcp_pose[:, :3],
            "cube_to_goal": cube_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + push terms (weights in the config), ``success_reward`` on success, 0 on fail;
        float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        to_goal = info["cube_to_goal"]
        direction = to_goal / norm(to_goal)[:, None].clip(1e-6)
        push_point = info["cube_pose"][:, :3] - direction * k.push_offset
        reach = 1 - xp.tanh(norm(push_point - info["tcp_pose"][:, :3]) * k.reach_scale)
        push = 1 - xp.tanh(norm(to_goal) * k.push_scale)
        info["reward_terms"] = {"reach": reach, "push": push}
        dense = xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["fail"] & ~info["success"], 0.0, dense)

    def instructions(self) -> list[str]:
        """"Push the <colour> <shape> into the <colour> square." per env (``SuiteEnv``)."""
        return [f"Push the {color} {shape} into the {square} square."
                for color, shape, square in zip(self.color_names(0), self.shape_names(self.cube), self.color_names(1))]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "goal_pos": self.local(self.goal.state_in(self.xp).pose[:, :3]),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_goal": info["cube_to_goal"],
        }


@register_env("SO100Push-v1", max_episode_steps=SO101PushConfig.max_episode_steps)
class SO100PushEnv(SO101PushEnv):
    """SO101Push-v1 with the SO-100 arm."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
