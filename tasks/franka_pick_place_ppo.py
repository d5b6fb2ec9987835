"""PPO hyperparameters for FrankaPickPlace-v1: the FrankaLift-v1 partial-reset recipe
(``tasks/franka_lift_ppo.py``'s ``PARTIAL_RESET_CONFIG``: episodes end on success, partial resets,
``FinalValuePPO`` bootstrapping every episode end, 128 envs x 50 steps, gamma 0.8), unchanged but
for its budget.

Pick-and-place is the lift with a carry to a goal point in the air, and its reward has the same
shape (reach, grasp, then a term that counts only while the cube is grasped; 1.0 normalised on
success), so the lift's recipe carries over. Measured (seed 0, 15 minutes, 2 ``torchrun`` ranks,
1,427,200 env steps; ``docs/training.md``): success in 96 % of 100 evaluation episodes, and run to
the last of the 100 steps (``--full-episodes``) the cube still at the goal in 96 %.
``scripts/train.py --max-minutes`` caps a run's wall-clock; the budget below is an upper bound.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG

TRAIN_CONFIG = copy.deepcopy(PARTIAL_RESET_CONFIG)
TRAIN_CONFIG["total_timesteps"] = 3_200_000   # 500 iterations of 128 envs x 50 steps
