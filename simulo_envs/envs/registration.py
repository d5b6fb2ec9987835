"""Registering tasks: the id -> class table, ``register_env`` and ``make``.

This module records our tasks; putting them into Gymnasium's registry (``gym.make``,
``gym.make_vec``) is the wrappers' part, since what Gymnasium builds from a spec is a wrapper
(a single-env view, our vector env): ``simulo_envs/vector/gym_spec.py`` subscribes with
``on_register`` when ``simulo_envs`` is imported, and from then on every registered task, earlier
or later, is in Gymnasium's registry too.
"""

from __future__ import annotations

from typing import Callable, Optional

import gymnasium as gym

from simulo_envs.envs.env_keywords import did_you_mean_hint

REGISTERED: dict[str, type] = {}
"""Registered id -> task class (a ``BaseEnv`` subclass)."""

_MAX_EPISODE_STEPS: dict[str, Optional[int]] = {}  # id -> the per-env limit it was registered with
_LISTENERS: list[Callable[[str, type, Optional[int]], None]] = []


def register_env(env_id: str, max_episode_steps: Optional[int] = None):
    """Class decorator: register a ``BaseEnv`` subclass under ``env_id`` for ``gym.make``,
    ``gym.make("simulo_envs:<env_id>")`` and ``gym.make_vec``.

    - ``gym.make(env_id, num_envs=N)``: the batched env, truncating each env on its own after
      ``max_episode_steps`` steps (None: the class's ``default_max_episode_steps``);
      ``gym.make(env_id, num_envs=N, max_episode_steps=k)`` sets the per-env limit to ``k``.
    - ``gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point")``: a
      ``SimuloVectorEnv`` (autoreset by partial resets); ``"sync"`` / ``"async"``: Gymnasium's
      vector envs over ``SingleEnvView``\\ s.

    How: ``simulo_envs/vector/gym_spec.py``. A class defined inside a function registers too
    (Gymnasium gets the class itself, not its import path). Registering an id again with the
    same class, or a new definition of it (same module and qualified name: a re-run notebook
    cell, a reloaded module), replaces the registration everywhere, ``max_episode_steps``
    included.

    Raises:
        ValueError: at registration, ``env_id`` is already another task's (or another library's
            in Gymnasium's registry): the message names its owner.
    """

    def wrap(cls):
        _check_new_registration(env_id, cls)
        REGISTERED[env_id] = cls
        limit = cls.default_max_episode_steps if max_episode_steps is None else max_episode_steps
        _MAX_EPISODE_STEPS[env_id] = limit
        for listener in list(_LISTENERS):
            listener(env_id, cls, limit)
        return cls

    return wrap


def _check_new_registration(env_id: str, cls: type) -> None:
    """Refuse ``env_id`` when it is taken by a different task, or by something else in Gymnasium's registry."""
    def name(klass) -> str:
        return f"{klass.__module__}.{klass.__qualname__}"

    known = REGISTERED.get(env_id)
    if known is not None and known is not cls and name(known) != name(cls):
        raise ValueError(f"register_env({env_id!r}): the id is already {name(known)}'s; register {name(cls)} "
                         f"under an id of its own")
    entry = gym.registry[env_id].entry_point if env_id in gym.registry else None
    ours = isinstance(entry, type) and name(entry) == name(cls) or entry == f"{cls.__module__}:{cls.__name__}"
    if known is None and entry is not None and not ours:
        raise ValueError(f"register_env({env_id!r}): Gymnasium already has this id (entry point "
                         f"{gym.registry[env_id].entry_point!r}); register the task under an id of its own")


def on_register(listener: Callable[[str, type, Optional[int]], None]) -> None:
    """Call ``listener(env_id, cls, max_episode_steps)`` for every task registered so far, in
    registration order, and for every task ``register_env`` registers from now on.

    ``max_episode_steps`` is the per-env limit the task was registered with (the class's
    ``default_max_episode_steps`` unless ``register_env`` was given one). A listener added twice
    is called once per task.
    """
    if listener in _LISTENERS:
        return
    _LISTENERS.append(listener)
    for env_id, cls in list(REGISTERED.items()):
        listener(env_id, cls, _MAX_EPISODE_STEPS.get(env_id, cls.default_max_episode_steps))


def make(env_id: str, **kwargs) -> gym.Env:
    """Create a registered env directly (no gymnasium wrappers), e.g.
    ``make("FrankaLift-v1", num_envs=4, max_episode_steps=50)``.

    Raises:
        KeyError: ``env_id`` is not one of ours (the message names the closest registered id
            and lists them all: ``unknown_env_id``).
    """
    if env_id not in REGISTERED:
        raise unknown_env_id(env_id)
    return REGISTERED[env_id](**kwargs)


def unknown_env_id(env_id: str, advice: str = "") -> KeyError:
    """The error for an id that is not registered: ``unknown env id 'SO101PickPlce-v1' (did you
    mean 'SO101PickPlace-v1'?); registered: ...``, then ``advice`` (what else to try)."""
    hint = did_you_mean_hint(env_id, REGISTERED)
    return KeyError(f"unknown env id {env_id!r}{hint}; registered: {', '.join(sorted(REGISTERED))}{advice}")
