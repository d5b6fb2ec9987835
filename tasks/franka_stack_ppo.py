"""PPO hyperparameters for FrankaStack-v1: FrankaOpenDrawer-v1's recipe (the FrankaLift-v1
partial-reset recipe, ``tasks/franka_lift_ppo.py``'s ``PARTIAL_RESET_CONFIG``, with 8 minibatches
per epoch instead of 32) and a budget of 8 M env steps.

Not a solved recipe. Measured (seed 0, 2 ``torchrun`` ranks, 30 minutes, 3,110,400 env steps;
``docs/training_tabletop.md``): 0.00 success over 100 evaluation episodes. The policy grasps cube
A, carries it and holds it on cube B within the success tolerance in about half the episodes, but
never opens the gripper to let go. FrankaStack-v2 (a reward term for opening the gripper over B)
with half the training episodes started from expert states is learned: ``tasks/franka_stack_v2_ppo.py``.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG

TRAIN_CONFIG = copy.deepcopy(PARTIAL_RESET_CONFIG)
TRAIN_CONFIG["total_timesteps"] = 8_000_000   # 1,250 iterations of 128 envs x 50 steps
TRAIN_CONFIG["runner"]["algorithm"]["num_mini_batches"] = 8
