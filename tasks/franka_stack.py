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

from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.tasks.tabletop import GREEN, RED, TableTopConfig, TableTopEnv


@dataclass(frozen=True)
class FrankaStackConfig(TableTopConfig):
    """Every tunable of FrankaStack-v1, with units; env-local metres (the spawn of A at
    (0.5, 0), the reach term and its weight are ``TableTopConfig``'s defaults)."""

    cube_size: float = 0.04         # edge of both cubes [m]
    cube_mass: float = 0.05         # [kg]
    x_range: float = 0.05           # +- x randomisation of A [m]
    y_range: float = 0.10           # +- y randomisation of A [m]
    separation: tuple[float, float] = (0.10, 0.15)  # B's distance from A in the plane [m]
    xy_tolerance: float = 0.02      # success: A's centre this close to B's in the plane [m]
    z_tolerance: float = 0.01       # success: A's centre one edge +- this above B's [m]
    static_speed: float = 0.05      # success: A slower than this [m/s]
    place_scale: float = 5.0        # place term = grasped * (1 - tanh(place_scale * |A - top of B|)) [1/m]
    grasp_weight: float = 1.0
    place_weight: float = 2.0
    release_weight: float = 1.0     # release term = A on B and not grasped
    success_reward: float = 6.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 120


@register_env("FrankaStack-v1", max_episode_steps=FrankaStackConfig.max_episode_steps)
class FrankaStackEnv(TableTopEnv):
    """Stack cube A on cube B (see the module docstring)."""

    cfg = FrankaStackConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone
    episodes_from_states = True  # an episode is the cubes' and the robot's state alone

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cube_a = self.add_cube("CubeA", cfg.cube_size, cfg.cube_mass, RED)
        self.cube_b = self.add_cube("CubeB", cfg.cube_size, cfg.cube_mass, GREEN, xy=(cfg.spawn_x, cfg.spawn_y + 0.1))

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, rng = self.cfg, self.episode_rng
        a = self.spawn(self.cube_a, env_idx)
        distance = rng.uniform(env_idx, *cfg.separation, device=self.device)
        angle = rng.uniform(env_idx, -math.pi, math.pi, device=self.device)
        b = a.clone()
        b[:, 0] += distance * torch.cos(angle)
        b[:, 1] += distance * torch.sin(angle)
        self.cube_b.set_pose(b, env_ids=env_idx)
        self.cube_b.set_velocity(torch.zeros(len(env_idx), 6, device=self.device), env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, is_grasped, a_on_b bool (N,); A/B/tcp poses (N, 7), tcp_to_a and a_to_place
        (from A to its resting place on B) (N, 3), world frame."""
        k, xp = self.k, self.xp
        a_state = self.cube_a.state_in(xp)
        a_pose, b_pose, tcp_pose = a_state.pose, self.cube_b.state_in(xp).pose, self.tcp_pose()
        offset = a_pose[:, :3] - b_pose[:, :3]
        a_on_b = (norm(offset[:, :2]) <= k.xy_tolerance) & (abs(offset[:, 2] - k.cube_size) <= k.z_tolerance)
        grasped = self.agent.is_grasping(self.cube_a, xp=xp)
        static = norm(a_state.linear_velocity) < k.static_speed
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

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place + release terms (weights in the config), ``success_reward`` on
        success; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        info["reward_terms"] = self.pick_and_place_terms(info["tcp_to_a"], info["a_to_place"],
                                                         info["is_grasped"], info["a_on_b"])
        return xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "a_pose": self.local(info["a_pose"]),
            "b_pose": self.local(info["b_pose"]),
            "tcp_to_a": info["tcp_to_a"],
            "a_to_place": info["a_to_place"],
            "is_grasped": info["is_grasped"],
        }
