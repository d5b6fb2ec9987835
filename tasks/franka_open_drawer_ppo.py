"""PPO hyperparameters for FrankaOpenDrawer-v1: the FrankaLift-v1 partial-reset recipe
(``tasks/franka_lift_ppo.py``'s ``PARTIAL_RESET_CONFIG``: episodes end on success, partial resets,
``FinalValuePPO`` bootstrapping every episode end, 128 envs x 50 steps, gamma 0.8) with 8
minibatches per epoch instead of 32.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG

TRAIN_CONFIG = copy.deepcopy(PARTIAL_RESET_CONFIG)
TRAIN_CONFIG["total_timesteps"] = 4_800_000   # 750 iterations of 128 envs x 50 steps
TRAIN_CONFIG["runner"]["algorithm"]["num_mini_batches"] = 8
