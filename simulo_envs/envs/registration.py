"""Registering tasks with Gymnasium, and ``make`` with a per-env episode limit."""

from __future__ import annotations

from typing import Optional

import gymnasium as gym

REGISTERED: dict[str, type] = {}


def register_env(env_id: str, max_episode_steps: Optional[int] = None):
    """Class decorator: register ``env_id`` with Gymnasium for ``gym.make``,
    ``gym.make("simulo_envs:<env_id>")`` and ``gym.make_vec(env_id, num_envs=N,
    vectorization_mode="vector_entry_point")`` (a ``SimuloVectorEnv``).

    The per-env limit is passed to the env as its ``max_episode_steps`` keyword (the env truncates
    each env on its own); Gymnasium's ``TimeLimit`` is deliberately not used, since it counts
    one step counter for all envs and returns a Python bool.
    """

    def wrap(cls):
        from simulo_envs.wrappers.vector import vector_entry_point  # lazy: wrappers import this module

        REGISTERED[env_id] = cls
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=f"{cls.__module__}:{cls.__name__}",
                vector_entry_point=vector_entry_point(env_id),
                kwargs={"max_episode_steps": max_episode_steps},
                disable_env_checker=True,
                order_enforce=False,
            )
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
