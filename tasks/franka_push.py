"""FrankaPush-v1: push a cube into a goal region on the floor with a Franka Panda.

Goal: slide the 0.04 m, 0.05 kg cube until its centre lies within ``goal_radius`` (0.06 m, in
the plane) of the goal region's centre, drawn as a flat disc on the floor. The Panda's base sits
at the env origin; it may push, nudge or carry the cube, any way that ends with the cube there.

Randomisation per reset env (env-local metres): cube x in 0.45 +- 0.10, y in 0 +- 0.15, upright,
zero velocity; the goal lies ``goal_distance`` in [0.10, 0.20] from the cube, in a direction
within +-45 degrees of +x (away from the robot); the robot returns to its rest pose at rest.

Success: ``|cube xy - goal xy| <= goal_radius``; fail: the cube ends farther than ``reach_limit``
(0.8 m, in the plane) from the robot's base, where the arm can no longer touch it. Either
terminates the episode; it is truncated after ``max_episode_steps`` (100) steps.

Observation (``state``): agent qpos (9), qvel (9); extra: TCP pose (7), cube pose (7), goal
position (3), all env-local; TCP-to-cube (3) and cube-to-goal (3) vectors -> 41 floats.

Dense reward = ``reach + push`` terms (weights in the config), ``success_reward`` on success;
``normalized_dense = dense / success_reward`` in [0, 1]. The reach term pulls the TCP to a point
``push_offset`` behind the cube, on the far side from the goal. Every term is in ``info``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from simulo_envs.authoring import Cuboid, Cylinder, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import register_env
from simulo_envs.prop import Prop
from simulo_envs.tensors import tensor_constants


@dataclass(frozen=True)
class FrankaPushConfig:
    """Every tunable of FrankaPush-v1, with units; env-local metres."""

    cube_size: float = 0.04         # cube edge [m]
    cube_mass: float = 0.05         # [kg]
    spawn_x: float = 0.45           # env-local cube spawn [m]
    spawn_y: float = 0.0
    x_range: float = 0.10           # +- x randomisation around the spawn [m]
    y_range: float = 0.15           # +- y randomisation around the spawn [m]
    goal_distance: tuple[float, float] = (0.10, 0.20)  # goal's distance from the cube [m]
    goal_angle: float = math.pi / 4  # +- direction of the goal from the cube, about +x [rad]
    goal_radius: float = 0.06       # success: cube centre this close to the goal, in the plane [m]
    reach_limit: float = 0.8        # fail: cube farther than this from the base, in the plane [m]
    push_offset: float = 0.04       # reach target: this far behind the cube centre [m]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * |tcp - push point|) [1/m]
    push_scale: float = 5.0         # push term = 1 - tanh(push_scale * |cube - goal|) [1/m]
    reach_weight: float = 1.0
    push_weight: float = 2.0
    success_reward: float = 4.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100


@register_env("FrankaPush-v1", max_episode_steps=FrankaPushConfig.max_episode_steps)
class FrankaPushEnv(BaseEnv):
    """Push a cube into a goal region (see the module docstring)."""

    SUPPORTED_ROBOTS = ("panda",)
    default_robot_uids = "panda"  # built by BaseEnv._load_agent
    default_control_mode = "pd_joint_delta_pos"
    cfg = FrankaPushConfig()
    default_max_episode_steps = cfg.max_episode_steps

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        self.scene.add_ground()
        self.cube = self.scene.add(Prop(Cuboid(
            "Cube", (cfg.cube_size,) * 3, Pose([cfg.spawn_x, cfg.spawn_y, cfg.cube_size / 2]),
            Physics.rigid(mass=cfg.cube_mass), Material(color=(0.85, 0.15, 0.1)))), at="/World/Cube")
        self.goal = self.scene.add(Prop(Cylinder(  # a flat disc on the floor, seen by cameras only
            "Goal", cfg.goal_radius, 0.002, Pose([cfg.spawn_x + 0.15, cfg.spawn_y, 0.001]),
            Physics.kinematic(), Material(color=(0.1, 0.7, 0.2)), collision=False)), at="/World/Goal")

    def _after_reconfigure(self, options: dict) -> None:
        self.k = tensor_constants(self.cfg, self.device)  # the config as 0-dim tensors, for per-step math
        self._goal_pos = self.goal.default_pose[:, :3].clone()  # world frame (N, 3)

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, count, rng = self.cfg, len(env_idx), self.episode_rng
        pose = self.cube.default_pose[env_idx].clone()
        pose[:, 0] += rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        pose[:, 1] += rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        self.cube.set_pose(pose, env_ids=env_idx)
        self.cube.set_velocity(torch.zeros(count, 6, device=self.device), env_ids=env_idx)
        distance = rng.uniform(env_idx, *cfg.goal_distance, device=self.device)
        angle = rng.uniform(env_idx, -cfg.goal_angle, cfg.goal_angle, device=self.device)
        goal = self.goal.default_pose[env_idx].clone()
        goal[:, 0] = pose[:, 0] + distance * torch.cos(angle)
        goal[:, 1] = pose[:, 1] + distance * torch.sin(angle)
        self.goal.set_pose(goal, env_ids=env_idx)
        self._goal_pos[env_idx] = goal[:, :3]
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail bool (N,); cube/tcp poses (N, 7), tcp_to_cube, cube_to_goal (N, 3), world frame."""
        k = self.k
        cube_pose = self.cube.state.pose
        tcp_pose = self.agent.tcp_pose
        cube_to_goal = self._goal_pos - cube_pose[:, :3]
        cube_to_goal[:, 2] = 0.0  # the goal is a region on the floor
        from_base = (cube_pose[:, :2] - self._env_origins[:, :2]).norm(dim=1)
        return {
            "success": cube_to_goal.norm(dim=1) <= k.goal_radius,
            "fail": from_base > k.reach_limit,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": cube_pose[:, :3] - tcp_pose[:, :3],
            "cube_to_goal": cube_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """reach + push terms (weights in the config), ``success_reward`` on success; float32 (N,);
        the terms go to ``info["reward_terms"]``."""
        k = self.k
        to_goal = info["cube_to_goal"]
        direction = to_goal / to_goal.norm(dim=1, keepdim=True).clamp_min(1e-6)
        push_point = info["cube_pose"][:, :3] - direction * k.push_offset
        reach = 1 - torch.tanh((push_point - info["tcp_pose"][:, :3]).norm(dim=1) * k.reach_scale)
        push = 1 - torch.tanh(to_goal.norm(dim=1) * k.push_scale)
        info["reward_terms"] = {"reach": reach, "push": push}
        dense = k.reach_weight * reach + k.push_weight * push
        return dense.masked_fill_(info["success"], self.cfg.success_reward)

    def compute_normalized_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """Dense reward / ``success_reward``: float32 (N,) in [0, 1]."""
        return self.compute_dense_reward(obs, action, info) / self.k.success_reward

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": info["tcp_pose"] - self._origin_poses,  # env-local
            "cube_pose": info["cube_pose"] - self._origin_poses,
            "goal_pos": self._goal_pos - self._env_origins,
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_goal": info["cube_to_goal"],
        }
