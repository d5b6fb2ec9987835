"""SO100Lift-v1: lift a cube with LeRobot's SO-100 arm.

Goal: grasp the 25 mm, 10 g cube (sized for the SO-100's jaws, as ManiSkill's SO-100 tasks) and
raise its centre at least ``lift_height`` (0.05 m) above its spawn height. The arm's base sits at
the env origin facing +x (``agents/so100.py``); the cube spawns at (0.265, 0, 0.0125) env-local,
under the TCP's rest position.

Randomisation per reset env (env-local metres): cube x in 0.265 +- 0.03, y in 0 +- 0.08, upright,
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
``info["reward_terms"]``. The predicates and the reward are FrankaLift-v1's (``lift_predicates``,
``lift_reward``) with this task's numbers, plus the fail ring.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulo_envs.envs.registration import register_env
from simulo_envs.envs.sensors import CameraConfig, look_at
from simulo_envs.geometry import norm
from simulo_envs.tasks.franka_lift import lift_predicates, lift_reward
from simulo_envs.tasks.tabletop import TableTopConfig, TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO100LiftConfig(TableTopConfig):
    """Every tunable of SO100Lift-v1, with units; env-local metres (``reach_weight`` and
    ``success_reward`` (5) are ``TableTopConfig``'s defaults)."""

    cube_size: float = 0.025        # cube edge [m]
    cube_mass: float = 0.01         # [kg]
    spawn_x: float = 0.265          # env-local cube spawn [m]
    x_range: float = 0.03           # +- x randomisation around the spawn [m]
    y_range: float = 0.08           # +- y randomisation around the spawn [m]
    lift_height: float = 0.05       # success: cube centre this far above its spawn height [m]
    reach_min: float = 0.08         # fail: cube centre nearer the base than this, in the plane [m]
    reach_max: float = 0.40         # fail: cube centre farther from the base than this, in the plane [m]
    reach_scale: float = 10.0       # reach term = 1 - tanh(reach_scale * |tcp - cube|) [1/m]
    lift_scale: float = 20.0        # lift term = grasp * (1 - tanh(lift_scale * height still to go)) [1/m]
    grasp_weight: float = 1.0
    lift_weight: float = 2.0
    max_episode_steps: int = 80


@register_env("SO100Lift-v1", max_episode_steps=SO100LiftConfig.max_episode_steps)
class SO100LiftEnv(TableTopEnv):
    """Lift a cube with the SO-100 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
    cfg = SO100LiftConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        return [CameraConfig("base_camera", look_at([0.42, 0.16, 0.2], [0.23, 0.0, 0.02]), 128, 128, 1.0)]

    @property
    def _default_human_render_camera_configs(self) -> list[CameraConfig]:
        return [CameraConfig("render_camera", look_at([0.48, 0.34, 0.3], [0.15, 0.0, 0.07]), 512, 512, 0.9)]

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the ground
        self.block = self.add_cube("Block", self.cfg.cube_size, self.cfg.cube_mass)

    def _after_reconfigure(self, options: dict) -> None:
        self.spawn_z = self.block.default_pose[:, 2]  # world frame, per env

    def _initialize_episode(self, env_idx, options: dict) -> None:
        self.spawn(self.block, env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped bool (N,); height_gain (N,) m; block (the cube) and TCP
        poses (N, 7) and tcp_to_block (N, 3), world frame (FrankaLift-v1's names: one expert
        drives both)."""
        k = self.k
        block_pose, tcp_pose = self.block.state_in(self.xp).pose, self.tcp_pose()
        success, height_gain, tcp_to_block = lift_predicates(block_pose, tcp_pose, self.as_xp(self.spawn_z), k)
        planar = norm(self.local(block_pose[:, :3])[:, :2])
        return {
            "success": success,
            "fail": (planar < k.reach_min) | (planar > k.reach_max),
            "is_grasped": self.agent.is_grasping(self.block, xp=self.xp),
            "height_gain": height_gain,
            "block_pose": block_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_block": tcp_to_block,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success, 0 on
        fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        grasped = as_float32(info["is_grasped"])
        dense, info["reward_terms"] = lift_reward(self.xp, self.k, info["tcp_to_block"], info["height_gain"], grasped,
                                                  info["success"])
        return self.xp.where(info["fail"] & ~info["success"], 0.0, dense)

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "block_pose": self.local(info["block_pose"]),
            "tcp_to_block": info["tcp_to_block"],
            "is_grasped": info["is_grasped"],
        }
