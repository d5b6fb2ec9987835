"""Per-env random streams: a main stream that hands out episode seeds, and the episode streams
(numpy and torch) a task draws from, so an env's episodes do not depend on ``num_envs``.

The scheme is the maniskill-baseenv seed's (a main RNG and an episode RNG), kept per env:

- every env ``i`` holds a main stream (``numpy.random.RandomState``) and an episode seed; its
  episode streams, one ``RandomState`` and one CPU ``torch.Generator``, start from that seed;
- at creation env ``i``'s main stream and episode seed are ``2022 + i`` (the seed's fixed main
  seed), so the first unseeded reset gives the same episode in every fresh process;
- ``reset(seed=s)``: env ``i`` (of the reset ones) restarts its main stream and its episode
  streams at ``s + i`` (a seed list gives one seed per reset env), so env ``k`` of a batch
  seeded ``s`` draws exactly what a single env seeded ``s + k`` draws;
- ``reset()`` without a seed: the episode streams continue; with ``enhanced_determinism`` (and
  on every reconfiguration) each reset env first draws a fresh episode seed from its main
  stream, so every episode can be replayed alone from ``_episode_seed[i]``.
"""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np
import torch

MAIN_SEED = 2022
"""Main seed of env 0 at creation; env ``i`` gets ``MAIN_SEED + i`` (the maniskill-baseenv seed's value)."""



def random_state(seed: int) -> np.random.RandomState:
    """``RandomState(seed)`` for ``0 <= seed < 2**32`` (ManiSkill's streams exactly); a larger seed
    is split into 32-bit words (``RandomState([low word, ..., high word])``)."""
    seed = int(seed)
    if seed < 2**32:
        return np.random.RandomState(seed)
    words = []
    while seed:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return np.random.RandomState(words)


