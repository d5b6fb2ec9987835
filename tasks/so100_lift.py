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
from simulo_envs.tasks.franka_lift import lift_predicates, lift_reward
from simulo_envs.tasks.so100_tabletop import SO100TableTopConfig, SO100TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO100LiftConfig(SO100TableTopConfig):
    """Every tunable of SO100Lift-v1, with units; env-local metres. The cube, its spawn region,
    the reach ring, the reach term and ``max_episode_steps`` (80) are ``SO100TableTopConfig``'s."""

    lift_height: float = 0.05       # success: cube centre this far above its spawn height [m]
    lift_scale: float = 20.0        # lift term = grasp * (1 - tanh(lift_scale * height still to go)) [1/m]
    lift_weight: float = 2.0


@register_env("SO100Lift-v1", max_episode_steps=SO100LiftConfig.max_episode_steps)
class SO100LiftEnv(SO100TableTopEnv):
    """Lift a cube with the SO-100 (see the module docstring)."""

    cfg = SO100LiftConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the ground
        self.cube = self.add_cube("Cube", self.cfg.cube_size, self.cfg.cube_mass)

    def _after_reconfigure(self, options: dict) -> None:
        self.spawn_z = self.cube.default_pose[:, 2]  # world frame, per env

    def _initialize_episode(self, env_idx, options: dict) -> None:
        self.spawn(self.cube, env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped bool (N,); height_gain (N,) m; cube and TCP poses (N, 7) and
        tcp_to_cube (N, 3), world frame."""
        cube_pose, tcp_pose = self.cube.state_in(self.xp).pose, self.tcp_pose()
        success, height_gain, tcp_to_cube = lift_predicates(cube_pose, tcp_pose, self.as_xp(self.spawn_z), self.k)
        return {
            "success": success,
            "fail": self.out_of_reach(cube_pose[:, :3]),
            "is_grasped": self.agent.is_grasping(self.cube, xp=self.xp),
            "height_gain": height_gain,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": tcp_to_cube,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success, 0 on
        fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        grasped = as_float32(info["is_grasped"])
        dense, info["reward_terms"] = lift_reward(self.xp, self.k, info["tcp_to_cube"], info["height_gain"], grasped,
                                                  info["success"])
        return self.xp.where(info["fail"] & ~info["success"], 0.0, dense)

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "tcp_to_cube": info["tcp_to_cube"],
            "is_grasped": info["is_grasped"],
        }
