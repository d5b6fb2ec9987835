"""PPO hyperparameters for FrankaStack-v2: FrankaStack-v1's (``tasks/franka_stack_ppo.py``: the
FrankaLift-v1 partial-reset recipe with 8 minibatches, 8 M env steps), and half the training
episodes start from states of the scripted expert's episodes (``StackExpert``, 64 episodes per
rank; ``simulo_envs/training/start_states.py``), so carrying, placing and letting go are all within
reach of exploration. Evaluation starts from the task's own initial states.

Measured (``docs/training_tabletop.md``; 2 ``torchrun`` ranks, 30 minutes, 1.41-1.50 M env steps each):
seeds 0 / 1 / 2 succeed in 0.78 / 0.67 / 0.56 of 100 evaluation episodes (median 0.67).
Training success stays near 0 for about 20 minutes, then climbs. Seed 0's policy is
``tasks/franka_stack_v2_ppo.pt``.
"""

import copy

from simulo_envs.tasks.franka_stack_ppo import TRAIN_CONFIG as STACK_V1_CONFIG

TRAIN_CONFIG = copy.deepcopy(STACK_V1_CONFIG)
TRAIN_CONFIG["start_states"] = {"fraction": 0.5, "expert_episodes": 64}
