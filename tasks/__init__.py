"""The task suite, installed as ``simulo_envs.tasks``; importing it registers every task."""

from simulo_envs.tasks.franka_lift import FrankaLiftConfig, FrankaLiftEnv
from simulo_envs.tasks.franka_lift_mixed import FrankaLiftMixedEnv
from simulo_envs.tasks.franka_lift_randomized import FrankaLiftRandomizedConfig, FrankaLiftRandomizedEnv
from simulo_envs.tasks.franka_push import FrankaPushConfig, FrankaPushEnv
from simulo_envs.tasks.franka_reach import FrankaReachConfig, FrankaReachEnv

__all__ = ["FrankaLiftEnv", "FrankaLiftConfig", "FrankaLiftMixedEnv", "FrankaLiftRandomizedEnv", "FrankaLiftRandomizedConfig",
           "FrankaPushEnv", "FrankaPushConfig", "FrankaReachEnv", "FrankaReachConfig"]
