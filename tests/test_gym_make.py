"""``gym.make`` and ``gym.make_vec`` on our registered ids: per-env time limits (never Gymnasium's
one-counter ``TimeLimit`` on a batched env), and single-env views under the sync/async modes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.vector.gym_spec import PER_ENV_TIME_LIMIT
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.vector import SimuloVectorEnv, SingleEnvView

IDS = sorted(REGISTERED)


def _zero_action(env) -> torch.Tensor:
    return torch.zeros(env.action_space.shape)


def _truncation_run(env, steps: int, reset_env0_before: int) -> list[torch.Tensor]:
    """``truncated`` after each of ``steps`` steps (1-based), env 0 reset alone before step
    ``reset_env0_before``; every value checked to be a (num_envs,) bool tensor."""
    env.reset(seed=0)
    flags = []
    for step in range(1, steps + 1):
        if step == reset_env0_before:
            env.reset(options={"env_idx": [0]})
        _, _, _, truncated, _ = env.step(_zero_action(env))
        assert isinstance(truncated, torch.Tensor) and truncated.dtype == torch.bool
        assert truncated.shape == (env.unwrapped.num_envs,)
        flags.append(truncated.clone())
    return flags


def test_explicit_limit_is_per_env():
    env = gym.make("FrankaLift-v1", num_envs=4, max_episode_steps=10)
    assert not isinstance(env, gym.wrappers.TimeLimit) and env.unwrapped.max_episode_steps == 10
    flags = _truncation_run(env, 14, reset_env0_before=5)
    for step, truncated in enumerate(flags, start=1):
        expected = [step >= 14] + [step >= 10] * 3   # env 0 restarted its count before step 5
        assert truncated.tolist() == expected, step
    env.close()


def test_registered_limit_is_per_env():
    env = gym.make("FrankaReach-v1", num_envs=3)
    limit = gym.spec("FrankaReach-v1").max_episode_steps
    assert limit == REGISTERED["FrankaReach-v1"].default_max_episode_steps
    assert not isinstance(env, gym.wrappers.TimeLimit) and env.unwrapped.max_episode_steps == limit
    flags = _truncation_run(env, limit + 3, reset_env0_before=4)
    assert flags[limit - 1].tolist() == [False, True, True]
    assert flags[limit + 2].tolist() == [True, True, True]  # env 0: restarted before step 4
    assert not any(f[0] for f in flags[: limit + 2])
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_every_id_gets_its_registered_limit_per_env(env_id):
    spec = gym.spec(env_id)
    assert spec.max_episode_steps == REGISTERED[env_id].default_max_episode_steps
    assert PER_ENV_TIME_LIMIT in spec.additional_wrappers
    env = gym.make(env_id, num_envs=2)
    assert env.unwrapped is env, "no gymnasium wrapper stays on a batched env"
    assert env.max_episode_steps == spec.max_episode_steps
    env.close()
    env = gym.make(env_id, num_envs=2, max_episode_steps=7)
    assert env.unwrapped is env and env.max_episode_steps == 7
    env.close()


def test_minus_one_means_no_limit_and_the_spec_rebuilds_the_same_env():
    env = gym.make("FrankaLift-v1", num_envs=2, max_episode_steps=-1)
    assert env.max_episode_steps is None
    env.reset(seed=0)
    env.max_episode_steps = 2  # settable: counts from each env's last reset
    env.step(torch.zeros(2, 8))
    assert env.step(torch.zeros(2, 8))[3].tolist() == [True, True]
    env.close()
    first = gym.make("FrankaLift-v1", num_envs=2, max_episode_steps=6)
    again = gym.make(first.spec)
    assert again.num_envs == 2 and again.max_episode_steps == 6 and again.unwrapped is again
    for e in (first, again):
        e.close()


def test_bad_limit_is_refused():
    with pytest.raises(ValueError, match="max_episode_steps"):
        gym.make("FrankaLift-v1", num_envs=2).max_episode_steps = 0
    with pytest.raises(ValueError, match="max_episode_steps"):
        simulo_envs.make("FrankaLift-v1", max_episode_steps=-3)


def test_vector_entry_point_still_works_and_gets_the_limit():
    venv = gym.make_vec("FrankaLift-v1", num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(venv, SimuloVectorEnv) and venv.base_env.max_episode_steps == 100
    venv.close()
    venv = gym.make_vec("FrankaLift-v1", num_envs=3, vectorization_mode="vector_entry_point", max_episode_steps=4)
    assert venv.base_env.max_episode_steps == 4
    venv.close()
    venv = gym.make_vec("FrankaLift-v1", num_envs=2)  # the default mode is the vector entry point
    assert isinstance(venv, SimuloVectorEnv)
    venv.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_sync_and_async_build_single_env_views_with_autoreset(mode):
    venv = gym.make_vec("FrankaLift-v1", num_envs=4, vectorization_mode=mode, max_episode_steps=3)
    assert venv.metadata["render_fps"] == 20
    obs, info = venv.reset(seed=[10, 11, 12, 13])
    assert obs.shape == (4, 36) and obs.dtype == np.float32
    action = np.zeros((4, 8), dtype=np.float32)
    for step in range(1, 6):
        obs, reward, terminated, truncated, info = venv.step(action)
        assert obs.shape == (4, 36) and reward.shape == (4,) and truncated.dtype == bool
        # next-step autoreset (Gymnasium's default): truncated at 3, reset by step 4
        assert truncated.tolist() == [step == 3] * 4, step
        assert info["elapsed_steps"].tolist() == [step % 4] * 4, step
    venv.close()


def test_sync_sub_envs_are_views_and_match_a_seeded_single_env():
    venv = gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="sync")
    assert all(isinstance(e, gym.wrappers.TimeLimit) and isinstance(e.env, SingleEnvView) for e in venv.envs)
    assert venv.envs[0].spec.max_episode_steps == 100
    obs, _ = venv.reset(seed=5)   # sub-env k is seeded 5 + k
    single = SingleEnvView(gym.make("FrankaLift-v1", num_envs=1))
    np.testing.assert_array_equal(obs[1], single.reset(seed=6)[0])
    for e in (venv, single):
        e.close()
