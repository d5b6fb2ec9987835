"""PushCubeExample-v1: push a cube 10 cm along +x with the Panda (the worked example of
``docs/writing_a_task.md``).

Goal: push the 4 cm cube until its centre is ``push_distance`` (0.10 m) further along +x than
where it started. The cube spawns at (0.45, y, 0.02) env-local, y in ±0.05 m per episode.
Success: ``cube x - start x >= push_distance``; the episode then terminates.
Option: ``reset(options={"cube_y": y})`` puts the cube at env-local ``y`` instead of a random one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.agents.panda import Panda
from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import register_env
from simulo_envs.prop import Prop
from simulo_envs.tasks.tabletop_ppo import ppo_config
from simulo_envs.tensors import tensor_constants


@dataclass(frozen=True)
class PushCubeConfig:
    """Every tunable, with units; env-local metres."""

    cube_size: float = 0.04         # edge [m]
    cube_mass: float = 0.1          # [kg]
    spawn_x: float = 0.45           # env-local spawn [m]
    y_range: float = 0.05           # +- y randomisation [m]
    push_distance: float = 0.10     # success: cube moved this far along +x [m]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * |tcp - behind cube|) [1/m]
    push_weight: float = 2.0        # push term = push_weight * progress / push_distance
    success_reward: float = 3.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 60


@register_env("PushCubeExample-v1", max_episode_steps=PushCubeConfig.max_episode_steps)
class PushCubeEnv(BaseEnv):
    """Push a cube 10 cm along +x (see the module docstring)."""

    cfg = PushCubeConfig()
    default_max_episode_steps = cfg.max_episode_steps
    reset_option_keys = ("cube_y",)  # read by _initialize_episode
    train_config = ppo_config(num_envs=64, total_timesteps=480_000)  # PPO for scripts/train.py (docs: "Train it")

    def _load_agent(self, options: dict) -> None:
        self.agent = Panda(self.scene, control_mode=self._requested_control_mode or "pd_ee_delta_pos")

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        self.scene.add_ground()
        self.cube = Prop(Cuboid(name="Cube", size=(cfg.cube_size,) * 3,
                                pose=Pose(position=[cfg.spawn_x, 0.0, cfg.cube_size / 2]),
                                physics=Physics.rigid(mass=cfg.cube_mass), material=Material(color=(0.2, 0.4, 0.9))))
        self.scene.add(self.cube, at="/World/Cube")

    def _after_reconfigure(self, options: dict) -> None:
        self.k = tensor_constants(self.cfg, self.device)
        self._start_x = self.cube.default_pose[:, 0].clone()  # world x where each episode's cube started

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        pose = self.cube.default_pose[env_idx].clone()
        if "cube_y" in options:
            pose[:, 1] += float(options["cube_y"])
        else:
            pose[:, 1] += self.episode_rng.uniform(env_idx, -self.cfg.y_range, self.cfg.y_range, device=self.device)
        self.cube.set_pose(pose, env_ids=env_idx)
        self.cube.set_velocity(torch.zeros(len(env_idx), 6), env_ids=env_idx)
        self._start_x[env_idx] = pose[:, 0]
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success bool (N,); progress (N,) [m] along +x; cube pose (N, 7) and TCP-to-pushing-point (N, 3), world frame."""
        cube_pose = self.cube.state.pose
        progress = cube_pose[:, 0] - self._start_x
        behind = cube_pose[:, :3].clone()
        behind[:, 0] -= self.k.cube_size  # where the fingers should touch the cube
        return {"success": progress >= self.k.push_distance, "progress": progress, "cube_pose": cube_pose,
                "tcp_to_behind": behind - self.agent.tcp_pose[:, :3]}

    def compute_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """reach + push terms, ``success_reward`` on success; float32 (N,); terms in ``info["reward_terms"]``."""
        k = self.k
        reach = 1 - torch.tanh(info["tcp_to_behind"].norm(dim=1) * k.reach_scale)
        push = k.push_weight * (info["progress"] / k.push_distance).clamp(0, 1)
        info["reward_terms"] = {"reach": reach, "push": push}
        return (reach + push).masked_fill_(info["success"], self.cfg.success_reward)

    def compute_normalized_dense_reward(self, obs, action, info: dict) -> torch.Tensor:
        """Dense reward / ``success_reward``: float32 (N,) in [0, 1]."""
        return self.compute_dense_reward(obs, action, info) / self.k.success_reward

    def _get_obs_extra(self, info: dict) -> dict:
        return {"cube_pose": info["cube_pose"] - self._origin_poses,  # env-local
                "tcp_to_behind": info["tcp_to_behind"], "progress": info["progress"]}
