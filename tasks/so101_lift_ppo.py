"""PPO recipe for SO101Lift-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO100Lift-v1's recipe (``tasks/so100_lift_ppo.py``: the FrankaLift-v1 partial-reset
recipe, ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration,
episodes ending on success or fail, ``FinalValuePPO`` bootstrapping every end, gamma 0.8) with 8
minibatches per epoch instead of 32, as FrankaOpenDrawer-v1's recipe: PPO's update (8 epochs, a
gradient all-reduce across the ``torchrun`` ranks per minibatch) then takes a fraction of an
iteration instead of more than the env steps, so 10 minutes train more env steps.

Budget: 966,400 env steps (151 iterations), what 10 minutes of training reached on the quiet
2-core machine (2 ``torchrun`` ranks, 1,619 env steps/s). A seed retraces the same training
whatever the load, so the budget, not the wall-clock, fixes the result on a busy machine.
Networks: actor and critic MLPs of 3 x 128 units (3 x 256 before; the SO-100 recipe's): PPO's
update gains nothing from the second core of the 2-core CPU, and a quarter of the multiply-adds
makes each iteration about a fifth faster (``tasks/so101_pick_place_ppo.py`` has the measurement).

Measured (``docs/training_so_arms.md``, 2026-12-07, 2-core AMD EPYC): seeds 0 / 1 / 2 score 1.00 /
0.99 / 0.97 over 100 evaluation episodes, median 0.99; seed 2 trained the whole budget in 8 min
41 s with nothing else running (start-up included; 1,911 env steps/s of training, 924 s CPU). The
committed ``tasks/so101_lift_ppo.pt`` is seed 0 of the recipe with 3 x 256 units (0.94).
"""

import copy

from simulo_envs.tasks.so100_lift_ppo import TRAIN_CONFIG as _SO100_LIFT

TRAIN_CONFIG = copy.deepcopy(_SO100_LIFT)
TRAIN_CONFIG["total_timesteps"] = 966_400   # 151 iterations of 128 envs x 50 steps
TRAIN_CONFIG["runner"]["algorithm"]["num_mini_batches"] = 8
TRAIN_CONFIG["runner"]["actor"]["hidden_dims"] = [128, 128, 128]
TRAIN_CONFIG["runner"]["critic"]["hidden_dims"] = [128, 128, 128]
