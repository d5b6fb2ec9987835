"""Build-time randomization after the build: which seeded resets must rebuild the scene, and what
a rebuild of some envs' props re-reads.

A build-time entry of the randomization table (a prop's ``scale``, ``simulo_envs/envs/randomization.py``)
is drawn when the bodies are built. A seed fixes every randomized value of the envs it reseeds, so
a seeded reset draws it again: one of every env rebuilds the whole scene (as
``reset(seed=..., options={"reconfigure": True})``), one of some envs rebuilds only their props'
bodies (``Prop.set_scale`` after the build), where the backend can (``rebuilds_env_bodies``). After
such a rebuild, the recorded defaults of the parameters that follow the geometry (a prop's
``mass``) are read again for those envs, so ``scale``/``add`` entries stay relative to the
rebuilt body. ``Randomizer`` (the env's ``env.randomization``) calls these functions.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

FOLLOW_GEOMETRY = ("mass",)
"""Prop parameters a rebuild at another scale changes (their ``scale``/``add`` defaults are read again)."""


def build_time_params(bound: Sequence) -> list[str]:
    """The ``param`` of every bound entry fixed when the scene is built (a prop's ``scale``)."""
    return [b.term.param for b in bound if b.param.build_time]


def seeded_reset_rebuilds(params: Sequence[str], env_idx: np.ndarray, num_envs: int, backend) -> bool:
    """Whether ``reset(seed=...)`` of ``env_idx`` must rebuild the whole scene, given the table's
    build-time ``params``: yes for a seeded reset of every env; a reset of some envs rebuilds only
    their props, where ``backend`` can (``rebuilds_env_bodies``).

    Raises:
        ValueError: a seeded reset of some envs only, with a build-time entry in the table, on a
            backend that cannot rebuild one env's bodies (PhysX's GPU system); nothing changes.
    """
    if not params:
        return False
    if len(env_idx) == num_envs:
        return True
    if not getattr(backend, "rebuilds_env_bodies", False):
        raise ValueError(f"reset: a seed fixes every randomized value of the envs it reseeds, and "
                         f"{', '.join(params)} is drawn when bodies are built; {backend.name} cannot rebuild "
                         f"some envs' bodies (PhysX's GPU system takes no new body once initialised). Reset "
                         f"every env with the seed (the scene is rebuilt), these envs without a seed, or use "
                         f"sim_backend='physx_cpu'")
    return False


def reread_geometry_defaults(bound: Sequence, built: Sequence, env_ids: np.ndarray, num_envs: int) -> None:
    """After ``built`` entries rebuilt the props of ``env_ids`` (int64 (k,)): read again, for those
    envs, the default of every other entry on a rebuilt prop whose parameter follows the geometry
    (``FOLLOW_GEOMETRY``), in place in the entry's ``default`` (float64 (N, *shape))."""
    rebuilt = {id(b.target) for b in built}
    for b in bound:
        if id(b.target) in rebuilt and not b.param.build_time and b.term.param.rsplit(".", 1)[1] in FOLLOW_GEOMETRY:
            fresh = np.asarray(b.param.default(b.target, b.term.joints), dtype=np.float64)
            b.default[env_ids] = fresh.reshape(num_envs, *b.shape)[env_ids]
