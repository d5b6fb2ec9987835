"""FrankaStack-v1: place one cube on another with a Franka Panda, and let go.

Goal: pick cube A (red, 0.04 m, 0.05 kg) and leave it resting on cube B (green, same size), with
the gripper open. The Panda's base sits at the env origin.

Randomisation per reset env (env-local metres): cube A x in 0.5 +- 0.05, y in 0 +- 0.10; cube B
``separation`` in [0.10, 0.15] from A in the plane, in a uniformly drawn direction; both upright
with zero velocity; the robot returns to its rest pose at rest.

Success: A's centre within ``xy_tolerance`` (0.02 m) of B's in the plane and one cube edge
(+- ``z_tolerance``, 0.01 m) above it, A not grasped and A's speed below ``static_speed``
(0.05 m/s). The episode terminates on success; it is truncated after ``max_episode_steps`` (120)
steps. There is no fail state.

Observation (``state``): agent qpos (9), qvel (9); extra: TCP pose (7), A pose (7), B pose (7),
all env-local; TCP-to-A (3) and A-to-B-top (3) vectors, is_grasped (1) -> 46 floats.

Dense reward = ``reach + grasp + place + release`` terms (weights in the config),
``success_reward`` on success; ``normalized_dense = dense / success_reward`` in [0, 1]. ``place``
pulls the grasped A to its resting place on B; ``release`` pays for letting go of A once it
rests there. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import register_env
from simulo_envs.prop import Prop
from simulo_envs.tensors import tensor_constants


@dataclass(frozen=True)
class FrankaStackConfig:
    """Every tunable of FrankaStack-v1, with units; env-local metres."""

    cube_size: float = 0.04         # edge of both cubes [m]
    cube_mass: float = 0.05         # [kg]
    spawn_x: float = 0.5            # env-local spawn of cube A [m]
    spawn_y: float = 0.0
    x_range: float = 0.05           # +- x randomisation of A [m]
    y_range: float = 0.10           # +- y randomisation of A [m]
    separation: tuple[float, float] = (0.10, 0.15)  # B's distance from A in the plane [m]
    xy_tolerance: float = 0.02      # success: A's centre this close to B's in the plane [m]
    z_tolerance: float = 0.01       # success: A's centre one edge +- this above B's [m]
    static_speed: float = 0.05      # success: A slower than this [m/s]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * |tcp - A|) [1/m]
    place_scale: float = 5.0        # place term = grasped * (1 - tanh(place_scale * |A - top of B|)) [1/m]
    reach_weight: float = 1.0
    grasp_weight: float = 1.0
    place_weight: float = 2.0
    release_weight: float = 1.0     # release term = A on B and not grasped
    success_reward: float = 6.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 120


@register_env("FrankaStack-v1", max_episode_steps=FrankaStackConfig.max_episode_steps)
class FrankaStackEnv(BaseEnv):
    """Stack cube A on cube B (see the module docstring)."""

    SUPPORTED_ROBOTS = ("panda",)
    default_robot_uids = "panda"  # built by BaseEnv._load_agent
    default_control_mode = "pd_joint_delta_pos"
    cfg = FrankaStackConfig()
    default_max_episode_steps = cfg.max_episode_steps

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        self.scene.add_ground()
        cube = lambda name, y, color: self.scene.add(Prop(Cuboid(  # noqa: E731
            name, (cfg.cube_size,) * 3, Pose([cfg.spawn_x, y, cfg.cube_size / 2]),
            Physics.rigid(mass=cfg.cube_mass), Material(color=color))), at=f"/World/{name}")
        self.cube_a = cube("CubeA", cfg.spawn_y, (0.85, 0.15, 0.1))
        self.cube_b = cube("CubeB", cfg.spawn_y + 0.1, (0.1, 0.7, 0.2))

    def _after_reconfigure(self, options: dict) -> None:
        self.k = tensor_constants(self.cfg, self.device)  # the config as 0-dim tensors, for per-step math

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, count, rng = self.cfg, len(env_idx), self.episode_rng
        a = self.cube_a.default_pose[env_idx].clone()
        a[:, 0] += rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        a[:, 1] += rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        distance = rng.uniform(env_idx, *cfg.separation, device=self.device)
        angle = rng.uniform(env_idx, -math.pi, math.pi, device=self.device)
        b = a.clone()
        b[:, 0] += distance * torch.cos(angle)
        b[:, 1] += distance * torch.sin(angle)
        zeros = torch.zeros(count, 6, device=self.device)
        for cube, pose in ((self.cube_a, a), (self.cube_b, b)):
            cube.set_pose(pose, env_ids=env_idx)
            cube.set_velocity(zeros, env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, is_grasped, a_on_b bool (N,); A/B/tcp poses (N, 7), tcp_to_a and a_to_place
        (from A to its resting place on B) (N, 3), world frame."""
        k = self.k
        a_pose, b_pose = self.cube_a.state.pose, self.cube_b.state.pose
        tcp_pose = self.agent.tcp_pose
        offset = a_pose[:, :3] - b_pose[:, :3]
        a_on_b = (offset[:, :2].norm(dim=1) <= k.xy_tolerance) & ((offset[:, 2] - k.cube_size).abs() <= k.z_tolerance)
        grasped = self.agent.is_grasping(self.cube_a)
        static = self.cube_a.state.linear_velocity.norm(dim=1) < k.static_speed
        a_to_place = b_pose[:, :3] - a_pose[:, :3]
        a_to_place[:, 2] += k.cube_size
        return {
            "success": a_on_b & ~grasped & static,
            "is_grasped": grasped,
            "a_on_b": a_on_b,
            "a_pose": a_pose,
            "b_pose": b_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_a": a_pose[:, :3] - tcp_pose[:, :3],
            "a_to_place": a_to_place,
        }

    def compute_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """reach + grasp + place + release terms (weights in the config), ``success_reward`` on
        success; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k = self.k
        grasped = info["is_grasped"].to(torch.float32)
        reach = 1 - torch.tanh(info["tcp_to_a"].norm(dim=1) * k.reach_scale)
        place = 1 - torch.tanh(info["a_to_place"].norm(dim=1) * k.place_scale)
        released = (info["a_on_b"] & ~info["is_grasped"]).to(torch.float32)
        place = torch.maximum(grasped * place, released)  # letting go on B keeps the place term
        info["reward_terms"] = {"reach": torch.maximum(reach, released), "grasp": torch.maximum(grasped, released),
                                "place": place, "release": released}
        terms = info["reward_terms"]
        dense = (k.reach_weight * terms["reach"] + k.grasp_weight * terms["grasp"] + k.place_weight * place
                 + k.release_weight * released)
        return dense.masked_fill_(info["success"], self.cfg.success_reward)

    def compute_normalized_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """Dense reward / ``success_reward``: float32 (N,) in [0, 1]."""
        return self.compute_dense_reward(obs, action, info) / self.k.success_reward

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": info["tcp_pose"] - self._origin_poses,  # env-local
            "a_pose": info["a_pose"] - self._origin_poses,
            "b_pose": info["b_pose"] - self._origin_poses,
            "tcp_to_a": info["tcp_to_a"],
            "a_to_place": info["a_to_place"],
            "is_grasped": info["is_grasped"],
        }
