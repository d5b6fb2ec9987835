"""The Gymnasium vector env and what Gymnasium builds from our registrations: ``SimuloVectorEnv``
(a batched env as a ``gymnasium.vector.VectorEnv``, with autoreset by partial reset, in this
process or sharded over worker processes), ``SingleEnvView`` (one env as a plain numpy
``gymnasium.Env``), ``NumpyView`` (the vector env in numpy arrays, for Gymnasium's vector
wrappers), and the registry glue (``gym_spec.py``). It needs only Gymnasium; RL-library adapters
live in ``simulo_envs.wrappers`` and training drivers in ``simulo_envs.training``.

Importing this package puts every task ``register_env`` records, before or after, into
Gymnasium's registry with our vector entry point (``gym_spec.py``), so ``gym.make(id, num_envs=N)``
builds the batched env and ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``
returns a ``SimuloVectorEnv``.
"""

from __future__ import annotations

import gymnasium as gym

from simulo_envs.envs.registration import REGISTERED
from simulo_envs.vector import gym_spec as _gym_spec  # noqa: F401  (registers our tasks with Gymnasium)
from simulo_envs.vector.numpy_view import NumpyView
from simulo_envs.vector.single_env import SingleEnvView
from simulo_envs.vector.vector_env import SimuloVectorEnv, make_vector_env, vector_entry_point


def attach_vector_entry_points() -> list[str]:
    """Set ``gym.registry[id].vector_entry_point`` for every id in ``REGISTERED`` that has none.

    ``register_env`` already registers it; this fills it in for our ids registered some other
    way. Safe to call again after more tasks are imported. Returns the ids it changed.
    """
    changed = []
    for env_id in REGISTERED:
        spec = gym.registry.get(env_id)
        if spec is not None and spec.vector_entry_point is None:
            spec.vector_entry_point = vector_entry_point(env_id)
            changed.append(env_id)
    return changed


attach_vector_entry_points()

__all__ = ["SimuloVectorEnv", "NumpyView", "SingleEnvView", "make_vector_env", "vector_entry_point", "attach_vector_entry_points"]
