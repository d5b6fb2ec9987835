"""PPO recipe for SO100Lift-v1 (rsl-rl-lib 5.5.1 layout; ``simulo_envs/wrappers/training.py``).

What it is: the FrankaLift-v1 recipe unchanged (``tasks/franka_lift_ppo.py``: ManiSkill 3's PPO
baseline in rsl_rl; ``pd_ee_delta_pos``, ``normalized_dense`` reward, 128 envs x 50 steps per
iteration, episodes ending on success or fail with partial resets and ``FinalValuePPO(bootstrap=
"dones")``, gamma 0.8, GAE lambda 0.9, 8 epochs of 32 minibatches, orthogonal tanh MLPs 256-256-256,
fixed learning rate 3e-4). The arm's 2.5 cm TCP step per unit action on the 25 mm cube is in
proportion to the Panda's 10 cm on the 5 cm cube, and the rewards have the same shape, so nothing
needed retuning.

Measured (``docs/lift_training.md``): seed 0 reaches 90 % evaluation success at 390,400 env steps and
97 % at 499,200 (``tasks/so100_lift_ppo.pt``); seed 1 grasps the
cube but had not lifted it (0 %) at 518,400: not yet reliable. An earlier recipe that ran every
episode to its 80-step limit and bootstrapped time-outs only grasped the cube but never lifted it
in 422,400 env steps; it also trained under a grasp test that counted the wide-open jaws resting on the cube as
a grasp, since fixed (``JawGrasp.min_opposition``). Which of the two mattered more was not separated.
"""

import copy

from simulo_envs.tasks.franka_lift_ppo import TRAIN_CONFIG as _FRANKA_LIFT

TRAIN_CONFIG = copy.deepcopy(_FRANKA_LIFT)
