"""``BatchedRNG``: one numpy random stream per env, so an env's episodes do not depend on ``num_envs``.

Env ``k`` seeded with ``s`` draws exactly what env 0 of a single-env run seeded with ``s``
draws; an unseeded reset keeps drawing from each env's stream (it never restarts it).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch


class BatchedRNG:
    """Per-env ``numpy.random.Generator`` streams (PCG64).

    Args:
        num_envs: number of envs.
        seeds: one int seed per env, or None to seed each stream from OS entropy.
    """

    def __init__(self, num_envs: int, seeds: Optional[Sequence[int]] = None):
        self.num_envs = num_envs
        if seeds is None:
            entropy = np.random.SeedSequence().generate_state(num_envs)
            seeds = [int(e) for e in entropy]
        self._gens = [np.random.default_rng(int(s)) for s in seeds]

    def seed(self, env_ids: Sequence[int], seeds: Sequence[int]) -> None:
        """Restart the streams of ``env_ids`` from ``seeds`` (same length)."""
        for i, s in zip(env_ids, seeds):
            self._gens[int(i)] = np.random.default_rng(int(s))

    def uniform(self, env_ids, low, high, shape: tuple[int, ...] = (), device="cpu") -> torch.Tensor:
        """float32 tensor ``(len(env_ids), *shape)`` of uniform draws in ``[low, high)``, one row per
        env drawn from that env's own stream (``low``/``high`` broadcast against ``shape``)."""
        ids = np.asarray(env_ids, dtype=np.int64).reshape(-1)
        out = np.empty((len(ids), *shape), dtype=np.float32)
        for row, i in enumerate(ids.tolist()):
            out[row] = self._gens[i].uniform(low, high, shape)
        return torch.from_numpy(out).to(device)

    def integers(self, env_ids, low: int, high: int, device="cpu") -> torch.Tensor:
        """int64 tensor ``(len(env_ids),)`` of integers in ``[low, high)``, one per env stream."""
        ids = np.asarray(env_ids, dtype=np.int64).reshape(-1)
        out = np.array([self._gens[i].integers(low, high) for i in ids.tolist()], dtype=np.int64)
        return torch.from_numpy(out).to(device)
