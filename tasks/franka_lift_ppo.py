"""PPO hyperparameters for FrankaLift-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/wrappers/training.py``).

A GPU recipe: 1,024 envs on ``physx_cuda`` (not built yet; on CPU the same config runs, at
CPU speed), 50 steps per env per iteration (51,200 transitions), 10 M env steps (~195
iterations). Sources: ManiSkill 3's PPO baseline for PickCube-v1 (1,024 envs, 8 epochs,
32 minibatches, gamma 0.8, GAE lambda 0.9, learning rate 3e-4, 10 M steps,
``examples/baselines/ppo``), in rsl_rl's runner layout with Isaac Lab's Franka-lift network
sizes (256-128-64, ELU). Unchecked so far: run it when a GPU machine and the CUDA backend exist.
"""

TRAIN_CONFIG = {
    "num_envs": 1024,
    "total_timesteps": 10_000_000,
    "env_kwargs": {"reward_mode": "normalized_dense", "control_mode": "pd_joint_delta_pos"},
    # Episodes run the full 100 steps: the policy learns to hold the cube up, not to end the episode.
    "vector_kwargs": {"ignore_terminations": True},
    "runner": {
        "num_steps_per_env": 50,
        "save_interval": 20,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": [256, 128, 64],
            "activation": "elu",
            "obs_normalization": True,
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"},
        },
        "critic": {
            "class_name": "MLPModel",
            "hidden_dims": [256, 128, 64],
            "activation": "elu",
            "obs_normalization": True,
        },
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": 8,
            "num_mini_batches": 32,
            "clip_param": 0.2,
            "gamma": 0.8,
            "lam": 0.9,
            "value_loss_coef": 0.5,
            "entropy_coef": 0.0,
            "learning_rate": 3e-4,
            "max_grad_norm": 0.5,
            "schedule": "fixed",
            "desired_kl": 0.1,
        },
    },
}
