"""PPO hyperparameters for FrankaPush-v1: the FrankaLift-v1 recipe as it was before it trained on
full episodes (``tasks/franka_lift_ppo.py``'s ``PARTIAL_RESET_CONFIG``), unchanged.

Both tasks share what the recipe depends on: ``pd_ee_delta_pos``, a normalised dense reward in
[0, 1] with 1 on success, 100-step episodes that terminate on success (push also on fail: the cube
out of the arm's reach), and partial resets with ``FinalValuePPO`` bootstrapping every episode end.
128 envs x 50 steps per iteration; ``scripts/train.py --max-minutes`` caps a run's wall-clock.
Measured (seed 0, 10 minutes, 550,400 env steps): success once in 99 % of 100 evaluation
episodes, but the cube still in the goal region at the last step in only 30 % (README's
table-top section): as for the lift, nothing after the first success earns or costs reward.

The lift's holding recipe (terminations ignored, 50-step training episodes) did worse here in
one measured run (seed 0, 10 minutes, 486,400 env steps: success once 49 %, at the last step 11 %;
``docs/training.md``), so it is not used. FrankaPush-v1's reward would allow holding the same way: every step
with the cube in the goal region pays the success reward (1.0 normalised), every other step at
most 0.75; with terminations ignored a fail (cube out of reach) no longer ends the episode, the
policy keeps stepping with the cube where it is, which is what ``--full-episodes`` evaluates.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG

TRAIN_CONFIG = copy.deepcopy(PARTIAL_RESET_CONFIG)
