"""SO100PickPlace-v1: carry a cube to a goal point in the air with LeRobot's SO-100 arm.

Goal: grasp the 25 mm, 10 g cube and bring its centre within ``goal_radius`` (15 mm, ManiSkill's
SO-100 PickCube threshold 1.25 x the cube's half size) of a goal point above the floor. The goal
is drawn as a small green sphere in ``render()`` images only: sensor cameras never see it; the
policy gets its position in the state. The arm's base sits at the env origin facing +x.

Randomisation per reset env (env-local metres): cube x in 0.265 +- 0.03, y in 0 +- 0.08, upright,
zero velocity (SO100Lift-v1's region); goal x in 0.265 +- 0.03, y in 0 +- 0.08 (independent of
the cube), z in [0.04, 0.10]; the robot returns to its rest pose.

Success: ``|cube - goal| <= goal_radius``, read from the cube's own pose. Fail: the cube's centre
left the reachable ring around the base (planar distance outside [0.08, 0.40] m). The episode
terminates on either; it is truncated after ``max_episode_steps`` (80).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), cube pose (7), goal
position (3), all env-local; TCP-to-cube (3) and cube-to-goal (3) vectors, is_grasped (1) -> 36.

Dense reward = ``reach + grasp + place`` terms (weights in the config), ``success_reward`` on
success, 0 on fail; ``normalized_dense = dense / success_reward`` in [0, 1]. ``place`` counts
only while the cube is grasped. Every term is in ``info["reward_terms"]``. The predicates and the
reward terms are FrankaPickPlace-v1's (``place_predicates``, ``place_reward_terms``) with this
task's numbers, plus the fail ring.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.franka_pick_place import place_predicates, place_reward_terms
from simulo_envs.tasks.so100_tabletop import SO100TableTopConfig, SO100TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO100PickPlaceConfig(SO100TableTopConfig):
    """Every tunable of SO100PickPlace-v1, with units; env-local metres. The cube, its spawn
    region (also the goal's x-y range), the reach ring, the reach term and
    ``max_episode_steps`` (80) are ``SO100TableTopConfig``'s."""

    goal_z: tuple[float, float] = (0.04, 0.10)  # goal height above the floor [m]
    goal_radius: float = 0.015      # success: cube centre this close to the goal [m]
    place_scale: float = 10.0       # place term = grasped * (1 - tanh(place_scale * |cube - goal|)) [1/m]
    place_weight: float = 2.0


@register_env("SO100PickPlace-v1", max_episode_steps=SO100PickPlaceConfig.max_episode_steps)
class SO100PickPlaceEnv(SO100TableTopEnv):
    """Carry a cube to a goal point in the air with the SO-100 (see the module docstring)."""

    cfg = SO100PickPlaceConfig()
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
        """success, fail, is_grasped bool (N,); cube/tcp poses (N, 7), tcp_to_cube, cube_to_goal
        (N, 3), world frame."""
        cube_pose, tcp_pose = self.cube.state_in(self.xp).pose, self.tcp_pose()
        success, tcp_to_cube, cube_to_goal = place_predicates(cube_pose, tcp_pose, self.goal_pos, self.k)
        return {
            "success": success,
            "fail": self.out_of_reach(cube_pose[:, :3]),
            "is_grasped": self.agent.is_grasping(self.cube, xp=self.xp),
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": tcp_to_cube,
            "cube_to_goal": cube_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place terms (weights in the config), ``success_reward`` on success, 0
        on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        info["reward_terms"] = place_reward_terms(xp, k, info["tcp_to_cube"], info["cube_to_goal"],
                                                  as_float32(info["is_grasped"]))
        dense = xp.where(info["fail"], 0.0, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["success"], k.success_reward, dense)

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "goal_pos": self.local(self.goal_pos),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_goal": info["cube_to_goal"],
            "is_grasped": info["is_grasped"],
        }
