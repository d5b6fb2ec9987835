"""PPO recipe for SO101Lift-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO100Lift-v1's recipe (``tasks/so100_lift_ppo.py``: the FrankaLift-v1 partial-reset
recipe, ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration,
episodes ending on success or fail, gamma 0.8) unchanged: the SO-101 task is the SO-100's with
another arm of the same size and controller bounds.

Measured: ``docs/so100.md`` (the table of seeds, env steps, wall-clock and machine load).
"""

import copy

from simulo_envs.tasks.so100_lift_ppo import TRAIN_CONFIG as _SO100_LIFT

TRAIN_CONFIG = copy.deepcopy(_SO100_LIFT)
