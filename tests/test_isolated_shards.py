"""The isolated mode over shard splits, property-tested (Hypothesis): a batch of ``N`` envs cut
into worker shards at any points gives, env by env and bit for bit, the rollouts of the whole
batch in one process, through int and per-env seeds, seeded partial resets that cross the shard
boundaries (``FrankaLiftRandomized-v1``'s cube rebuilt at a new scale) and random action streams.

Each shard is the env a worker process builds for its share (``workers.worker.shard_class``:
the batch's seeds, origins and clone variants for envs ``start ..``), built here in this process
to keep the test cheap (a worker process costs ~8 s of CPU to start); the parent's split of
actions, seeds and ``env_idx`` is done as ``ShardedEnv`` does it. ``tests/test_sharded.py``
checks the same over real worker processes for one split.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simulo_envs  # noqa: F401
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.workers.worker import shard_class

TASKS = ("FrankaLiftRandomized-v1", "SO101Lift-v1")
STEPS = 5
KWARGS = {"sim_config": {"isolate_envs": True}}
_BUILT: set = set()


@functools.lru_cache(maxsize=None)
def _env(env_id: str, start: int, size: int, total: int):
    _BUILT.add((env_id, start, size, total))
    cls = REGISTERED[env_id]
    return (cls if size == total else shard_class(cls, start, total))(num_envs=size, **KWARGS)


def teardown_module(module):
    for key in list(_BUILT):
        _env(*key).close()
    _env.cache_clear()


@st.composite
def splits(draw):
    total = draw(st.integers(2, 4))
    cuts = sorted(draw(st.sets(st.integers(1, total - 1), min_size=1, max_size=min(2, total - 1))))
    bounds = list(zip([0] + cuts, cuts + [total]))
    seed = draw(st.one_of(st.integers(0, 10_000), st.lists(st.integers(0, 10_000), min_size=total, max_size=total)))
    at = draw(st.integers(1, STEPS - 1))
    who = sorted(draw(st.lists(st.integers(0, total - 1), min_size=1, max_size=total, unique=True)))
    reseeds = draw(st.lists(st.integers(0, 10_000), min_size=len(who), max_size=len(who)))
    return total, bounds, seed, at, who, reseeds, draw(st.integers(0, 2 ** 31 - 1))


def _shard_seed(seed, start: int, stop: int):
    """The seeds of envs ``[start, stop)`` of a reset seeded ``seed`` (an int: the shard adds its
    ``_first_env``; a list: its rows)."""
    return seed if isinstance(seed, int) else seed[start:stop]


@pytest.mark.parametrize("env_id", TASKS)
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(split=splits())
def test_any_shard_split_of_an_isolated_batch_is_bitwise_the_whole_batch(env_id, split):
    total, bounds, seed, at, who, reseeds, action_seed = split
    whole = _env(env_id, 0, total, total)
    shards = [_env(env_id, start, stop - start, total) for start, stop in bounds]
    shape = whole.single_action_space.shape
    actions = torch.from_numpy(np.random.default_rng(action_seed).uniform(-1, 1, (STEPS, total, *shape))
                               .astype(np.float32))

    def states():
        return whole.get_state(), torch.cat([shard.get_state() for shard in shards])

    whole.reset(seed=seed, options={"reconfigure": True})
    for shard, (start, stop) in zip(shards, bounds):
        shard.reset(seed=_shard_seed(seed, start, stop), options={"reconfigure": True})
    history = [states()]
    for t in range(STEPS):
        if t == at:  # a seeded partial reset across the cuts
            whole.reset(seed=reseeds, options={"env_idx": who})
            for shard, (start, stop) in zip(shards, bounds):
                mine = [i for i, k in enumerate(who) if start <= k < stop]
                if mine:
                    shard.reset(seed=[reseeds[i] for i in mine], options={"env_idx": [who[i] - start for i in mine]})
            history.append(states())
        whole.step(actions[t])
        for shard, (start, stop) in zip(shards, bounds):
            shard.step(actions[t, start:stop])
        history.append(states())
    ours, theirs = (torch.stack([h[i] for h in history]) for i in (0, 1))
    assert ours.shape[1] == total and torch.equal(ours, theirs)
