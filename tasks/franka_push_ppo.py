"""PPO hyperparameters for FrankaPush-v1: the ``tasks/tabletop_ppo.py`` defaults (64 envs,
``pd_ee_delta_pos``, normalised dense reward, gamma 0.8), 2 M env steps."""

from simulo_envs.tasks.tabletop_ppo import ppo_config

TRAIN_CONFIG = ppo_config(total_timesteps=2_000_000)
