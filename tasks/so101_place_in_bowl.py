"""SO101PlaceInBowl-v1: pick up the cube of the colour named and put it in the bowl, with LeRobot's
SO-101 arm (SO100PlaceInBowl-v1: the same with the SO-100).

Scene: the arm's base at the env origin facing +x; a 25 mm, 10 g cube; a white bowl
(``authoring.containers.Container``: 45 mm inner radius at the floor, walls 30 mm high flaring
out 20 deg, fixed to the table); ``distractors`` more cubes in other colours. Instruction: "Put
the red cube in the bowl." (the episode's colour and shape).

Randomisation per reset env (env-local metres): the bowl, the cube and the distractors in the
ring sector 0.19-0.30 m from the base at bearings within +-0.5 rad, each apart from the others
(clearances: the bowl 0.058 m, a cube 0.02 m, plus 0.01 m), cubes upright facing the base; then
distinct colours from red, green, blue, yellow (images only); the robot returns to its rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, one distractor);
``"heldout"``: colours orange, purple, cyan, pink; cylinders instead of cubes; two distractors;
everything in the side sectors at bearings 0.55-0.9 rad, 0.19-0.31 m out. ``"heldout_<axis>"``
changes one axis.

Success (it holds at the episode's last step only if the cube stays put): the cube's centre in
the bowl (``Container.contains``: above its floor, below its rim, inside its wall), not grasped
(the gripper let go), and slower than ``static_speed``. Fail: the cube's centre left the
reachable ring (planar distance outside [0.08, 0.40] m). The episode terminates on either; it is
truncated after ``max_episode_steps`` (100).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), cube pose (7), bowl
position (3), all env-local; TCP-to-cube (3) and cube-to-place (3, from the cube to its resting
place at the bowl's centre) vectors, is_grasped (1) -> 36 floats.

Dense reward = ``reach + grasp + place + release`` terms (weights in the config),
``success_reward`` on success, 0 on fail; ``normalized_dense = dense / success_reward`` in
[0, 1]; sparse: +1 success, -1 fail. ``place`` pulls the grasped cube to its resting place;
``release`` pays for letting go of it in the bowl, which also keeps the earlier terms at their
best. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import torch

from simulo_envs.authoring.containers import Container
from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region, SuiteConfig, SuiteEnv


@dataclass(frozen=True)
class SO101PlaceInBowlConfig(SuiteConfig):
    """Every tunable of SO101PlaceInBowl-v1, with units; env-local metres. The cube, the reach
    ring and the reach term are ``SO100TableTopConfig``'s, colours and layout ``SuiteConfig``'s."""

    bowl: Container = Container()   # 45 mm inner radius, 30 mm high, white (authoring/containers.py)
    bowl_clearance: float = 0.085   # the bowl's clearance radius in the layout: its rim (0.058) and room for
                                    # the open jaw, which swings out beyond the cube it grasps [m]
    distractors: int = 1
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2},
        "positions": {"region": Region((0.19, 0.31), (0.55, 0.9))},
    })
    static_speed: float = 0.05      # success: the cube slower than this [m/s]
    place_scale: float = 10.0       # place term = grasped * (1 - tanh(place_scale * |cube - resting place|)) [1/m]
    grasp_weight: float = 1.0
    place_weight: float = 2.0
    release_weight: float = 1.0     # release term = in the bowl and not grasped
    success_reward: float = 6.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100


@register_env("SO101PlaceInBowl-v1", max_episode_steps=SO101PlaceInBowlConfig.max_episode_steps)
class SO101PlaceInBowlEnv(SuiteEnv):
    """Put the named cube in the bowl with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101PlaceInBowlConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the ground
        self.cube = self.add_object("Cube")
        self.bowl = self.add_container("Bowl", self.cfg.bowl)
        self.distractors = self.add_distractors()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg = self.cfg
        cubes = [self.cube] + self.distractors
        self.layout(env_idx, [(self.bowl, cfg.bowl_clearance)] + [(c, cfg.object_clearance) for c in cubes])
        self.draw_colors(env_idx, len(cubes))
        for role, prop in enumerate(cubes):
            self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped, in_bowl bool (N,); cube/tcp poses (N, 7), bowl position,
        tcp_to_cube and cube_to_place (N, 3), world frame."""
        k, xp = self.k, self.xp
        state = self.cube.state_in(xp)
        cube_pose, tcp_pose = state.pose, self.tcp_pose()
        bowl_pos = self.bowl.state_in(xp).root_pose[:, :3]
        in_bowl = self.cfg.bowl.contains(cube_pose[:, :3] - bowl_pos)
        grasped = self.agent.is_grasping(self.cube, xp=xp)
        cube_to_place = bowl_pos - cube_pose[:, :3]
        cube_to_place[:, 2] += k.cube_size / 2 + self.cfg.bowl.floor
        return {
            "success": in_bowl & ~grasped & (norm(state.linear_velocity) < k.static_speed),
            "fail": self.out_of_reach(cube_pose[:, :3]),
            "is_grasped": grasped,
            "in_bowl": in_bowl,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "bowl_pos": bowl_pos,
            "tcp_to_cube": cube_pose[:, :3] - tcp_pose[:, :3],
            "cube_to_place": cube_to_place,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place + release terms (weights in the config), ``success_reward`` on
        success, 0 on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        info["reward_terms"] = self.pick_and_place_terms(info["tcp_to_cube"], info["cube_to_place"],
                                                         info["is_grasped"], info["in_bowl"])
        dense = xp.where(info["fail"], 0.0, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["success"], k.success_reward, dense)

    def instructions(self) -> list[str]:
        """"Put the <colour> <shape> in the bowl." per env (``SuiteEnv``)."""
        return [f"Put the {c} {s} in the bowl." for c, s in zip(self.color_names(0), self.shape_names(self.cube))]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "bowl_pos": self.local(info["bowl_pos"]),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_place": info["cube_to_place"],
            "is_grasped": info["is_grasped"],
        }


@register_env("SO100PlaceInBowl-v1", max_episode_steps=SO101PlaceInBowlConfig.max_episode_steps)
class SO100PlaceInBowlEnv(SO101PlaceInBowlEnv):
    """SO101PlaceInBowl-v1 with the SO-100 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
