"""PPO recipe for SO101PickPlace-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO101Lift-v1's recipe unchanged (``tasks/so101_lift_ppo.py``: the FrankaLift-v1 partial-reset
recipe, ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration,
episodes ending on success or fail, ``FinalValuePPO`` bootstrapping every end, gamma 0.8, 8
minibatches per epoch, a budget of 966,400 env steps), as FrankaPickPlace-v1 uses the Franka lift's:
pick-and-place is the lift with a carry to a goal point. The task's reward has a lift term towards
the goal's height, a coarse and a fine place term, and a success paying about twice any other step
(``tasks/so101_pick_place.py``).

Measured (``docs/training_so_arms.md``): seeds 0 / 1 / 2 score 0.00 / 0.99 / 0.98 over 100
evaluation episodes, median 0.98; seed 0 grasps the cube and holds it pressed to the floor (an exploration
failure SO101Lift-v1's recipe also shows on one seed in three). Seed 1's policy is committed as
``tasks/so101_pick_place_ppo.pt``.
"""

import copy

from simulo_envs.tasks.so101_lift_ppo import TRAIN_CONFIG as _SO101_LIFT

TRAIN_CONFIG = copy.deepcopy(_SO101_LIFT)
