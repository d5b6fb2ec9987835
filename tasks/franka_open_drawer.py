"""FrankaOpenDrawer-v1: pull a drawer of a procedurally built cabinet open with a Franka Panda.

Goal: open the drawer at least ``open_distance`` (0.15 m of its 0.25 m travel). The cabinet
(``authoring.cabinet.drawer_cabinet``: 0.3 m deep, 0.4 m wide, 0.3 m tall, its front facing the
robot) stands on the floor; the drawer slides on a passive prismatic joint (friction 0.05,
damping 2 N s/m) and has a vertical bar handle 0.1 m long, to be gripped from above. The Panda's
base sits at the env origin.

Randomisation per reset env (env-local metres): cabinet centre x in 0.90 +- 0.04, y in 0 +- 0.10,
yaw about +z in +- 0.10 rad; the drawer closed and at rest; the robot returns to its rest pose.

Success: drawer qpos >= ``open_distance``. The episode terminates on success; it is truncated
after ``max_episode_steps`` (100) steps. There is no fail state.

Observation (``state``): agent qpos (9), qvel (9); extra: TCP pose (7), cabinet root pose (7),
handle position (3), all env-local; TCP-to-handle vector (3), drawer qpos (1), qvel (1) -> 40.

Dense reward = ``reach + open`` terms (weights in the config), ``success_reward`` on success;
``normalized_dense = dense / success_reward`` in [0, 1]. ``reach`` pulls the TCP to the handle's
grip point, ``open`` is the opening as a fraction of ``open_distance``. Every term is in
``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.articulated_prop import ArticulatedProp
from simulo_envs.authoring import Pose
from simulo_envs.authoring.cabinet import drawer_cabinet
from simulo_envs.envs.registration import register_env
from simulo_envs.envs.sensors import CameraConfig, look_at
from simulo_envs.geometry import norm, quat_apply
from simulo_envs.tasks.tabletop import TableTopEnv


@dataclass(frozen=True)
class FrankaOpenDrawerConfig:
    """Every tunable of FrankaOpenDrawer-v1, with units; env-local metres."""

    depth: float = 0.3              # cabinet outer extents [m]
    width: float = 0.4
    height: float = 0.3
    travel: float = 0.25            # the drawer's joint range [m]
    cabinet_x: float = 0.90         # env-local cabinet centre (on the floor); handle 0.2 m closer [m]
    cabinet_y: float = 0.0
    x_range: float = 0.04           # +- x randomisation of the cabinet [m]
    y_range: float = 0.10           # +- y randomisation of the cabinet [m]
    yaw_range: float = 0.10         # +- yaw randomisation of the cabinet about +z [rad]
    grip_height: float = 0.02       # the handle's grip point: this far above the handle's centre [m]
    open_distance: float = 0.15     # success: drawer qpos at least this [m]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * |tcp - grip point|) [1/m]
    reach_weight: float = 1.0
    open_weight: float = 2.0        # open term = clamp(qpos / open_distance, 0, 1)
    success_reward: float = 4.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100
    sensor_eye: tuple = (0.25, 0.5, 0.7)     # sensor camera, env-local [m]: beside and above the drawer's front
    sensor_target: tuple = (0.78, 0.0, 0.15)
    render_eye: tuple = (0.0, 1.3, 1.0)      # render() camera [m]: the robot and the whole cabinet in frame
    render_target: tuple = (0.5, 0.0, 0.2)


@register_env("FrankaOpenDrawer-v1", max_episode_steps=FrankaOpenDrawerConfig.max_episode_steps)
class FrankaOpenDrawerEnv(TableTopEnv):
    """Pull a cabinet's drawer open (see the module docstring)."""

    cfg = FrankaOpenDrawerConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    @property
    def _default_sensor_configs(self) -> list:
        """One 128x128 "base_camera" that sees the drawer's front and handle at reset."""
        return [CameraConfig("base_camera", look_at(self.cfg.sensor_eye, self.cfg.sensor_target), 128, 128, 1.1)]

    @property
    def _default_human_render_camera_configs(self) -> list:
        """One 512x512 "render_camera" framing the robot and the whole cabinet."""
        return [CameraConfig("render_camera", look_at(self.cfg.render_eye, self.cfg.render_target), 512, 512, 0.9)]

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        spec = drawer_cabinet("Cabinet", Pose([cfg.cabinet_x, cfg.cabinet_y, 0.0]), depth=cfg.depth,
                              width=cfg.width, height=cfg.height, travel=cfg.travel)
        self.cabinet = self.scene.add(ArticulatedProp(spec), at="/World/Cabinet")
        # The handle bar's centre in the drawer link's frame (the "handle" shape of drawer_cabinet).
        handle = next(s for s in spec.links[1].shapes if s.name == "handle")
        self.handle_local = torch.tensor(handle.pose.position, dtype=torch.float32)
        self.handle_local[2] += cfg.grip_height

    def _after_reconfigure(self, options: dict) -> None:
        self.handle_local = self.handle_local.to(self.device)
        self.outward = torch.tensor([-1.0, 0.0, 0.0], device=self.device)  # the drawer's way out, cabinet frame

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, count, rng = self.cfg, len(env_idx), self.episode_rng
        pose = self.cabinet.default_pose[env_idx].clone()
        pose[:, 0] += rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        pose[:, 1] += rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        half_yaw = rng.uniform(env_idx, -cfg.yaw_range, cfg.yaw_range, device=self.device) / 2
        pose[:, 3:] = torch.stack([half_yaw.cos(), 0 * half_yaw, 0 * half_yaw, half_yaw.sin()], dim=1)
        self.cabinet.set_pose(pose, env_ids=env_idx)
        self.cabinet.set_qpos(torch.zeros(count, 1, device=self.device), env_ids=env_idx)
        self.cabinet.set_qvel(torch.zeros(count, 1, device=self.device), env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success bool (N,); drawer_qpos, drawer_qvel (N, 1) [m, m/s]; cabinet/tcp poses (N, 7),
        handle_pos (the grip point), tcp_to_handle, open_direction (unit, the drawer's way out)
        (N, 3), world frame."""
        state = self.cabinet.state_in(self.xp)
        qpos, drawer = state.qpos, state.link_pose("drawer")
        cabinet_pose = state.root_pose
        handle = drawer[:, :3] + quat_apply(drawer[:, 3:], self.as_xp(self.handle_local))
        tcp_pose = self.tcp_pose()
        return {
            "success": qpos[:, 0] >= self.k.open_distance,
            "drawer_qpos": qpos,
            "drawer_qvel": state.qvel,
            "cabinet_pose": cabinet_pose,
            "tcp_pose": tcp_pose,
            "handle_pos": handle,
            "tcp_to_handle": handle - tcp_pose[:, :3],
            "open_direction": quat_apply(cabinet_pose[:, 3:], self.as_xp(self.outward)),
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + open terms (weights in the config), ``success_reward`` on success; float32 (N,);
        the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        reach = 1 - xp.tanh(norm(info["tcp_to_handle"]) * k.reach_scale)
        opened = (info["drawer_qpos"][:, 0] / k.open_distance).clip(0, 1)
        info["reward_terms"] = {"reach": reach, "open": opened}
        return xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cabinet_pose": self.local(info["cabinet_pose"]),
            "handle_pos": self.local(info["handle_pos"]),
            "tcp_to_handle": info["tcp_to_handle"],
            "drawer_qpos": info["drawer_qpos"],
            "drawer_qvel": info["drawer_qvel"],
        }
