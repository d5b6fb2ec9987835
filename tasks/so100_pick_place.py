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
only while the cube is grasped. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.authoring import Material, Physics, Pose, Sphere
from simulo_envs.envs.registration import register_env
from simulo_envs.envs.sensors import CameraConfig, look_at
from simulo_envs.geometry import norm
from simulo_envs.prop import Prop
from simulo_envs.tasks.tabletop import TableTopConfig, TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO100PickPlaceConfig(TableTopConfig):
    """Every tunable of SO100PickPlace-v1, with units; env-local metres (``reach_weight`` and
    ``success_reward`` (5) are ``TableTopConfig``'s defaults)."""

    cube_size: float = 0.025        # cube edge [m]
    cube_mass: float = 0.01         # [kg]
    spawn_x: float = 0.265          # env-local cube spawn, also the centre of the goal's x-y range [m]
    x_range: float = 0.03           # +- x randomisation of the cube and the goal [m]
    y_range: float = 0.08           # +- y randomisation of the cube and the goal [m]
    goal_z: tuple[float, float] = (0.04, 0.10)  # goal height above the floor [m]
    goal_radius: float = 0.015      # success: cube centre this close to the goal [m]
    reach_min: float = 0.08         # fail: cube centre nearer the base than this, in the plane [m]
    reach_max: float = 0.40         # fail: cube centre farther from the base than this, in the plane [m]
    reach_scale: float = 10.0       # reach term = 1 - tanh(reach_scale * |tcp - cube|) [1/m]
    place_scale: float = 10.0       # place term = grasped * (1 - tanh(place_scale * |cube - goal|)) [1/m]
    grasp_weight: float = 1.0
    place_weight: float = 2.0
    max_episode_steps: int = 80


@register_env("SO100PickPlace-v1", max_episode_steps=SO100PickPlaceConfig.max_episode_steps)
class SO100PickPlaceEnv(TableTopEnv):
    """Carry a cube to a goal point in the air with the SO-100 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
    cfg = SO100PickPlaceConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        return [CameraConfig("base_camera", look_at([0.42, 0.16, 0.2], [0.23, 0.0, 0.02]), 128, 128, 1.0)]

    @property
    def _default_human_render_camera_configs(self) -> list[CameraConfig]:
        return [CameraConfig("render_camera", look_at([0.48, 0.34, 0.3], [0.15, 0.0, 0.07]), 512, 512, 0.9)]

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        self.cube = self.add_cube("Cube", cfg.cube_size, cfg.cube_mass)
        self.goal = self.scene.add(Prop(Sphere(  # a marker for people: no collision, hidden from sensors
            "Goal", cfg.goal_radius, Pose([cfg.spawn_x, cfg.spawn_y, sum(cfg.goal_z) / 2]),
            Physics.kinematic(), Material(color=(0.1, 0.8, 0.2)), collision=False)), at="/World/Goal")
        self.hide(self.goal)

    def _after_reconfigure(self, options: dict) -> None:
        self.goal_pos = self.goal.default_pose[:, :3].clone()  # world frame (N, 3)

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, rng = self.cfg, self.episode_rng
        self.spawn(self.cube, env_idx)
        goal = self.goal.default_pose[env_idx].clone()
        goal[:, 0] += rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        goal[:, 1] += rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        goal[:, 2] = self.scene.env_origins[env_idx, 2] + rng.uniform(env_idx, *cfg.goal_z, device=self.device)
        self.goal.set_pose(goal, env_ids=env_idx)
        self.goal_pos[env_idx] = goal[:, :3]
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped bool (N,); cube/tcp poses (N, 7), tcp_to_cube, cube_to_goal
        (N, 3), world frame."""
        k = self.k
        cube_pose, tcp_pose = self.cube.state_in(self.xp).pose, self.tcp_pose()
        cube_to_goal = self.as_xp(self.goal_pos) - cube_pose[:, :3]
        planar = norm(self.local(cube_pose[:, :3])[:, :2])
        return {
            "success": norm(cube_to_goal) <= k.goal_radius,
            "fail": (planar < k.reach_min) | (planar > k.reach_max),
            "is_grasped": self.agent.is_grasping(self.cube, xp=self.xp),
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": cube_pose[:, :3] - tcp_pose[:, :3],
            "cube_to_goal": cube_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place terms (weights in the config), ``success_reward`` on success, 0
        on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        grasped = as_float32(info["is_grasped"])
        reach = 1 - xp.tanh(norm(info["tcp_to_cube"]) * k.reach_scale)
        place = grasped * (1 - xp.tanh(norm(info["cube_to_goal"]) * k.place_scale))
        info["reward_terms"] = {"reach": reach, "grasp": grasped, "place": place}
        dense = xp.where(info["fail"], 0.0, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["success"], k.success_reward, dense)

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "goal_pos": self.local(self.as_xp(self.goal_pos)),
            "tcp_to_cube": info["tcp_to_cube"],
            "cube_to_goal": info["cube_to_goal"],
            "is_grasped": info["is_grasped"],
        }
