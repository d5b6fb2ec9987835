"""The isolated mode's promise, property-tested (Hypothesis) on every task: with
``sim_config=dict(isolate_envs=True)`` env ``k`` of a batch of any size follows, bit for bit, what
one env given the same seeds and actions does, whatever the other envs do (their own actions,
seeded partial resets of some of them, ``FrankaLiftRandomized-v1``'s cube rebuilt at a new
scale included).

Envs are built once per task and batch size; each example starts from a rebuilt scene (fresh
physics: PhysX keeps contact caches from a system's earlier episodes), so examples do not
depend on each other. Few examples and steps per task keep the file fast.
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

TASKS = sorted(REGISTERED)
STEPS = 6


@functools.lru_cache(maxsize=None)
def _env(env_id: str, num_envs: int, role: str):
    return REGISTERED[env_id](num_envs=num_envs, sim_config=dict(isolate_envs=True))


def teardown_module(module):
    for env in [_env(*key) for key in list(_CACHE_KEYS)]:
        env.close()
    _env.cache_clear()


_CACHE_KEYS: set = set()


def _make(env_id: str, num_envs: int, role: str):
    _CACHE_KEYS.add((env_id, num_envs, role))
    return _env(env_id, num_envs, role)


@st.composite
def scenarios(draw):
    num_envs = draw(st.integers(1, 3))
    k = draw(st.integers(0, num_envs - 1))
    seeds = draw(st.lists(st.integers(0, 10_000), min_size=num_envs, max_size=num_envs))
    # a seeded partial reset at some step: which envs, with which seeds (env k among them or not)
    at = draw(st.integers(1, STEPS - 1))
    who = draw(st.lists(st.integers(0, num_envs - 1), min_size=1, max_size=num_envs, unique=True))
    reseeds = draw(st.lists(st.integers(0, 10_000), min_size=len(who), max_size=len(who)))
    action_seed = draw(st.integers(0, 2 ** 31 - 1))
    return num_envs, k, seeds, at, sorted(who), reseeds, action_seed


@pytest.mark.parametrize("env_id", TASKS)
@settings(max_examples=2, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(scenario=scenarios())
def test_env_k_of_an_isolated_batch_is_bitwise_one_env(env_id, scenario):
    num_envs, k, seeds, at, who, reseeds, action_seed = scenario
    batch, one = _make(env_id, num_envs, "batch"), _make(env_id, 1, "reference")
    shape = batch.single_action_space.shape
    actions = torch.from_numpy(np.random.default_rng(action_seed).uniform(-1, 1, (STEPS, num_envs, *shape))
                               .astype(np.float32))
    batch.reset(seed=seeds, options={"reconfigure": True})
    one.reset(seed=[seeds[k]], options={"reconfigure": True})
    ours, theirs = [batch.get_state()[k].clone()], [one.get_state()[0].clone()]
    for t in range(STEPS):
        if t == at:
            batch.reset(seed=reseeds, options={"env_idx": who})
            if k in who:
                one.reset(seed=[reseeds[who.index(k)]], options={"env_idx": [0]})
            ours.append(batch.get_state()[k].clone())
            theirs.append(one.get_state()[0].clone())
        batch.step(actions[t])
        one.step(actions[t, k:k + 1])
        ours.append(batch.get_state()[k].clone())
        theirs.append(one.get_state()[0].clone())
    assert torch.equal(torch.stack(ours), torch.stack(theirs))
