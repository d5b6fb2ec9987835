"""FrankaReach-v1: move the Panda's TCP to a goal point.

Goal: bring the TCP (``agents.panda.TCP_LINK``, between the finger pads) within ``success_radius``
(0.025 m) of a goal point. The Panda's base sits at the env origin; there is nothing to touch,
so the task learns on a CPU in minutes (``docs/reach_training.md``).

Randomisation per reset env (env-local metres): the goal is drawn uniformly in the box
x in [0.35, 0.65], y in [-0.25, 0.25], z in [0.10, 0.45] in front of the robot, from the env's
own episode stream; the robot returns to its rest pose (``agents.panda.REST_QPOS``), whose TCP
sits near (0.61, 0, 0.19). The goal is shown by a 0.025 m visual-only sphere (no collision:
the arm passes through it, and it is never simulated).

Success: ``|goal - tcp| <= success_radius``. The episode terminates on success; it is truncated
after ``max_episode_steps`` (50) steps. For training, ``TRAIN_CONFIG`` runs the vector wrapper
with ``ignore_terminations=True``: episodes last the full 50 steps, so the policy learns to stay at
the goal rather than to end the episode (ManiSkill trains its reach tasks the same way).

Observation (``state``): agent qpos (9), qvel (9); extra: TCP position (3, env-local), goal
position (3, env-local), TCP-to-goal vector (3) -> 27 floats.

Dense reward = ``reach_weight * (1 - tanh(reach_scale * distance)) + success_weight * success``;
``normalized_dense = dense / (reach_weight + success_weight)`` in [0, 1]. Both terms are in
``info["reward_terms"]``.

Default control mode: ``pd_ee_delta_pos`` (3 TCP translations of at most 0.1 m per step, world
axes, + 1 gripper action the task ignores).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.authoring import Material, Physics, Pose, Sphere
from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.prop import Prop
from simulo_envs.tasks.tabletop import TableTopEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class FrankaReachConfig:
    """Every tunable of FrankaReach-v1, with units; env-local metres."""

    goal_low: tuple[float, float, float] = (0.35, -0.25, 0.10)   # goal box, env-local [m]
    goal_high: tuple[float, float, float] = (0.65, 0.25, 0.45)
    goal_radius: float = 0.025      # radius of the visual goal marker [m]
    success_radius: float = 0.025   # success: TCP within this distance of the goal [m]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * distance) [1/m]
    reach_weight: float = 1.0
    success_weight: float = 1.0     # added on success steps; with reach_weight, the normaliser
    max_episode_steps: int = 50


# PPO hyperparameters for this task (rsl-rl-lib 5.5.1 ``OnPolicyRunner`` layout; scripts/train.py
# reads them). Sized for a 2-core CPU: 64 envs x 25 steps = 1,600 transitions per iteration.
TRAIN_CONFIG = {
    "num_envs": 64,
    "total_timesteps": 300_000,     # evaluation success was 98% at 82k steps, 100% from 162k (docs/reach_training.md)
    "env_kwargs": {"reward_mode": "normalized_dense"},
    "vector_kwargs": {"ignore_terminations": True},
    "runner": {
        "num_steps_per_env": 25,
        "save_interval": 50,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": [128, 128],
            "activation": "elu",
            "obs_normalization": True,
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"},
        },
        "critic": {
            "class_name": "MLPModel",
            "hidden_dims": [128, 128],
            "activation": "elu",
            "obs_normalization": True,
        },
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": 5,
            "num_mini_batches": 4,
            "clip_param": 0.2,
            "gamma": 0.95,
            "lam": 0.95,
            "value_loss_coef": 1.0,
            "entropy_coef": 0.0,
            "learning_rate": 1e-3,
            "max_grad_norm": 1.0,
            "schedule": "adaptive",
            "desired_kl": 0.01,
        },
    },
}


@register_env("FrankaReach-v1", max_episode_steps=FrankaReachConfig.max_episode_steps)
class FrankaReachEnv(TableTopEnv):
    """Reach a goal point with the Panda's TCP (see the module docstring)."""

    default_control_mode = "pd_ee_delta_pos"
    cfg = FrankaReachConfig()
    default_max_episode_steps = cfg.max_episode_steps
    train_config = TRAIN_CONFIG
    xp_hooks = True  # the hooks below compute with self.xp alone
    image_obs_extra = ("tcp_pos", "goal_pos")  # the goal point is hidden from the cameras: the command

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        centre = [(lo + hi) / 2 for lo, hi in zip(cfg.goal_low, cfg.goal_high)]
        self.goal = Prop(Sphere(name="Goal", radius=cfg.goal_radius, pose=Pose(position=centre),
                                physics=Physics.kinematic(), material=Material(color=(0.1, 0.8, 0.2)),
                                collision=False))
        self.scene.add(self.goal, at="/World/Goal")

    def _after_reconfigure(self, options: dict) -> None:
        self.goal_low = torch.tensor(self.cfg.goal_low, dtype=torch.float32, device=self.device)
        self.goal_high = torch.tensor(self.cfg.goal_high, dtype=torch.float32, device=self.device)

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        unit = self.episode_rng.uniform(env_idx, 0.0, 1.0, shape=(3,), device=self.device)
        local = self.goal_low + unit * (self.goal_high - self.goal_low)
        pose = self.goal.default_pose[env_idx].clone()
        pose[:, :3] = local + self.scene.env_origins[env_idx]
        self.goal.set_pose(pose, env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success bool (N,) and the TCP-to-goal quantities the reward and observations read."""
        tcp_pos = self.tcp_pose()[:, :3]
        tcp_to_goal = self.goal_pos - tcp_pos
        distance = norm(tcp_to_goal)
        return {
            "success": distance <= self.k.success_radius,
            "distance": distance,
            "tcp_pos": tcp_pos,
            "tcp_to_goal": tcp_to_goal,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """Dense reward, float32 (N,) (terms in the module docstring)."""
        reach = 1 - self.xp.tanh(info["distance"] * self.k.reach_scale)
        info["reward_terms"] = {"reach": reach, "success": as_float32(info["success"])}
        return self.weighted_sum(info["reward_terms"])

    def compute_normalized_dense_reward(self, obs, action, info: dict):
        """Dense reward scaled into [0, 1], float32 (N,)."""
        return self.compute_dense_reward(obs, action, info) / (self.k.reach_weight + self.k.success_weight)

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pos": self.local(info["tcp_pos"]),  # env-local
            "goal_pos": self.local(self.goal_pos),
            "tcp_to_goal": info["tcp_to_goal"],
        }