def torch_generator(seed: int) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded with ``seed`` (reduced modulo 2**64, torch's seed range)."""
    return torch.Generator().manual_seed(int(seed) % 2**64)


class BatchedRNG:
    """A batch of ``numpy.random.RandomState`` streams that answers like one, ManiSkill-style.

    ``rng[env_ids]`` selects streams (a ``BatchedRNG`` sharing them; an int gives the single
    ``RandomState``); any ``RandomState`` method called on the batch calls it on every stream and
    stacks the results along a new first axis: ``rng[env_idx].uniform(-1, 1, size=(2,))`` is
    float64 ``(len(env_idx), 2)``, each row from its own env's stream.
    """

    def __init__(self, rngs: Sequence[np.random.RandomState]):
        object.__setattr__(self, "rngs", list(rngs))

    @classmethod
    def from_seeds(cls, seeds: Sequence[int]) -> "BatchedRNG":
        """One ``RandomState(seed)`` per seed."""
        return cls([random_state(s) for s in seeds])

    @property
    def batch_size(self) -> int:
        """Number of streams."""
        return len(self.rngs)

    def __len__(self) -> int:
        return len(self.rngs)

    def __getitem__(self, idx) -> Union["BatchedRNG", np.random.RandomState]:
        if isinstance(idx, torch.Tensor):
            idx = idx.cpu().numpy()
        if np.ndim(idx) == 0:
            return self.rngs[int(idx)]
        return BatchedRNG([self.rngs[int(i)] for i in np.asarray(idx).reshape(-1)])

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        first = getattr(np.random.RandomState, name, None)
        if first is None:
            raise AttributeError(f"BatchedRNG has no attribute {name!r} (numpy.random.RandomState has none)")
        if not callable(first):
            return np.array([getattr(rng, name) for rng in self.rngs])

        def batched(*args, **kwargs):
            return np.array([getattr(rng, name)(*args, **kwargs) for rng in self.rngs])

        return batched


class EpisodeRNG:
    """The per-env main and episode streams of one env batch (see the module docstring).

    Args:
        num_envs: number of envs.
        main_seeds: one seed per env for the main streams and the first episode seeds
            (default ``MAIN_SEED + i``).
    """

    def __init__(self, num_envs: int, main_seeds: Sequence[int] | None = None):
        self.num_envs = int(num_envs)
        seeds = [MAIN_SEED + i for i in range(self.num_envs)] if main_seeds is None else [int(s) for s in main_seeds]
        self.main_seeds = np.asarray(seeds, dtype=np.int64)
        self.episode_seeds = self.main_seeds.copy()
        self._main = [random_state(s) for s in seeds]
        self._episode = [random_state(s) for s in seeds]
        self._torch = [torch_generator(s) for s in seeds]
        self._uses = np.zeros(self.num_envs, dtype=np.int64)  # torch draw blocks since the last restart

    # ------------------------------------------------------------------ (re)seeding
    def seed(self, env_ids: Sequence[int], seeds: Sequence[int]) -> None:
        """Restart the main and episode streams of ``env_ids`` at ``seeds`` (same length, ints in
        ``[0, 2**63)``, validated by the caller)."""
        for i, s in zip(np.asarray(env_ids).tolist(), seeds):
            self._main[i] = random_state(s)
            self.main_seeds[i] = int(s)
            self.episode_seeds[i] = int(s)
        self.restart(env_ids)

    def draw_episode_seeds(self, env_ids: Sequence[int]) -> None:
        """Give each env of ``env_ids`` a new episode seed drawn from its main stream, and restart
        its episode streams there."""
        for i in np.asarray(env_ids).tolist():
            self.episode_seeds[i] = self._main[i].randint(2**31)
        self.restart(env_ids)

    def seed_episodes(self, env_ids: Sequence[int], seeds: Sequence[int]) -> None:
        """Restart the episode streams of ``env_ids`` at ``seeds`` (their main streams continue;
        ints in ``[0, 2**63)``, validated by the caller)."""
        for i, s in zip(np.asarray(env_ids).tolist(), seeds):
            self.episode_seeds[i] = int(s)
        self.restart(env_ids)

    def restart(self, env_ids: Sequence[int]) -> None:
        """Restart the episode streams of ``env_ids`` at their current episode seeds."""
        for i in np.asarray(env_ids).tolist():
            s = int(self.episode_seeds[i])
            self._episode[i] = random_state(s)
            self._torch[i] = torch_generator(s)
            self._uses[i] = 0

    # ------------------------------------------------------------------ streams
    @property
    def batched(self) -> BatchedRNG:
        """The episode streams of all envs as a ManiSkill-style ``BatchedRNG`` (shared, not copies)."""
        return BatchedRNG(self._episode)

    @property
    def main(self) -> BatchedRNG:
        """The main streams of all envs as a ``BatchedRNG`` (they only hand out episode seeds)."""
        return BatchedRNG(self._main)

    def torch_generators(self, env_ids: Sequence[int]) -> list[torch.Generator]:
        """The CPU ``torch.Generator`` of each env in ``env_ids``, in that order."""
        return [self._torch[i] for i in np.asarray(env_ids).tolist()]

    def fallback_seed(self, env_ids: Sequence[int]) -> int:
        """A seed for torch's global generator during one per-env draw block of ``env_ids``: a hash
        of the first env's episode seed and of how many blocks each of ``env_ids`` has entered
        since its last restart (counted here). Drawing it consumes nothing from the streams."""
        ids = np.asarray(env_ids).reshape(-1)
        if not len(ids):
            return 0
        first = int(ids[0])
        seed = np.random.SeedSequence([int(self.episode_seeds[first]), int(self._uses[first])]).generate_state(2)
        self._uses[ids] += 1
        return int(seed[0]) << 31 | int(seed[1]) >> 1

    def uniform(self, env_ids, low, high, shape: tuple[int, ...] = (), device="cpu") -> torch.Tensor:
        """float32 tensor ``(len(env_ids), *shape)`` of uniform draws in ``[low, high)``, one row per
        env drawn from that env's own stream (``low``/``high`` broadcast against ``shape``)."""
        ids = np.asarray(env_ids, dtype=np.int64).reshape(-1)
        out = np.empty((len(ids), *shape), dtype=np.float32)
        for row, i in enumerate(ids.tolist()):
            out[row] = self._episode[i].uniform(low, high, shape)
        return torch.from_numpy(out).to(device)

    def integers(self, env_ids, low: int, high: int, device="cpu") -> torch.Tensor:
        """int64 tensor ``(len(env_ids),)`` of integers in ``[low, high)``, one per env stream."""
        ids = np.asarray(env_ids, dtype=np.int64).reshape(-1)
        out = np.array([self._episode[i].randint(low, high) for i in ids.tolist()], dtype=np.int64)
        return torch.from_numpy(out).to(device)
