"""SO101PlaceOnTarget-v1: put the cube of the colour named on the square of the colour named,
among distractors, with LeRobot's SO-101 arm (SO100PlaceOnTarget-v1: the same with the SO-100).

Scene: the arm's base at the env origin facing +x; a 25 mm, 10 g cube; flat coloured squares on
the table (50 mm a side, 2 mm thick, no collision: a cube set on one rests on the table), one of
them the target; ``distractors`` more cubes. Instruction: "Put the red cube on the blue square."
(the episode's colours and shape).

Randomisation per reset env (env-local metres): the cube, the squares and the distractor cubes in
the ring sector 0.19-0.30 m from the base at bearings within +-0.5 rad, apart from each other
(clearances: a square 0.036 m, a cube 0.02 m, plus 0.01 m), facing the base; then the cubes'
colours (distinct, from red, green, blue, yellow) and the squares' (distinct among the squares,
from the same set: a square may share a cube's colour); the robot returns to its rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above: one distractor cube, one
distractor square); ``"heldout"``: colours orange, purple, cyan, pink; cylinders instead of
cubes; two distractor cubes and two distractor squares; everything in the side sectors at
bearings 0.55-0.9 rad, 0.19-0.31 m out. ``"heldout_<axis>"`` changes one axis.

Success (it holds at the episode's last step only if the cube stays put): the cube's centre
within ``xy_tolerance`` (0.02 m) of the target square's centre in the plane and resting on the
table (centre at most ``z_tolerance`` above half its height), not grasped (the gripper let go),
slower than ``static_speed``. Fail: the cube's centre left the reachable ring (planar distance
outside [0.08, 0.40] m). The episode terminates on either; it is truncated after
``max_episode_steps`` (100).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), cube pose (7), target
square position (3), all env-local; TCP-to-cube (3) and cube-to-place (3, from the cube to its
resting place on the target) vectors, is_grasped (1) -> 36 floats.

Dense reward = ``reach + grasp + place + release`` terms (weights in the config),
``success_reward`` on success, 0 on fail; ``normalized_dense = dense / success_reward`` in
[0, 1]; sparse: +1 success, -1 fail. ``place`` pulls the grasped cube to its resting place;
``release`` pays for letting go of it on the target, which also keeps the earlier terms at their
best. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import torch

from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region, SuiteConfig, SuiteEnv


@dataclass(frozen=True)
class SO101PlaceOnTargetConfig(SuiteConfig):
    """Every tunable of SO101PlaceOnTarget-v1, with units; env-local metres. The cube, the reach
    ring and the reach term are ``SO100TableTopConfig``'s, colours and layout ``SuiteConfig``'s."""

    square_size: float = 0.05       # target and distractor squares' side [m]
    square_thickness: float = 0.002  # [m]
    square_clearance: float = 0.036  # a square's clearance radius in the layout (half its diagonal) [m]
    distractors: int = 1            # distractor cubes
    distractor_squares: int = 1
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2, "distractor_squares": 2},
        "positions": {"region": Region((0.19, 0.31), (0.55, 0.9))},
    })
    xy_tolerance: float = 0.02      # success: cube centre this close to the target's centre in the plane [m]
    z_tolerance: float = 0.005      # success: cube centre at most this above half the cube's height [m]
    static_speed: float = 0.05      # success: the cube slower than this [m/s]
    place_scale: float = 10.0       # place term = grasped * (1 - tanh(place_scale * |cube - resting place|)) [1/m]
    grasp_weight: float = 1.0
    place_weight: float = 2.0
    release_weight: float = 1.0     # release term = on the target and not grasped
    success_reward: float = 6.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100


@register_env("SO101PlaceOnTarget-v1", max_episode_steps=SO101PlaceOnTargetConfig.max_episode_steps)
class SO101PlaceOnTargetEnv(SuiteEnv):
    """Put the named cube on the named square with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101PlaceOnTargetConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cube = self.add_object("Cube")
        self.squares = [self.add_square(f"Square{i}", cfg.square_size, cfg.square_thickness)
                        for i in range(1 + cfg.distractor_squares)]
        self.target = self.squares[0]
        self.distractors = self.add_distractors()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg = self.cfg
        cubes = [self.cube] + self.distractors
        self.layout(env_idx, [(c, cfg.object_clearance) for c in cubes] + [(s, cfg.square_clearance) for s in self.squares])
        self.draw_colors(env_idx, len(cubes))
        self.draw_colors(env_idx, len(self.squares), first_role=len(cubes))
        for role, prop in enumerate(cubes + self.squares):
            self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped, on_target bool (N,); cube/tcp poses (N, 7), target position,
        tcp_to_cube and cube_to_place (N, 3), world frame."""
        k, xp = self.k, self.xp
        state = self.cube.state_in(xp)
        cube_pose, tcp_pose = state.pose, self.tcp_pose()
        target_pos = self.target.state_in(xp).pose[:, :3]
        cube_to_place = target_pos - cube_pose[:, :3]
        cube_to_place[:, 2] += k.cube_size / 2 - k.square_thickness / 2  # resting on the table at the target
        on_target = (norm(cube_to_place[:, :2]) <= k.xy_tolerance) & (-cube_to_place[:, 2] <= k.z_tolerance)
        grasped = self.agent.is_grasping(self.cube, xp=xp)
        return {
            "success": on_target & ~grasped & (norm(state.linear_velocity) < k.static_speed),
            "fail": self.out_of_reach(cube_pose[:, :3]),
            "is_grasped": grasped,
            "on_target": on_target,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "target_pos": target_pos,
            "tcp_to_cube": cube_pose[:, :3] - tcp_pose[:, :3],
            "cube_to_place": cube_to_place,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place + release terms (weights in the config), ``success_reward`` on
        success, 0 on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        info["reward_terms"] = self.pick_and_place_terms(info["tcp_to_cube"], info["cube_to_place"],
                                                         info["is_grasped"], info["on_target"])
        dense = xp.where(info["fail"], 0.0, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["success"], k.success_reward, dense)

    def instructions(self) -> list[str]:
        """"Put the <colour> <shape> on the <colour> square." per env (``SuiteEnv``)."""
        cubes = 1 + len(self.distractors)
        return [f"Put the {c} {s} on the {t} square." for c, s, t in
                zip(self.color_names(0), self.shape_names(self.cube), self.color_names(cubes))]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "target_pos": self.local(info["target_pos"]),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_place": info["cube_to_place"],
            "is_grasped": info["is_grasped"],
        }


@register_env("SO100PlaceOnTarget-v1", max_episode_steps=SO101PlaceOnTargetConfig.max_episode_steps)
class SO100PlaceOnTargetEnv(SO101PlaceOnTargetEnv):
    """SO101PlaceOnTarget-v1 with the SO-100 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
