"""PPO hyperparameters for FrankaOpenDrawer-v1: the ``tasks/tabletop_ppo.py`` defaults (64 envs,
``pd_ee_delta_pos``, normalised dense reward, gamma 0.8), 4 M env steps (reach the handle, grip
it, then pull: a grasp-then-move task like pick-and-place)."""

from simulo_envs.tasks.tabletop_ppo import ppo_config

TRAIN_CONFIG = ppo_config(total_timesteps=4_000_000)
