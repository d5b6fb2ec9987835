"""``ppo_config``: the PPO recipe shared by the table-top tasks' ``*_ppo`` modules (rsl-rl-lib 5.5.1
``OnPolicyRunner`` layout, read by ``simulo_envs/training/rsl_rl_train.py``).

Defaults are sized for this project's 2-core CPU (64 envs x 50 steps = 3,200 transitions per
iteration) and follow ManiSkill 3's PPO baselines for its table-top tasks (``examples/baselines/ppo``:
Cartesian control, normalised dense reward, no early termination during training, gamma 0.8,
GAE lambda 0.9, 4-8 epochs) in rsl_rl's layout with Isaac Lab's ELU MLPs and observation
normalisation. Initial action std 0.6 (ManiSkill's initial log-std -0.5): wide enough to explore,
narrow enough not to knock the objects away at every step. Each task module passes only what
differs from these defaults.
"""

from __future__ import annotations


def ppo_config(num_envs: int = 64, total_timesteps: int = 2_000_000, control_mode: str = "pd_ee_delta_pos",
               steps_per_env: int = 50, hidden: tuple[int, ...] = (256, 256), gamma: float = 0.8,
               lam: float = 0.9, learning_rate: float = 3e-4, epochs: int = 5, minibatches: int = 4,
               entropy_coef: float = 0.0, init_std: float = 0.6) -> dict:
    """A training config: ``{"num_envs", "total_timesteps", "env_kwargs", "vector_kwargs", "runner"}``.

    Episodes run to ``max_episode_steps`` during training (``ignore_terminations=True``): the policy
    learns to reach the goal state and stay in it, not to end the episode (evaluation keeps the
    terminations: success = reached within the episode). Learning rate adapted to a KL target of 0.01.
    """
    mlp = {"class_name": "MLPModel", "hidden_dims": list(hidden), "activation": "elu", "obs_normalization": True}
    return {
        "num_envs": num_envs,
        "total_timesteps": total_timesteps,
        "env_kwargs": {"reward_mode": "normalized_dense", "control_mode": control_mode},
        "vector_kwargs": {"ignore_terminations": True},
        "runner": {
            "num_steps_per_env": steps_per_env,
            "save_interval": 50,
            "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
            "actor": {**mlp, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": init_std,
                                                  "std_type": "scalar"}},
            "critic": dict(mlp),
            "algorithm": {
                "class_name": "PPO",
                "num_learning_epochs": epochs,
                "num_mini_batches": minibatches,
                "clip_param": 0.2,
                "gamma": gamma,
                "lam": lam,
                "value_loss_coef": 1.0,
                "entropy_coef": entropy_coef,
                "learning_rate": learning_rate,
                "max_grad_norm": 1.0,
                "schedule": "adaptive",
                "desired_kl": 0.01,
            },
        },
    }
