"""PPO hyperparameters for FrankaPush-v1: the FrankaLift-v1 recipe (``tasks/franka_lift_ppo.py``),
unchanged.

Both tasks share what the recipe depends on: ``pd_ee_delta_pos``, a normalised dense reward in
[0, 1] with 1 on success, 100-step episodes that terminate on success (push also on fail: the cube
out of the arm's reach), and partial resets with ``FinalValuePPO`` bootstrapping every episode end.
128 envs x 50 steps per iteration; ``scripts/train.py --max-minutes`` caps a run's wall-clock.
Measured results: README's table-top section.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import TRAIN_CONFIG as _LIFT_CONFIG

TRAIN_CONFIG = copy.deepcopy(_LIFT_CONFIG)
