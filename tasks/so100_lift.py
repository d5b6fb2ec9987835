"""SO100Lift-v1: lift a cube with LeRobot's SO-100 arm.

Goal: grasp the 25 mm, 10 g cube (sized for the SO-100's jaws, as ManiSkill's SO-100 tasks) and
raise its centre at least ``lift_height`` (0.05 m) above its spawn height. The arm's base sits at
the env origin facing +x (``agents/so100.py``); the cube spawns at (0.23, 0, 0.0125) env-local,
under the TCP's rest position.

Randomisation per reset env (env-local metres): cube x in 0.23 +- 0.04, y in 0 +- 0.08, upright,
zero velocity: the region where the arm grasps from above with its jaw within about 15 deg of
vertical; the robot returns to its rest pose at rest.

Success: ``cube z - spawn z >= lift_height``, read from the cube's own pose. Fail: the cube's
centre left the ring around the base the arm reaches (planar distance outside [0.08, 0.40] m; the
TCP reaches 0.06-0.40 m at table height): pushed out of reach. The episode terminates on either;
it is truncated after ``max_episode_steps`` (80).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7, env-local), cube pose
(7, env-local), TCP-to-cube vector (3), is_grasped (1) -> 30 floats.

Dense reward = ``reach + grasp + lift`` terms (weights in the config), ``success_reward`` on
success, 0 on fail; ``normalized_dense = dense / success_reward`` in [0, 1]. Every term is in
``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import register_env
from simulo_envs.envs.sensors import CameraConfig, look_at
from simulo_envs.prop import Prop
from simulo_envs.tensors import tensor_constants


@dataclass(frozen=True)
class SO100LiftConfig:
    """Every tunable of SO100Lift-v1, with units; env-local metres."""

    cube_size: float = 0.025        # cube edge [m]
    cube_mass: float = 0.01         # [kg]
    spawn_x: float = 0.265          # env-local cube spawn [m]
    spawn_y: float = 0.0
    x_range: float = 0.03           # +- x randomisation around the spawn [m]
    y_range: float = 0.08           # +- y randomisation around the spawn [m]
    lift_height: float = 0.05       # success: cube centre this far above its spawn height [m]
    reach_min: float = 0.08         # fail: cube centre nearer the base than this, in the plane [m]
    reach_max: float = 0.40         # fail: cube centre farther from the base than this, in the plane [m]
    reach_scale: float = 10.0       # reach term = 1 - tanh(reach_scale * |tcp - cube|) [1/m]
    lift_scale: float = 20.0        # lift term = grasp * (1 - tanh(lift_scale * height still to go)) [1/m]
    reach_weight: float = 1.0
    grasp_weight: float = 1.0
    lift_weight: float = 2.0
    success_reward: float = 5.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 80


@register_env("SO100Lift-v1", max_episode_steps=SO100LiftConfig.max_episode_steps)
class SO100LiftEnv(BaseEnv):
    """Lift a cube with the SO-100 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
    default_control_mode = "pd_joint_delta_pos"
    cfg = SO100LiftConfig()
    default_max_episode_steps = cfg.max_episode_steps

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        return [CameraConfig("base_camera", look_at([0.42, 0.16, 0.2], [0.23, 0.0, 0.02]), 128, 128, 1.0)]

    @property
    def _default_human_render_camera_configs(self) -> list[CameraConfig]:
        return [CameraConfig("render_camera", look_at([0.48, 0.34, 0.3], [0.15, 0.0, 0.07]), 512, 512, 0.9)]

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        self.scene.add_ground()
        self.block = self.scene.add(Prop(Cuboid(
            "Block", (cfg.cube_size,) * 3, Pose([cfg.spawn_x, cfg.spawn_y, cfg.cube_size / 2]),
            Physics.rigid(mass=cfg.cube_mass), Material(color=(0.85, 0.15, 0.1)))), at="/World/Block")

    def _after_reconfigure(self, options: dict) -> None:
        self.k = tensor_constants(self.cfg, self.device)  # the config as 0-dim tensors, for per-step math
        self._spawn_z = self.block.default_pose[:, 2]  # world frame, per env

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, count = self.cfg, len(env_idx)
        pose = self.block.default_pose[env_idx].clone()
        pose[:, 0] += self.episode_rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        pose[:, 1] += self.episode_rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        self.block.set_pose(pose, env_ids=env_idx)
        self.block.set_velocity(torch.zeros(count, 6, device=self.device), env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped bool (N,); height_gain (N,) m; block (the cube) and TCP
        poses (N, 7) and tcp_to_block (N, 3), world frame (FrankaLift-v1's names: one expert
        drives both)."""
        k = self.k
        block_pose = self.block.state.pose
        tcp_pose = self.agent.tcp_pose
        height_gain = block_pose[:, 2] - self._spawn_z
        planar = (block_pose[:, :2] - self._env_origins[:, :2]).norm(dim=1)
        return {
            "success": height_gain >= k.lift_height,
            "fail": (planar < k.reach_min) | (planar > k.reach_max),
            "is_grasped": self.agent.is_grasping(self.block),
            "height_gain": height_gain,
            "block_pose": block_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_block": block_pose[:, :3] - tcp_pose[:, :3],
        }

    def compute_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success, 0 on
        fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k = self.k
        grasped = info["is_grasped"].to(torch.float32)
        reach = 1 - torch.tanh(info["tcp_to_block"].norm(dim=1) * k.reach_scale)
        to_go = (k.lift_height - info["height_gain"]).clamp(min=0.0)
        lift = grasped * (1 - torch.tanh(to_go * k.lift_scale))
        info["reward_terms"] = {"reach": reach, "grasp": grasped, "lift": lift}
        dense = k.reach_weight * reach + k.grasp_weight * grasped + k.lift_weight * lift
        dense = dense.masked_fill(info["fail"], 0.0)
        return dense.masked_fill(info["success"], self.cfg.success_reward)

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
