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

The formulas (``lift_predicates``, ``lift_reward``) take torch tensors or numpy arrays: the torch
hooks below use them, and so does ``_numpy_step``, the CPU fast path of ``BaseEnv.step`` (the
same numbers from numpy's cheaper calls; ``tests/test_numpy_step.py`` compares the two).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import register_env
from simulo_envs.prop import Prop
from simulo_envs.tensors import numpy_constants, tensor_constants


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


def lift_predicates(block_pose, tcp_pose, spawn_z, k) -> tuple:
    """``(success, height_gain, tcp_to_block)`` from the world poses ``(N, 7)`` of block and TCP
    and the block's spawn height ``(N,)`` [m]; torch tensors or numpy arrays alike."""
    height_gain = block_pose[:, 2] - spawn_z
    return height_gain >= k.lift_height, height_gain, block_pose[:, :3] - tcp_pose[:, :3]


def lift_reward(xp, k, tcp_to_block, height_gain, grasped, success) -> tuple:
    """Dense reward float32 ``(N,)`` and its terms ``{"reach", "grasp", "lift"}`` (module
    docstring), with ``xp`` torch or numpy; ``grasped`` is float32 ``(N,)``."""
    reach = 1 - xp.tanh(xp.sqrt((tcp_to_block * tcp_to_block).sum(1)) * k.reach_scale)
    to_go = k.lift_height - height_gain
    lift = grasped * (1 - xp.tanh(xp.where(to_go > 0, to_go, 0.0) * k.lift_scale))
    dense = k.reach_weight * reach + k.grasp_weight * grasped + k.lift_weight * lift
    return xp.where(success, k.success_reward, dense), {"reach": reach, "grasp": grasped, "lift": lift}


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
        self._k_np, self._spawn_z_np = numpy_constants(self.cfg), self._spawn_z.cpu().numpy()
        self._origin_np = self._origin_poses.cpu().numpy()

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
        block_pose = self.block.state.pose
        tcp_pose = self.agent.tcp_pose
        success, height_gain, tcp_to_block = lift_predicates(block_pose, tcp_pose, self._spawn_z, self.k)
        return {
            "success": success,
            "is_grasped": self.agent.is_grasping(self.block),
            "height_gain": height_gain,
            "block_pose": block_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_block": tcp_to_block,
        }

    def compute_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success;
        float32 (N,); the terms go to ``info["reward_terms"]``."""
        grasped = info["is_grasped"].to(torch.float32)
        dense, info["reward_terms"] = lift_reward(torch, self.k, info["tcp_to_block"], info["height_gain"], grasped,
                                                  info["success"])
        return dense

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

    def _numpy_step(self) -> tuple[dict, np.ndarray, np.ndarray]:
        """The CPU fast path of ``BaseEnv.step``: ``evaluate``'s dict, the flat ``state``
        observation (N, 36) and the reward of ``reward_mode``, computed on the backend's numpy
        arrays with the same formulas as the hooks above."""
        k, agent, robot = self._k_np, self.agent, self.agent.robot
        block_pose = self.block._raw_state()[:, :7]
        tcp_pose = robot._raw("link_pose", robot._tcp_index)
        grasped = agent._grasping_array(self.block)
        success, height_gain, tcp_to_block = lift_predicates(block_pose, tcp_pose, self._spawn_z_np, k)
        info = {"success": success, "is_grasped": grasped, "height_gain": height_gain, "block_pose": block_pose,
                "tcp_pose": tcp_pose, "tcp_to_block": tcp_to_block}
        obs = np.concatenate([robot._raw("qpos"), robot._raw("qvel"), tcp_pose - self._origin_np,
                              block_pose - self._origin_np, tcp_to_block, grasped[:, None]], axis=1, dtype=np.float32)
        if self.reward_mode in ("dense", "normalized_dense"):
            reward, info["reward_terms"] = lift_reward(np, k, tcp_to_block, height_gain, grasped.astype(np.float32),
                                                       success)
            if self.reward_mode == "normalized_dense":
                reward = reward / k.success_reward
        else:  # sparse (this task has no fail predicate) or none
            reward = success.astype(np.float32) if self.reward_mode == "sparse" else np.zeros(len(success), np.float32)
        return info, obs, reward
