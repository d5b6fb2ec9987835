"""PPO recipe for SO101PickPlace-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO101Lift-v1's recipe (``tasks/so101_lift_ppo.py``: the FrankaLift-v1 partial-reset
recipe, ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration,
episodes ending on success or fail, ``FinalValuePPO`` bootstrapping every end, gamma 0.8, 8
minibatches per epoch), as FrankaPickPlace-v1 uses the Franka lift's: pick-and-place is the lift
with a carry to a goal point, and its reward has the same shape.

Not yet shown to learn the task in its budget: seed 0, stopped at 416,000 of the 966,400 env steps,
had no success in training yet (SO101Lift-v1, seed 0, had 0.69 at that point);
``docs/training_so_arms.md``.
"""

import copy

from simulo_envs.tasks.so101_lift_ppo import TRAIN_CONFIG as _SO101_LIFT

TRAIN_CONFIG = copy.deepcopy(_SO101_LIFT)
