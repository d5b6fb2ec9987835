"""PPO recipe for SO101PickPlace-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO101Lift-v1's recipe (``tasks/so101_lift_ppo.py``: the FrankaLift-v1 partial-reset
recipe, ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration,
episodes ending on success or fail, ``FinalValuePPO`` bootstrapping every end, gamma 0.8, 8 epochs
of 8 minibatches, a budget of 966,400 env steps = 151 iterations), as FrankaPickPlace-v1 uses the
Franka lift's (pick-and-place is the lift with a carry to a goal point), with actor and critic
MLPs of 3 x 128 units instead of 3 x 256 (tanh, orthogonal init, initial action std 0.61 as
before). The task's reward has a lift term towards the goal's height, a coarse and a fine place
term, and a success paying about twice any other step (``tasks/so101_pick_place.py``).

Why 128 units: on the 2-core CPU, PPO's update (8 epochs x 8 minibatches of 400 samples per
``torchrun`` rank, each through both networks and back) took about a third of an iteration with
3 x 256 units, and it gains nothing from the second rank: the two cores do not multiply matrices
faster together than one alone (measured: two processes multiplying 400x256 by 256x256 matrices
each take twice as long as one). 3 x 128 units need about a quarter of the multiply-adds; measured
in one quiet window, the same checkpoints' iterations 101-115 (seed 1) took 0.9-1.0 s of update
per iteration instead of 1.5, and training ran 1,815-1,824 env steps/s instead of 1,491-1,567
(+19 %; the first 12 iterations +23 %; the rollouts, mostly PhysX, are unchanged).

Measured (``docs/training_so_arms.md``, 2026-12-07, 2-core AMD EPYC): seeds 0 / 1 / 2 score
0.91 / 0.95 / 0.00 over 100 evaluation episodes, median 0.91; seed 2 never succeeds in training (the
exploration failure the 3 x 256-unit recipe showed on seed 0). Seed 1 trained the whole budget in
8 min 14 s with nothing else running (481 s of training, 2,011 env steps/s, start-up included in
the 8 min 14 s; 867 s CPU). The committed ``tasks/so101_pick_place_ppo.pt`` is seed 1 of the
recipe with 3 x 256 units (0.99; that recipe scored 0.00 / 0.99 / 0.98 on seeds 0-2 with the same
budget, seed 0 holding the cube pressed to the floor).
"""

import copy

from simulo_envs.tasks.so101_lift_ppo import TRAIN_CONFIG as _SO101_LIFT

TRAIN_CONFIG = copy.deepcopy(_SO101_LIFT)   # its 3 x 128-unit networks included
