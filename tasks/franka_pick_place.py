"""FrankaPickPlace-v1: carry a cube to a goal point in the air with a Franka Panda.

Goal: grasp the 0.04 m, 0.05 kg cube and bring its centre within ``goal_radius`` (0.025 m) of a
goal point above the floor. The goal is drawn as a small green sphere in ``render()`` images
only: sensor cameras (visual observations) never see it; the policy gets its position in the
state. The Panda's base sits at the env origin.

Randomisation per reset env (env-local metres): cube x in 0.45 +- 0.10, y in 0 +- 0.15, upright,
zero velocity; goal x in 0.45 +- 0.10, y in 0 +- 0.15 (independent of the cube), z in
[0.10, 0.30]; the robot returns to its rest pose at rest.

Success: ``|cube - goal| <= goal_radius``, read from the cube's own pose. The episode terminates
on success; it is truncated after ``max_episode_steps`` (100) steps. There is no fail state.

Observation (``state``): agent qpos (9), qvel (9); extra: TCP pose (7), cube pose (7), goal
position (3), all env-local; TCP-to-cube (3) and cube-to-goal (3) vectors, is_grasped (1) -> 42.

Dense reward = ``reach + grasp + place`` terms (weights in the config), ``success_reward`` on
success; ``normalized_dense = dense / success_reward`` in [0, 1]. ``place`` counts only while
the cube is grasped. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.tasks.tabletop import TableTopConfig, TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class FrankaPickPlaceConfig(TableTopConfig):
    """Every tunable of FrankaPickPlace-v1, with units; env-local metres (the reach term,
    ``success_reward`` (5) and ``max_episode_steps`` (100) are ``TableTopConfig``'s defaults)."""

    cube_size: float = 0.04         # cube edge [m]
    cube_mass: float = 0.05         # [kg]
    spawn_x: float = 0.45           # env-local cube spawn, also the centre of the goal's x-y range [m]
    y_range: float = 0.15           # +- y randomisation of the cube and the goal [m] (x: +-0.10)
    goal_z: tuple[float, float] = (0.10, 0.30)  # goal height above the floor [m]
    goal_radius: float = 0.025      # success: cube centre this close to the goal [m]
    place_scale: float = 5.0        # place term = grasped * (1 - tanh(place_scale * |cube - goal|)) [1/m]
    grasp_weight: float = 1.0
    place_weight: float = 2.0


def place_predicates(cube_pose, tcp_pose, goal_pos, k) -> tuple:
    """``(success, tcp_to_cube, cube_to_goal)`` from the world poses ``(N, 7)`` of cube and TCP and
    the goal positions ``(N, 3)`` [m]: success where ``|goal - cube| <= k.goal_radius``; torch
    tensors or numpy arrays alike."""
    cube_to_goal = goal_pos - cube_pose[:, :3]
    return norm(cube_to_goal) <= k.goal_radius, cube_pose[:, :3] - tcp_pose[:, :3], cube_to_goal


def place_reward_terms(xp, k, tcp_to_cube, cube_to_goal, grasped) -> dict:
    """The dense reward's terms ``{"reach", "grasp", "place"}`` float32 ``(N,)`` (module
    docstring), with ``xp`` torch or numpy; ``grasped`` is float32 ``(N,)``."""
    reach = 1 - xp.tanh(norm(tcp_to_cube) * k.reach_scale)
    place = grasped * (1 - xp.tanh(norm(cube_to_goal) * k.place_scale))
    return {"reach": reach, "grasp": grasped, "place": place}


@register_env("FrankaPickPlace-v1", max_episode_steps=FrankaPickPlaceConfig.max_episode_steps)
class FrankaPickPlaceEnv(TableTopEnv):
    """Carry a cube to a goal point in the air (see the module docstring)."""

    cfg = FrankaPickPlaceConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone
    image_obs_extra = ("tcp_pose", "goal_pos")  # the goal point is hidden from the cameras: the command

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cube = self.add_cube("Cube", cfg.cube_size, cfg.cube_mass)
        self.goal = self.add_goal_marker(cfg.goal_radius)  # for people: no collision, hidden from sensors

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        self.spawn(self.cube, env_idx)
        self.spawn_goal(self.goal, env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, is_grasped bool (N,); cube/tcp poses (N, 7), tcp_to_cube, cube_to_goal (N, 3),
        world frame."""
        cube_pose, tcp_pose = self.cube.state_in(self.xp).pose, self.tcp_pose()
        success, tcp_to_cube, cube_to_goal = place_predicates(cube_pose, tcp_pose, self.goal_pos, self.k)
        return {
            "success": success,
            "is_grasped": self.agent.is_grasping(self.cube, xp=self.xp),
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": tcp_to_cube,
            "cube_to_goal": cube_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place terms (weights in the config), ``success_reward`` on success;
        float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        info["reward_terms"] = place_reward_terms(xp, k, info["tcp_to_cube"], info["cube_to_goal"],
                                                  as_float32(info["is_grasped"]))
        return xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "goal_pos": self.local(self.goal_pos),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_goal": info["cube_to_goal"],
            "is_grasped": info["is_grasped"],
        }
