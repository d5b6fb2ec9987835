"""PPO recipe for FrankaLift-v1 on a CPU (rsl-rl-lib 5.5.1 layout; ``simulo_envs/wrappers/training.py``).

What it is: ManiSkill 3's PPO baseline (``examples/baselines/ppo/ppo.py``: 50 steps per env per
iteration, gamma 0.8, GAE lambda 0.9, 8 epochs, 32 minibatches, learning rate 3e-4, clip 0.2,
``pd_ee_delta_pos``, ``normalized_dense`` reward, episodes ending on success with partial
resets) expressed in rsl_rl, with the pieces where rsl_rl's defaults differ set back to the
baseline's. Each of these was measured on this task (``docs/lift_training.md``):

- bootstrap: ``FinalValuePPO(bootstrap="dones")`` adds ``gamma * V(final observation)`` at
  every episode end, terminations included, as the baseline does. rsl_rl's PPO treats a
  termination as the end of the return, and FrankaLift-v1 terminates on success with a dense
  reward of up to ~0.8 per step before it: success was then worth less than hovering below the
  lift height, and training success stalled near 30 % where the baseline's bootstrap reached 95 %.
- networks: ``OrthogonalMLPModel`` (orthogonal init, the policy mean's last layer at gain
  0.01 * sqrt(2): the first policy is near zero-mean actions), tanh, no observation normalisation;
  the Gaussian's std is state-independent, learned in log space, initial 0.61 (log std -0.5).
- loss: no value clipping (rsl_rl's default clips the value change at ``clip_param``), value loss
  coefficient 0.25 (the baseline's 0.5 * 0.5 MSE), advantages normalised per minibatch, fixed
  learning rate (rsl_rl's default adapts it to a KL target), Adam epsilon 1e-5.
"""

import math

TRAIN_CONFIG = {
    "num_envs": 128,
    "total_timesteps": 768_000,     # 120 iterations; about 10 minutes on 2 cores (torchrun, 2 ranks)
    "env_kwargs": {"reward_mode": "normalized_dense", "control_mode": "pd_ee_delta_pos"},
    # Partial resets: an env that succeeds starts its next episode at once (FinalValuePPO bootstraps it).
    "vector_kwargs": {"ignore_terminations": False},
    "runner": {
        "num_steps_per_env": 50,
        "save_interval": 10,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {
            "class_name": "simulo_envs.wrappers.rsl_rl_ppo:OrthogonalMLPModel",
            "hidden_dims": [256, 256, 256],
            "activation": "tanh",
            "obs_normalization": False,
            "output_gain": 0.01 * math.sqrt(2),
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": math.exp(-0.5), "std_type": "log"},
        },
        "critic": {
            "class_name": "simulo_envs.wrappers.rsl_rl_ppo:OrthogonalMLPModel",
            "hidden_dims": [256, 256, 256],
            "activation": "tanh",
            "obs_normalization": False,
        },
        "algorithm": {
            "class_name": "simulo_envs.wrappers.rsl_rl_ppo:FinalValuePPO",
            "bootstrap": "dones",
            "adam_eps": 1e-5,
            "num_learning_epochs": 8,
            "num_mini_batches": 32,
            "clip_param": 0.2,
            "gamma": 0.8,
            "lam": 0.9,
            "value_loss_coef": 0.25,
            "use_clipped_value_loss": False,
            "entropy_coef": 0.0,
            "learning_rate": 3e-4,
            "max_grad_norm": 0.5,
            "schedule": "fixed",
            "desired_kl": None,
            "normalize_advantage_per_mini_batch": True,
        },
    },
}
