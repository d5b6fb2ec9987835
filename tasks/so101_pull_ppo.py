"""PPO recipe for SO101Pull-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO101Push-v1's recipe unchanged (``tasks/so101_push_ppo.py``: FrankaPush-v1's holding
recipe with 50-step training episodes, 8 minibatches, 3 x 128-unit networks, a budget of
1,920,000 env steps): the pull is the push with the square on the base's side of the cube, the
same observation, rewards and success.

Budget: 1,920,000 env steps. Quiet rate, 2 ``torchrun`` ranks, every other process stopped
(2026-12-07, 2-core AMD EPYC): 102,400 env steps in 42.7 s of training (2,398 env steps/s; 58 s
process wall, 100 s CPU), so the budget is about 13-16 quiet minutes of training.

Measured so far (``docs/training_so_arms.md``): seed 0 only, one process (``nice -n 10 python
scripts/train.py --env-id SO101Pull-v1 --seed 0 --torch-threads 1 --checkpoint-every 10``) at load
6-10, stopped after 1,254,400 env steps (65 % of the budget; 83 min wall, 936 s CPU):
``scripts/benchmark_suite.py --splits train heldout --episodes 50`` success once / at the end
96 % / 88 % (train), 0 % / 0 % (heldout); ``scripts/evaluate.py --episodes 100 --seed 10000`` 1.00,
at the end (``--full-episodes``) 0.77. Resumed (``--resume``) to the whole
budget (1,375 s CPU in all): 98 % / 84 % train, 2 % / 0 % heldout; ``evaluate.py`` 0.99, at the end
0.85. Not yet measured: seeds 1 and 2.
"""

import copy

from simulo_envs.tasks.so101_push_ppo import TRAIN_CONFIG as _SO101_PUSH

TRAIN_CONFIG = copy.deepcopy(_SO101_PUSH)
