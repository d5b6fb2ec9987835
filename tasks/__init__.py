"""The task suite, installed as ``simulo_envs.tasks``; importing it registers every task."""

from simulo_envs.tasks.franka_lift import FrankaLiftConfig, FrankaLiftEnv
from simulo_envs.tasks.franka_lift_mixed import FrankaLiftMixedEnv
from simulo_envs.tasks.franka_lift_randomized import FrankaLiftRandomizedConfig, FrankaLiftRandomizedEnv
from simulo_envs.tasks.franka_open_drawer import FrankaOpenDrawerConfig, FrankaOpenDrawerEnv
from simulo_envs.tasks.franka_pick_place import FrankaPickPlaceConfig, FrankaPickPlaceEnv
from simulo_envs.tasks.franka_push import FrankaPushConfig, FrankaPushEnv
from simulo_envs.tasks.franka_reach import FrankaReachConfig, FrankaReachEnv
from simulo_envs.tasks.franka_stack import FrankaStackConfig, FrankaStackEnv
from simulo_envs.tasks.franka_stack_v2 import FrankaStackV2Config, FrankaStackV2Env
from simulo_envs.tasks.so100_lift import SO100LiftConfig, SO100LiftEnv
from simulo_envs.tasks.so100_pick_place import SO100PickPlaceConfig, SO100PickPlaceEnv
from simulo_envs.tasks.so101_lift import SO101LiftEnv
from simulo_envs.tasks.so101_open_drawer import SO100OpenDrawerEnv, SO101OpenDrawerConfig, SO101OpenDrawerEnv
from simulo_envs.tasks.so101_pick_place import SO101PickPlaceEnv
from simulo_envs.tasks.so101_place_in_bowl import SO100PlaceInBowlEnv, SO101PlaceInBowlConfig, SO101PlaceInBowlEnv
from simulo_envs.tasks.so101_place_on_target import (SO100PlaceOnTargetEnv, SO101PlaceOnTargetConfig,
                                                     SO101PlaceOnTargetEnv)
from simulo_envs.tasks.so101_stack import SO100StackEnv, SO101StackConfig, SO101StackEnv
from simulo_envs.tasks.so101_pull import SO100PullEnv, SO101PullConfig, SO101PullEnv
from simulo_envs.tasks.so101_push import SO100PushEnv, SO101PushConfig, SO101PushEnv
from simulo_envs.tasks.so101_sort import SO100SortEnv, SO101SortConfig, SO101SortEnv

__all__ = ["FrankaLiftEnv", "FrankaLiftConfig", "FrankaLiftMixedEnv", "FrankaLiftRandomizedEnv", "FrankaLiftRandomizedConfig",
           "FrankaOpenDrawerEnv", "FrankaOpenDrawerConfig", "FrankaPickPlaceEnv", "FrankaPickPlaceConfig", "FrankaPushEnv", "FrankaPushConfig", "FrankaReachEnv",
           "FrankaReachConfig", "FrankaStackEnv", "FrankaStackConfig", "FrankaStackV2Env",
           "FrankaStackV2Config", "SO100LiftEnv", "SO100LiftConfig",
           "SO100PickPlaceEnv", "SO100PickPlaceConfig", "SO101LiftEnv", "SO101PickPlaceEnv",
           "SO101PlaceInBowlEnv", "SO101PlaceInBowlConfig", "SO100PlaceInBowlEnv", "SO101PlaceOnTargetEnv",
           "SO101PlaceOnTargetConfig", "SO100PlaceOnTargetEnv", "SO101StackEnv", "SO101StackConfig", "SO100StackEnv",
           "SO101PushEnv", "SO101PushConfig", "SO100PushEnv", "SO101PullEnv", "SO101PullConfig", "SO100PullEnv",
           "SO101SortEnv", "SO101SortConfig", "SO100SortEnv", "SO101OpenDrawerEnv", "SO101OpenDrawerConfig",
           "SO100OpenDrawerEnv"]
