"""PPO recipe for SO101PickPlace-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: the FrankaLift-v1 partial-reset recipe (``tasks/franka_lift_ppo.py``'s
``PARTIAL_RESET_CONFIG``: ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per
iteration, episodes ending on success or fail, ``FinalValuePPO`` bootstrapping every end, gamma
0.8), as FrankaPickPlace-v1 and SO100Lift-v1 use it: pick-and-place is the lift with a carry to
a goal point, and its reward has the same shape.

Measured: ``docs/so100.md`` (the table of seeds, env steps, wall-clock and machine load).
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG

TRAIN_CONFIG = copy.deepcopy(PARTIAL_RESET_CONFIG)
