"""PPO hyperparameters for FrankaPickPlace-v1: the ``tasks/tabletop_ppo.py`` defaults (64 envs,
``pd_ee_delta_pos``, normalised dense reward, gamma 0.8), 4 M env steps (grasp, then carry: about
twice the budget of a push)."""

from simulo_envs.tasks.tabletop_ppo import ppo_config

TRAIN_CONFIG = ppo_config(total_timesteps=4_000_000)
