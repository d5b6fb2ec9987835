"""SO101Sort-v1: sort two cubes by colour into two bins with LeRobot's SO-101 arm.

Goal: two 25 mm, 10 g cubes of two colours and two open bins (5 cm square inside, 3 cm walls),
each bin marked with one of the cubes' colours (a coloured pad on its floor); put each cube in the
bin of its colour and let go of it. Instruction: "Put the red cube in the red bin and the blue
cube in the blue bin." (the episode's colours).

Randomisation per reset env (env-local metres; the arm's base at the origin facing +x): the two
bins in the ring sector 0.15-0.32 m from the base at bearings within +-0.75 rad of +x, then the
two cubes 0.235-0.30 m from the base within +-0.5 rad (where the arm grasps from above), all
apart by their clearances (``SuiteEnv.layout``), each turned to face the base; then the
distractors (``distractor_region``) clear of them all; then the colours (cube A and its bin, cube B
and its bin, distractors: distinct, from the variant's set); the robot at its rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, no distractor);
``"heldout"`` changes every axis: colours orange, purple, cyan, pink; cylinders (25 mm across and
tall) instead of cubes; two distractors of the same shape in colours no bin has, in the sector
0.13-0.36 m, +-1.4 rad, clear of the bins and the cubes; the bins farther out and to the sides
(0.25-0.34 m, bearings 0.55-1.1 rad either side), the cubes nearer the base (0.19-0.235 m, 0.4-0.9
rad): regions where every layout fits (no two things closer than their clearances).
``"heldout_<axis>"`` changes one axis.

Success: cube A's centre inside bin A and cube B's inside bin B (within the inner walls, between
the floor and the rim, in the bin's frame), neither grasped: so it holds at the episode's last
step. Fail: a cube in the other cube's bin, or a cube's centre outside the ring the arm reaches
(planar distance from the base outside [0.08, 0.40] m). Either terminates the episode; it is
truncated after ``max_episode_steps`` (160: two pick-and-place moves).

Cameras: ``base_camera`` and the ``render()`` camera look down more steeply than the suite's, into
the bins.

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), cube A and B poses (7 +
7), bin A and B positions (3 + 3), all env-local; TCP-to-A, TCP-to-B, A-to-its-bin, B-to-its-bin
vectors (4 x 3) -> 51 floats, in every variant.

Dense reward = ``placed + reach + grasp + carry`` terms (weights in the config),
``success_reward`` on success, 0 on fail: ``placed`` counts the cubes in their bins (0, 1, 2);
``reach``, ``grasp`` and ``carry`` concern the first cube not yet in its bin (A, then B): the TCP
near it, it grasped, and, grasped, it near a point ``carry_height`` above its bin's centre.
``normalized_dense = dense / success_reward`` in [0, 1]; sparse: +1 success, -1 fail. Every term is
in ``info["reward_terms"]``.

SO100Sort-v1 is the same task with the SO-100 arm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import torch

from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.authoring.containers import Container
from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm, quat_conj, quat_rotate
from simulo_envs.prop import Prop
from simulo_envs.tensors import as_float32
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region, SuiteConfig, SuiteEnv


@dataclass(frozen=True)
class SO101SortConfig(SuiteConfig):
    """Every tunable of SO101Sort-v1, with units; env-local metres. The cubes, the reach ring and
    the reach term are ``SO100TableTopConfig``'s, the colours and the layout ``SuiteConfig``'s."""

    region: Region = Region((0.15, 0.32), (0.0, 0.75))  # where the bins spawn
    cube_region: Region = Region((0.235, 0.30), (0.0, 0.5))  # where the cubes spawn
    distractor_region: Region = Region((0.13, 0.36), (0.0, 1.4))  # where distractors may lie, clear of bins and cubes
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2},
        "positions": {"region": Region((0.25, 0.34), (0.55, 1.1)), "cube_region": Region((0.19, 0.235), (0.4, 0.9))},
    })
    sensor_eye: tuple = (0.60, 0.0, 0.35)    # base_camera and render() camera, env-local [m]: from the front, high
    sensor_target: tuple = (0.22, 0.0, 0.0)  # enough to see into the bins (their coloured floors), low enough to
    sensor_fov: float = 0.9                  # see a cube under the gripper's rest position [rad]
    render_eye: tuple = (0.60, 0.0, 0.35)
    render_target: tuple = (0.22, 0.0, 0.0)
    render_fov: float = 0.9
    max_episode_steps: int = 160
    bin: Container = Container(kind="bin", inner_size=(0.05, 0.05), height=0.03, wall=0.004, floor=0.004, flare=0.0)
    bin_clearance: float = 0.042    # a bin's clearance radius in the layout (its outer half-diagonal) [m]
    pad_thickness: float = 0.0005   # the coloured pad on a bin's floor [m] (drawn only, no collision)
    carry_height: float = 0.06      # carry term's target: this far above a bin's centre [m]
    carry_scale: float = 10.0       # carry term = 1 - tanh(carry_scale * |cube - carry point|) [1/m]
    placed_weight: float = 2.0
    reach_weight: float = 1.0
    grasp_weight: float = 1.0
    carry_weight: float = 2.0
    success_reward: float = 10.0    # dense reward on success; also the normaliser (the terms sum to at most 8)


def in_bin(points, bin_pose, container: Container):
    """bool (N,): world points (N, 3) inside the bin at ``bin_pose`` (N, 7, world frame): within
    its inner walls and between its floor and rim, in the bin's own frame; torch or numpy."""
    local = quat_rotate(quat_conj(bin_pose[:, 3:]), points[:, :3] - bin_pose[:, :3])
    return container.contains(local)


