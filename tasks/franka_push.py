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

from simulo_envs.authoring import Cylinder, Material, Physics, Pose
from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.prop import Prop
from simulo_envs.tasks.tabletop import GREEN, TableTopConfig, TableTopEnv


@dataclass(frozen=True)
class FrankaPushConfig(TableTopConfig):
    """Every tunable of FrankaPush-v1, with units; env-local metres (the reach term and
    ``max_episode_steps`` (100) are ``TableTopConfig``'s defaults)."""

    cube_size: float = 0.04         # cube edge [m]
    cube_mass: float = 0.05         # [kg]
    spawn_x: float = 0.45           # env-local cube spawn [m]
    y_range: float = 0.15           # +- y randomisation around the spawn [m] (x: +-0.10)
    goal_distance: tuple[float, float] = (0.10, 0.20)  # goal's distance from the cube [m]
    goal_angle: float = math.pi / 4  # +- direction of the goal from the cube, about +x [rad]
    goal_radius: float = 0.06       # success: cube centre this close to the goal, in the plane [m]
    reach_limit: float = 0.8        # fail: cube farther than this from the base, in the plane [m]
    push_offset: float = 0.04       # reach target: this far behind the cube centre [m]
    push_scale: float = 5.0         # push term = 1 - tanh(push_scale * |cube - goal|) [1/m]
    push_weight: float = 2.0
    success_reward: float = 4.0     # dense reward on success; also the normaliser


@register_env("FrankaPush-v1", max_episode_steps=FrankaPushConfig.max_episode_steps)
class FrankaPushEnv(TableTopEnv):
    """Push a cube into a goal region (see the module docstring)."""

    cfg = FrankaPushConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cube = self.add_cube("Cube", cfg.cube_size, cfg.cube_mass)
        self.goal = self.scene.add(Prop(Cylinder(  # a flat disc on the floor, seen by cameras only
            "Goal", cfg.goal_radius, 0.002, Pose([cfg.spawn_x + 0.15, cfg.spawn_y, 0.001]),
            Physics.kinematic(), Material(color=GREEN), collision=False)), at="/World/Goal")

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, rng = self.cfg, self.episode_rng
        pose = self.spawn(self.cube, env_idx)
        distance = rng.uniform(env_idx, *cfg.goal_distance, device=self.device)
        angle = rng.uniform(env_idx, -cfg.goal_angle, cfg.goal_angle, device=self.device)
        goal = self.goal.default_pose[env_idx].clone()
        goal[:, 0] = pose[:, 0] + distance * torch.cos(angle)
        goal[:, 1] = pose[:, 1] + distance * torch.sin(angle)
        self.goal.set_pose(goal, env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail bool (N,); cube/tcp poses (N, 7), tcp_to_cube, cube_to_goal (N, 3), world frame."""
        k = self.k
        cube_pose, tcp_pose = self.cube.state_in(self.xp).pose, self.tcp_pose()
        cube_to_goal = self.goal_pos - cube_pose[:, :3]
        cube_to_goal[:, 2] = 0.0  # the goal is a region on the floor
        from_base = norm(self.local(cube_pose[:, :3])[:, :2])
        return {
            "success": norm(cube_to_goal) <= k.goal_radius,
            "fail": from_base > k.reach_limit,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": cube_pose[:, :3] - tcp_pose[:, :3],
            "cube_to_goal": cube_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + push terms (weights in the config), ``success_reward`` on success; float32 (N,);
        the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        to_goal = info["cube_to_goal"]
        direction = to_goal / norm(to_goal)[:, None].clip(1e-6)
        push_point = info["cube_pose"][:, :3] - direction * k.push_offset
        reach = 1 - xp.tanh(norm(push_point - info["tcp_pose"][:, :3]) * k.reach_scale)
        push = 1 - xp.tanh(norm(to_goal) * k.push_scale)
        info["reward_terms"] = {"reach": reach, "push": push}
        return xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "goal_pos": self.local(self.goal_pos),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_goal": info["cube_to_goal"],
        }
