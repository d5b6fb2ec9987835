"""Gymnasium-style wrappers: each takes one of our envs and gives it another face.

``RecordEpisode`` (``record.py``) films episodes to mp4 and writes trajectories to HDF5; the
RL-library adapters present the vector env as another library's environment type:
``simulo_envs.wrappers.sb3.SB3VecEnv`` (Stable-Baselines3's ``VecEnv``, numpy) and
``simulo_envs.wrappers.rsl_rl.RslRlVecEnv`` (rsl-rl-lib's ``VecEnv``, torch). The adapters need
the ``rl`` extra and are imported from their modules.

The vector env itself and the single-env view are in ``simulo_envs.vector``; the names
``SimuloVectorEnv``, ``NumpyView``, ``SingleEnvView``, ``make_vector_env``, ``vector_entry_point``
and ``attach_vector_entry_points`` still resolve here for one release, with a
``DeprecationWarning`` that names their new place.
"""

from __future__ import annotations

import warnings

from simulo_envs import vector as _vector

MOVED_TO_VECTOR = ("SimuloVectorEnv", "NumpyView", "SingleEnvView", "make_vector_env", "vector_entry_point",
                   "attach_vector_entry_points")
"""Names this package exported before they moved to ``simulo_envs.vector``."""


def warn_moved(old: str, new: str) -> None:
    """Warn (``DeprecationWarning``) that ``old`` is now ``new``, at the user's line that asked for it
    (``warnings`` skips the import machinery's frames when a module calls this as it is imported)."""
    warnings.warn(f"{old} moved to {new}; import it from there (the old name goes away in the next release)",
                  DeprecationWarning, stacklevel=3)


def __getattr__(name: str):
    if name in MOVED_TO_VECTOR:
        warn_moved(f"simulo_envs.wrappers.{name}", f"simulo_envs.vector.{name}")
        return getattr(_vector, name)
    raise AttributeError(f"module 'simulo_envs.wrappers' has no attribute {name!r}")
