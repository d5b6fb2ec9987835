"""Moved to ``simulo_envs.workers.sharded``: this alias of it warns (``DeprecationWarning``) and
goes away in the next release."""

from simulo_envs.workers import sharded as _sharded
from simulo_envs.workers.sharded import *  # noqa: F401,F403  (the names it exports)
from simulo_envs.wrappers import warn_moved as _warn_moved

__all__ = list(_sharded.__all__)

_warn_moved("simulo_envs.wrappers.sharded", "simulo_envs.workers.sharded")
