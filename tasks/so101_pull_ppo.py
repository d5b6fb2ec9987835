"""PPO recipe for SO101Pull-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: SO101Push-v1's recipe unchanged (``tasks/so101_push_ppo.py``: FrankaPush-v1's holding
recipe with 50-step training episodes, 8 minibatches and 3 x 128-unit networks): the pull is the
push with the square on the base's side of the cube, the same observation, rewards and success.

Measurement: not yet.
"""

import copy

from simulo_envs.tasks.so101_push_ppo import TRAIN_CONFIG as _SO101_PUSH

TRAIN_CONFIG = copy.deepcopy(_SO101_PUSH)
