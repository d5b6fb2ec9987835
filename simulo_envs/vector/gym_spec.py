"""How a task sits in Gymnasium's registry: per-env time limits under ``gym.make``, single-env
views under ``gym.make_vec``'s sync and async modes, our vector env under its vector entry point.

What Gymnasium 1.x does (``gymnasium/envs/registration.py``), and why a plain ``gym.register``
is not enough for a batched env:

- ``gym.make(id, max_episode_steps=k)``, or a spec with ``max_episode_steps``, wraps the env in
  ``TimeLimit``: one step counter for the whole env, restarted by every ``reset()`` (a partial
  one too), and ``truncated`` becomes the Python bool ``True`` for every env at once. Right for
  one env, wrong for a batch. The only code ``make`` runs after adding it is the spec's
  ``additional_wrappers``.
- ``gym.make_vec(..., vectorization_mode="vector_entry_point")`` refuses a spec that has
  ``additional_wrappers``. ``make_vec`` works on a deep copy of the registered spec, in every
  mode: the vector entry point gets the spec's ``max_episode_steps`` as a keyword, and the
  ``"sync"``/``"async"`` modes call ``make`` on the copy once per sub-env, without ``num_envs``.

So a task is registered as a ``BatchedEnvSpec``:

- ``gym.make`` reads it as registered: the batched env, Gymnasium's ``TimeLimit`` (the
  registered or the given limit), then ``per_env_time_limit``, which takes that ``TimeLimit``
  off again and gives its limit to the env's per-env counters (``BaseEnv.max_episode_steps``).
  ``max_episode_steps=-1`` (Gymnasium's "no TimeLimit") leaves the env without a limit.
- ``gym.make_vec`` deep-copies it, and the copy of a ``BatchedEnvSpec`` is its *single-env
  spec* (``single_env_spec``, in ``single_env.py``): same id, kwargs and limit, entry point
  ``make_single_env`` (a ``SingleEnvView`` of a one-env batch), no additional wrappers. The
  sync and async modes therefore build single-env views, on which Gymnasium's ``TimeLimit`` is
  exactly right; the vector-entry-point mode builds a ``SimuloVectorEnv`` with the limit as a
  keyword.

Tasks are recorded by ``simulo_envs.envs.registration.register_env``; this module subscribes to
it (``on_register``) and puts each one into Gymnasium's registry.

Nothing of Gymnasium is patched: the registry is Gymnasium's public dict, and every path above
is Gymnasium's own code reading our spec. ``tests/test_gym_make.py`` pins each path.
"""

from __future__ import annotations

from typing import Optional

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, WrapperSpec

from simulo_envs.envs.registration import on_register
from simulo_envs.vector.single_env import single_env_spec
from simulo_envs.vector.vector_env import vector_entry_point

__all__ = ["BatchedEnvSpec", "per_env_time_limit", "register_batched", "PER_ENV_TIME_LIMIT"]

#: The additional wrapper of every registered task (see ``per_env_time_limit``).
PER_ENV_TIME_LIMIT = WrapperSpec(
    name="PerEnvTimeLimit", entry_point="simulo_envs.vector.gym_spec:per_env_time_limit", kwargs={})


def per_env_time_limit(env: gym.Env) -> gym.Env:
    """Take Gymnasium's ``TimeLimit`` off a batched env and give its limit to the env itself.

    ``gym.make`` calls this last, on what it built: ``TimeLimit(env, k)`` when a limit was
    registered or given, else the env alone (no limit registered, or ``max_episode_steps=-1``).
    Returns the env under the ``TimeLimit``, its ``unwrapped.max_episode_steps`` set to ``k``
    (None without a ``TimeLimit``: no truncation), and records the limit in ``env.spec.kwargs``
    so ``gym.make(env.spec)`` builds the same env.
    """
    limit: Optional[int] = None
    if isinstance(env, gym.wrappers.TimeLimit):
        limit = env._max_episode_steps  # the value gym.make passed it; TimeLimit has no public getter
        env = env.env
    base = env.unwrapped
    base.max_episode_steps = limit
    if base.spec is not None:
        base.spec.kwargs["max_episode_steps"] = limit if limit is not None else -1
    return env


class BatchedEnvSpec(EnvSpec):
    """The registered spec of a batched task: ``gym.make`` builds the batched env with per-env
    time limits (``additional_wrappers``: ``PER_ENV_TIME_LIMIT``); its deep copy, which
    ``gym.make_vec`` works on, is ``single_env_spec(self)`` (see the module docstring)."""

    def __deepcopy__(self, memo: dict) -> EnvSpec:
        return single_env_spec(self)


def register_batched(env_id: str, cls: type, max_episode_steps: Optional[int]) -> None:
    """Put ``cls`` in Gymnasium's registry under ``env_id`` as a ``BatchedEnvSpec`` whose vector
    entry point is ``make_vector_env`` for that id; its entry point is the class itself (a class
    defined inside a function has no import path). A registration again (``register_env`` allows
    the same task only) replaces the spec, so ``gym.make`` builds what the registry names.

    Subscribed to ``simulo_envs.envs.registration.on_register`` below: every task ``register_env``
    registers, before or after this module is imported, goes through here."""
    gym.registry[env_id] = BatchedEnvSpec(
        id=env_id,
        entry_point=cls,
        max_episode_steps=max_episode_steps,
        order_enforce=False,
        disable_env_checker=True,
        kwargs={},
        additional_wrappers=(PER_ENV_TIME_LIMIT,),
        vector_entry_point=vector_entry_point(env_id),
    )


on_register(register_batched)
