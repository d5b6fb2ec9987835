"""PPO recipe for SO100Lift-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/training/rsl_rl_train.py``).

What it is: the FrankaLift-v1 recipe unchanged (``tasks/franka_lift_ppo.py``: ManiSkill 3's PPO
baseline in rsl_rl; ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per
iteration, episodes ending on success or fail with partial resets and ``FinalValuePPO(bootstrap=
"dones")``, gamma 0.8, GAE lambda 0.9, 8 epochs of 32 minibatches, orthogonal tanh MLPs 256-256-256,
fixed learning rate 3e-4). The arm's 2.5 cm TCP step per unit action on the 25 mm cube is in
proportion to the Panda's 10 cm on the 5 cm cube, and the rewards have the same shape.

Measured (``docs/training.md``; 10 minutes of training each, 2 torchrun ranks on 2 cores,
evaluation on 100 episodes): seed 0 trains 659,200 env steps and reaches 1.00 (90 % first at
326,400; ``tasks/so100_lift_ppo.pt``), seed 2 595,200 and 0.92, seed 1 544,000 and 0.00: median
0.92. Seed 1 grasps the cube but keeps pushing it down and never explores a lift: not yet
reliable for every seed. A seed retraces the same training whatever the load; only how many env
steps 10 minutes reach depends on the machine (about 780,000 with nothing else running).
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG as _FRANKA_LIFT

TRAIN_CONFIG = copy.deepcopy(_FRANKA_LIFT)
