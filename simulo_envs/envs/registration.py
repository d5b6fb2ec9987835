"""Registering tasks with Gymnasium, and ``make`` without Gymnasium's wrappers."""

from __future__ import annotations

from typing import Optional

import gymnasium as gym

REGISTERED: dict[str, type] = {}


def register_env(env_id: str, max_episode_steps: Optional[int] = None):
    """Class decorator: register a ``BaseEnv`` subclass under ``env_id`` for ``gym.make``,
    ``gym.make("simulo_envs:<env_id>")`` and ``gym.make_vec``.

    - ``gym.make(env_id, num_envs=N)``: the batched env, truncating each env on its own after
      ``max_episode_steps`` steps (None: the class's ``default_max_episode_steps``);
      ``gym.make(env_id, num_envs=N, max_episode_steps=k)`` sets the per-env limit to ``k``.
    - ``gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point")``: a
      ``SimuloVectorEnv`` (autoreset by partial resets); ``"sync"`` / ``"async"``: Gymnasium's
      vector envs over ``SingleEnvView``\\ s.

    How: ``simulo_envs/envs/gym_spec.py``. An id already in Gymnasium's registry is left as it is.
    """

    def wrap(cls):
        from simulo_envs.envs.gym_spec import register_batched
        from simulo_envs.wrappers.vector import vector_entry_point  # lazy: wrappers import this module

        REGISTERED[env_id] = cls
        limit = cls.default_max_episode_steps if max_episode_steps is None else max_episode_steps
        register_batched(env_id, cls, limit, vector_entry_point(env_id))
        return cls

    return wrap


def make(env_id: str, **kwargs) -> gym.Env:
    """Create a registered env directly (no gymnasium wrappers), e.g.
    ``make("FrankaLift-v1", num_envs=4, max_episode_steps=50)``.

    Raises:
        KeyError: ``env_id`` is not one of ours (the message lists the registered ids).
    """
    if env_id not in REGISTERED:
        raise KeyError(f"unknown env id {env_id!r}; registered: {sorted(REGISTERED)}")
    return REGISTERED[env_id](**kwargs)
