"""PPO recipe for SO101Push-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: FrankaPush-v1's holding recipe (``tasks/franka_push_ppo.py``: full training episodes,
terminations ignored, ``FinalValuePPO`` bootstrapping every time-out, discount 0.95,
``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per iteration) with
SO101Lift-v1's speed-ups (``tasks/so101_lift_ppo.py``: 8 minibatches per epoch, actor and critic
MLPs of 3 x 128 units) and 50-step training episodes instead of 30 (the scripted expert first
succeeds after 18-35 steps; evaluation keeps the task's 80).

Measurement: not yet.
"""

import copy

from simulo_envs.tasks.franka_push_ppo import TRAIN_CONFIG as _FRANKA_PUSH

TRAIN_CONFIG = copy.deepcopy(_FRANKA_PUSH)
TRAIN_CONFIG["train_max_episode_steps"] = 50
TRAIN_CONFIG["total_timesteps"] = 1_920_000   # 300 iterations of 128 envs x 50 steps
TRAIN_CONFIG["runner"]["algorithm"]["num_mini_batches"] = 8
TRAIN_CONFIG["runner"]["actor"]["hidden_dims"] = [128, 128, 128]
TRAIN_CONFIG["runner"]["critic"]["hidden_dims"] = [128, 128, 128]
