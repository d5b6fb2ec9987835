"""The task suite, installed as ``simulo_envs.tasks``; importing it registers every task."""

from simulo_envs.tasks.franka_lift import FrankaLiftConfig, FrankaLiftEnv

__all__ = ["FrankaLiftEnv", "FrankaLiftConfig"]
