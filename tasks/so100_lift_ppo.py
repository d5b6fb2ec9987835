"""PPO recipe for SO100Lift-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/wrappers/training.py``).

What it is: the FrankaLift-v1 recipe (``tasks/franka_lift_ppo.py``: ManiSkill 3's PPO baseline in
rsl_rl; ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration,
gamma 0.8, GAE lambda 0.9, 8 epochs, 32 minibatches, orthogonal tanh MLPs, fixed learning rate
3e-4) with one change: training runs every episode to ``max_episode_steps`` (80) instead of ending
it on success or fail, and bootstraps only those time-outs (``FinalValuePPO(bootstrap="time_outs")``).

Why: SO100Lift-v1 also *fails* (the cube knocked out of the arm's reach: a 10 g cube flies far
when the arm strikes it). Ending an episode there and bootstrapping it on ``V(final observation)``,
as the Franka recipe does at every episode end, values the knocked-away cube by the critic's guess
for a state it never learns from. On full episodes a knocked-away cube earns 0 for the rest of the
episode, and a lifted cube earns the success reward (1, normalised) for every step it stays up.
Evaluation keeps the task's terminations: success = lifted once.

Status (README, "LeRobot's SO-100 arm"): this recipe does not yet learn the task within 10 minutes
of 2-core training. Measured with seed 0 (``torchrun`` 2 ranks): the policy reaches the cube
within about 1 cm by 134,400 env steps, closes the jaws on it in some episodes by 326,400, and
had not lifted it by 422,400 (about 1,160 s of CPU time, the 2 cores' 10 minutes); training
success stayed at 0-2 %, evaluation success 0 of 100. The FrankaLift-v1 recipe unchanged, in
earlier runs: training success 0-1 % in 166,400 env steps.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import TRAIN_CONFIG as _FRANKA_LIFT

TRAIN_CONFIG = copy.deepcopy(_FRANKA_LIFT)
TRAIN_CONFIG["vector_kwargs"] = {"ignore_terminations": True}
TRAIN_CONFIG["runner"]["algorithm"]["bootstrap"] = "time_outs"
