"""FrankaLift-v1: lift a cube with a Franka Panda.

Goal: grasp the 0.05 m, 0.05 kg cube and raise its centre at least ``lift_height`` (0.10 m)
above its spawn height. The Panda's base sits at the env origin; the cube spawns at
(0.5, 0, 0.025) in the env-local frame.

Randomisation per reset env (env-local metres): cube x in 0.5 ± 0.10, y in 0 ± 0.20, upright,
zero velocity; the robot returns to its rest pose (``agents.panda.REST_QPOS``) at rest.

Success: ``block z - spawn z >= lift_height``, read from ``block.state.pose`` (the seed's rule: the
object's own pose is the honest evidence of a lift). The episode terminates on success; it is
truncated after ``max_episode_steps`` (100) steps.

Observation (``state``): agent qpos (9), qvel (9); extra: TCP pose (7, env-local), block pose
(7, env-local), TCP-to-block vector (3), is_grasped (1) -> 36 floats.

Dense reward = ``reach + grasp + lift`` terms (weights in the config), or ``success_reward`` on
success; ``normalized_dense = dense / success_reward`` in [0, 1]. Every term is in ``info``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import register_env
from simulo_envs.prop import Prop
from simulo_envs.tensors import tensor_constants


@dataclass(frozen=True)
class FrankaLiftConfig:
    """Every tunable of FrankaLift-v1, with units; env-local metres."""

    block_size: float = 0.05        # cube edge [m]
    block_mass: float = 0.05        # [kg]
    spawn_x: float = 0.5            # env-local cube spawn [m]
    spawn_y: float = 0.0
    x_range: float = 0.10           # +- x randomisation around the spawn [m]
    y_range: float = 0.20           # +- y randomisation around the spawn [m]
    lift_height: float = 0.10       # success: cube centre this far above its spawn height [m]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * |tcp - cube|) [1/m]
    lift_scale: float = 10.0        # lift term = grasp * (1 - tanh(lift_scale * height still to go)) [1/m]
    reach_weight: float = 1.0
    grasp_weight: float = 1.0
    lift_weight: float = 2.0
    success_reward: float = 5.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100


@register_env("FrankaLift-v1", max_episode_steps=FrankaLiftConfig.max_episode_steps)
class FrankaLiftEnv(BaseEnv):
    """Lift a cube with the Panda (see the module docstring)."""

    SUPPORTED_ROBOTS = ("panda",)
    default_robot_uids = "panda"  # built by BaseEnv._load_agent
    default_control_mode = "pd_joint_delta_pos"
    cfg = FrankaLiftConfig()
    default_max_episode_steps = cfg.max_episode_steps

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        self.scene.add_ground()
        self.block = Prop(Cuboid(
            name="Block",
            size=(cfg.block_size,) * 3,
            pose=Pose(position=[cfg.spawn_x, cfg.spawn_y, cfg.block_size / 2]),
            physics=Physics.rigid(mass=cfg.block_mass),
            material=Material(color=(0.85, 0.15, 0.1)),
        ))
        self.scene.add(self.block, at="/World/Block")

    def _after_reconfigure(self, options: dict) -> None:
        self.k = tensor_constants(self.cfg, self.device)  # the config as 0-dim tensors, for per-step math
        self._spawn_z = self.block.default_pose[:, 2]  # per env: heterogeneous props differ

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, count = self.cfg, len(env_idx)
        pose = self.block.default_pose[env_idx].clone()
        pose[:, 0] += self.episode_rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        pose[:, 1] += self.episode_rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        self.block.set_pose(pose, env_ids=env_idx)
        self.block.set_velocity(torch.zeros(count, 6), env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, is_grasped bool (N,); height_gain (N,) m; block/tcp poses (N, 7) and
        tcp_to_block (N, 3), world frame."""
        k = self.k
        block_pose = self.block.state.pose
        tcp_pose = self.agent.tcp_pose
        height_gain = block_pose[:, 2] - self._spawn_z
        return {
            "success": height_gain >= k.lift_height,
            "is_grasped": self.agent.is_grasping(self.block),
            "height_gain": height_gain,
            "block_pose": block_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_block": block_pose[:, :3] - tcp_pose[:, :3],
        }

    def compute_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success;
        float32 (N,); the terms go to ``info["reward_terms"]``."""
        k = self.k
        grasped = info["is_grasped"].to(torch.float32)
        reach = 1 - torch.tanh(torch.linalg.vector_norm(info["tcp_to_block"], dim=1) * k.reach_scale)
        to_go = (k.lift_height - info["height_gain"]).clamp_min(0)
        lift = grasped * (1 - torch.tanh(to_go * k.lift_scale))
        info["reward_terms"] = {"reach": reach, "grasp": grasped, "lift": lift}
        dense = k.reach_weight * reach + k.grasp_weight * grasped + k.lift_weight * lift
        return dense.masked_fill_(info["success"], self.cfg.success_reward)

    def compute_normalized_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """Dense reward / ``success_reward``: float32 (N,) in [0, 1]."""
        return self.compute_dense_reward(obs, action, info) / self.k.success_reward

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": info["tcp_pose"] - self._origin_poses,  # env-local
            "block_pose": info["block_pose"] - self._origin_poses,
            "tcp_to_block": info["tcp_to_block"],
            "is_grasped": info["is_grasped"],
        }
