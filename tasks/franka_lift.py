"""FrankaLift-v1: lift a cube with a Franka Panda.

Goal: grasp the 0.05 m, 0.05 kg cube and raise its centre at least ``lift_height`` (0.10 m)
above its spawn height. The Panda's base sits at the env origin; the cube spawns at
(0.5, 0, 0.025) in the env-local frame.

Randomisation per reset env (env-local metres): cube x in 0.5 ± 0.10, y in 0 ± 0.20, upright,
zero velocity; the robot returns to its rest pose (``agents.panda.REST_QPOS``) at rest.

Success: ``block z - spawn z >= lift_height``, read from ``block.state.pose`` (the seed's rule: the
object's own pose is the honest evidence of a lift). The episode terminates on success; it is
truncated after ``max_episode_steps`` (100) steps.

Observation (``state``): agent qpos (9), qvel (9); extra: TCP pose (7, env-local), block pose
(7, env-local), TCP-to-block vector (3), is_grasped (1) -> 36 floats.

Dense reward = ``reach + grasp + lift`` terms (weights in the config), or ``success_reward`` on
success; ``normalized_dense = dense / success_reward`` in [0, 1]. Every term is in ``info``.

The formulas (``lift_predicates``, ``lift_reward``) and the hooks compute with ``xp`` (torch, or
numpy when the framework runs the hooks on the CPU fast path: ``BaseEnv.xp_hooks``).
"""

from __future__ import annotations

from dataclasses import dataclass

from simulo_envs.envs.randomization_presets import FOV_JITTER, IMAGE_NOISE, visual_table
from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.tabletop import TableTopConfig, TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class FrankaLiftConfig(TableTopConfig):
    """Every tunable of FrankaLift-v1, with units; env-local metres. The spawn (0.5, 0), its
    ranges (+-0.10, +-0.20), the reach term, ``success_reward`` (5) and ``max_episode_steps``
    (100) are ``TableTopConfig``'s defaults."""

    block_size: float = 0.05        # cube edge [m]
    block_mass: float = 0.05        # [kg]
    lift_height: float = 0.10       # success: cube centre this far above its spawn height [m]
    lift_scale: float = 10.0        # lift term = grasp * (1 - tanh(lift_scale * height still to go)) [1/m]
    grasp_weight: float = 1.0
    lift_weight: float = 2.0
    # randomization="visual": a distractor in each box ((x, y) low, high) [m], beside the spawn region
    distractor_regions: tuple = (((0.35, 0.28), (0.65, 0.38)), ((0.35, -0.38), (0.65, -0.28)))


def lift_predicates(block_pose, tcp_pose, spawn_z, k) -> tuple:
    """``(success, height_gain, tcp_to_block)`` from the world poses ``(N, 7)`` of block and TCP
    and the block's spawn height ``(N,)`` [m]; torch tensors or numpy arrays alike."""
    height_gain = block_pose[:, 2] - spawn_z
    return height_gain >= k.lift_height, height_gain, block_pose[:, :3] - tcp_pose[:, :3]


def lift_reward(xp, k, tcp_to_block, height_gain, grasped, success) -> tuple:
    """Dense reward float32 ``(N,)`` and its terms ``{"reach", "grasp", "lift"}`` (module
    docstring), with ``xp`` torch or numpy; ``grasped`` is float32 ``(N,)``."""
    reach = 1 - xp.tanh(xp.sqrt((tcp_to_block * tcp_to_block).sum(1)) * k.reach_scale)
    to_go = k.lift_height - height_gain
    lift = grasped * (1 - xp.tanh(xp.where(to_go > 0, to_go, 0.0) * k.lift_scale))
    dense = k.reach_weight * reach + k.grasp_weight * grasped + k.lift_weight * lift
    return xp.where(success, k.success_reward, dense), {"reach": reach, "grasp": grasped, "lift": lift}


@register_env("FrankaLift-v1", max_episode_steps=FrankaLiftConfig.max_episode_steps)
class FrankaLiftEnv(TableTopEnv):
    """Lift a cube with the Panda (see the module docstring)."""

    cfg = FrankaLiftConfig()
    # randomization="visual": lights, the block's colour and texture, the floor's, distractors, the
    # camera 2 cm / 0.02 rad around its mount, its field of view, image noise
    # randomization="visual_v1": the first preset (lights, the block's colour, the front camera 2 cm / 0.02 rad)
    visual_randomization_v1 = visual_table(colored=("block",), cameras={"base_camera": (0.02, 0.02)})
    visual_randomization = visual_table(colored=("block",), textured=("block",), floor=True,
                                        distractors=cfg.distractor_regions, cameras={"base_camera": (0.02, 0.02)},
                                        fov=FOV_JITTER, image_noise=IMAGE_NOISE)
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the ground
        self.block = self.add_cube("Block", self.cfg.block_size, self.cfg.block_mass)

    def _after_reconfigure(self, options: dict) -> None:
        self.spawn_z = self.block.default_pose[:, 2]  # per env: heterogeneous props differ

    def _initialize_episode(self, env_idx, options: dict) -> None:
        self.spawn(self.block, env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, is_grasped bool (N,); height_gain (N,) m; block/tcp poses (N, 7) and
        tcp_to_block (N, 3), world frame."""
        block_pose, tcp_pose = self.block.state_in(self.xp).pose, self.tcp_pose()
        success, height_gain, tcp_to_block = lift_predicates(block_pose, tcp_pose, self.as_xp(self.spawn_z), self.k)
        return {
            "success": success,
            "is_grasped": self.agent.is_grasping(self.block, xp=self.xp),
            "height_gain": height_gain,
            "block_pose": block_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_block": tcp_to_block,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success;
        float32 (N,); the terms go to ``info["reward_terms"]``."""
        grasped = as_float32(info["is_grasped"])
        dense, info["reward_terms"] = lift_reward(self.xp, self.k, info["tcp_to_block"], info["height_gain"], grasped,
                                                  info["success"])
        return dense

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "block_pose": self.local(info["block_pose"]),
            "tcp_to_block": info["tcp_to_block"],
            "is_grasped": info["is_grasped"],
        }