@register_env("SO101Sort-v1", max_episode_steps=SO101SortConfig.max_episode_steps)
class SO101SortEnv(SuiteEnv):
    """Sort two cubes by colour into two bins with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101SortConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cubes = [self.add_object("CubeA"), self.add_object("CubeB")]
        self.bins = [self.add_container("BinA", cfg.bin), self.add_container("BinB", cfg.bin)]
        pad = cfg.bin.inner_size
        self.pads = [self.scene.add(Prop(Cuboid(f"Pad{s}", (pad[0], pad[1], cfg.pad_thickness),
                                                Pose([0.0, 0.0, cfg.bin.floor + cfg.pad_thickness / 2]),
                                                Physics.kinematic(), Material(), collision=False)),
                                    at=f"/World/Pad{s}") for s in "AB"]
        self.distractors = self.add_distractors()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg = self.cfg
        bins = self.layout(env_idx, [(self.bins[0], cfg.bin_clearance), (self.bins[1], cfg.bin_clearance)])
        cubes = self.layout(env_idx, [(cube, cfg.object_clearance) for cube in self.cubes], fixed=bins,
                            fixed_clearance=cfg.bin_clearance, region=cfg.cube_region)
        self.layout(env_idx, [(prop, cfg.object_clearance) for prop in self.distractors],
                    fixed=torch.cat([bins, cubes], dim=1),
                    fixed_clearance=[cfg.bin_clearance] * 2 + [cfg.object_clearance] * 2, region=cfg.distractor_region)
        for pad, bin_xyz in zip(self.pads, bins.unbind(1)):
            local = bin_xyz[:, :2] - self.env_origins[env_idx, :2]
            self.place(pad, env_idx, local, torch.atan2(local[:, 1], local[:, 0]))
        self.draw_colors(env_idx, 2 + len(self.distractors))
        for role, props in enumerate([(self.cubes[0], self.pads[0]), (self.cubes[1], self.pads[1])]
                                     + [(d,) for d in self.distractors]):
            for prop in props:
                self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped (either cube), a_in_bin, b_in_bin bool (N,); a/b/tcp poses (N,
        7), a/b bin positions (N, 3), tcp_to_a, tcp_to_b, a_to_bin, b_to_bin (N, 3), world frame."""
        xp = self.xp
        a, b = (cube.state_in(xp).pose for cube in self.cubes)
        bin_a, bin_b = (container.state_in(xp).root_pose for container in self.bins)
        tcp = self.tcp_pose()
        grasped_a = self.agent.is_grasping(self.cubes[0], xp=xp)
        grasped_b = self.agent.is_grasping(self.cubes[1], xp=xp)
        box = self.cfg.bin
        a_in, b_in = in_bin(a, bin_a, box), in_bin(b, bin_b, box)
        swapped = in_bin(a, bin_b, box) | in_bin(b, bin_a, box)
        return {
            "success": a_in & b_in & ~grasped_a & ~grasped_b,
            "fail": swapped | self.out_of_reach(a[:, :3]) | self.out_of_reach(b[:, :3]),
            "is_grasped": grasped_a | grasped_b,
            "a_grasped": grasped_a,
            "b_grasped": grasped_b,
            "a_in_bin": a_in,
            "b_in_bin": b_in,
            "a_pose": a,
            "b_pose": b,
            "tcp_pose": tcp,
            "a_bin_pos": bin_a[:, :3],
            "b_bin_pos": bin_b[:, :3],
            "tcp_to_a": a[:, :3] - tcp[:, :3],
            "tcp_to_b": b[:, :3] - tcp[:, :3],
            "a_to_bin": bin_a[:, :3] - a[:, :3],
            "b_to_bin": bin_b[:, :3] - b[:, :3],
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """placed + reach + grasp + carry terms (module docstring), ``success_reward`` on success,
        0 on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        on_b = info["a_in_bin"][:, None]  # A is in: work on B
        cube = xp.where(on_b, info["b_pose"][:, :3], info["a_pose"][:, :3])
        carry_point = xp.where(on_b, info["b_bin_pos"], info["a_bin_pos"])
        carry_point[:, 2] = carry_point[:, 2] + k.carry_height
        grasped = as_float32(xp.where(on_b[:, 0], info["b_grasped"], info["a_grasped"]))
        info["reward_terms"] = {
            "placed": as_float32(info["a_in_bin"]) + as_float32(info["b_in_bin"]),
            "reach": 1 - xp.tanh(norm(cube - info["tcp_pose"][:, :3]) * k.reach_scale),
            "grasp": grasped,
            "carry": grasped * (1 - xp.tanh(norm(carry_point - cube) * k.carry_scale)),
        }
        dense = xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["fail"] & ~info["success"], 0.0, dense)

    def instructions(self) -> list[str]:
        """"Put the <colour> <shape> in the <colour> bin and the <colour> <shape> in the <colour>
        bin." per env (``SuiteEnv``)."""
        return [f"Put the {a} {shape} in the {a} bin and the {b} {shape} in the {b} bin."
                for a, b, shape in zip(self.color_names(0), self.color_names(1), self.shape_names(self.cubes[0]))]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "a_pose": self.local(info["a_pose"]),
            "b_pose": self.local(info["b_pose"]),
            "a_bin_pos": self.local(info["a_bin_pos"]),
            "b_bin_pos": self.local(info["b_bin_pos"]),
            "tcp_to_a": info["tcp_to_a"],
            "tcp_to_b": info["tcp_to_b"],
            "a_to_bin": info["a_to_bin"],
            "b_to_bin": info["b_to_bin"],
        }


@register_env("SO100Sort-v1", max_episode_steps=SO101SortConfig.max_episode_steps)
class SO100SortEnv(SO101SortEnv):
    """SO101Sort-v1 with the SO-100 arm."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
