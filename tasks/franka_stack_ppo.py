"""PPO hyperparameters for FrankaStack-v1: the ``tasks/tabletop_ppo.py`` defaults (64 envs,
``pd_ee_delta_pos``, normalised dense reward), 8 M env steps and 60 steps per env per iteration
(grasp, carry, place and release: the longest horizon of the table-top tasks), gamma 0.85."""

from simulo_envs.tasks.tabletop_ppo import ppo_config

TRAIN_CONFIG = ppo_config(total_timesteps=8_000_000, steps_per_env=60, gamma=0.85)
