"""Environments: ``BaseEnv`` and registration."""

from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.registration import REGISTERED, make, register_env

__all__ = ["BaseEnv", "REGISTERED", "make", "register_env"]
