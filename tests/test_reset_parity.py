"""The seed's reset surface: reset_to_env_states, raw obs for reward hooks, torch draws that follow
the seeds, the fixed main seed at creation, and the default reward mode."""

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.tasks.franka_lift import FrankaLiftEnv

N = 3


@pytest.fixture(scope="module")
def env():
    e = gym.make("FrankaLift-v1", num_envs=N)
    yield e
    e.close()


def advance(env, steps=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        env.step(torch.rand(env.unwrapped.num_envs, 8, generator=g) * 2 - 1)


# ---------------------------------------------------------------- reset_to_env_states
def test_reset_to_env_states_restores_dict_and_flat_states(env):
    u = env.unwrapped
    env.reset(seed=1)
    advance(env)
    saved, flat = u.get_state_dict(), u.get_state()
    env.reset(seed=2)
    assert not torch.allclose(u.get_state(), flat)
    obs, info = env.reset(options={"reset_to_env_states": {"env_states": saved}})
    assert torch.allclose(u.get_state(), flat, atol=1e-6)
    assert u.elapsed_steps.tolist() == [0] * N and info["reconfigure"] is False
    assert torch.allclose(obs, u.get_obs(), atol=1e-6)
    env.reset(seed=2)
    env.reset(options={"reset_to_env_states": {"env_states": flat}})
    assert torch.allclose(u.get_state(), flat, atol=1e-6)


def test_reset_to_env_states_honours_env_idx_and_skips_initialize(env, monkeypatch):
    u = env.unwrapped
    env.reset(seed=3)
    advance(env, 2)
    target = u.get_state()
    env.reset(seed=4)
    before = u.get_state()
    calls = []
    monkeypatch.setattr(u, "_initialize_episode", lambda idx, opts: calls.append(idx))
    env.reset(options={"env_idx": [1], "reset_to_env_states": {"env_states": target[[1]]}})
    after = u.get_state()
    assert calls == []
    assert torch.allclose(after[1], target[1], atol=1e-6)
    assert torch.equal(after[[0, 2]], before[[0, 2]])


def test_reset_to_env_states_with_obs_skips_get_obs(env, monkeypatch):
    u = env.unwrapped
    obs, _ = env.reset(seed=5)
    rows = torch.full((1, obs.shape[1]), 7.0)
    monkeypatch.setattr(u, "get_obs", lambda *a, **k: pytest.fail("get_obs must not be called"))
    out, _ = env.reset(options={"env_idx": [2], "reset_to_env_states": {"env_states": u.get_state()[[2]], "obs": rows}})
    assert torch.equal(out[2], rows[0]) and torch.equal(out[:2], obs[:2])
    assert not torch.equal(obs[2], out[2])  # the earlier returned obs was not modified


def test_bad_reset_to_env_states_changes_nothing(env):
    u = env.unwrapped
    env.reset(seed=6)
    advance(env, 1)
    before, steps = u.get_state(), u.elapsed_steps
    with pytest.raises(ValueError, match="shape"):
        env.reset(options={"reset_to_env_states": {"env_states": before[:2]}})
    with pytest.raises(KeyError, match="env_states"):
        env.reset(options={"reset_to_env_states": {"states": before}})
    bad = u.get_state_dict()
    del bad["actors"][next(iter(bad["actors"]))]
    with pytest.raises(KeyError, match="missing keys"):
        env.reset(options={"reset_to_env_states": {"env_states": bad}})
    with pytest.raises(ValueError, match="obs"):
        env.reset(options={"reset_to_env_states": {"env_states": before, "obs": torch.zeros(N, 3)}})
    assert torch.equal(u.get_state(), before) and torch.equal(u.elapsed_steps, steps)


# ---------------------------------------------------------------- reward hooks see the raw dict
@pytest.mark.parametrize("obs_mode", ["state", "state_dict", "none"])
def test_reward_hooks_get_the_raw_observation_dict(obs_mode):
    seen = {}

    class Probe(FrankaLiftEnv):
        def compute_normalized_dense_reward(self, obs, action, info):
            seen["obs"] = obs
            return super().compute_normalized_dense_reward(obs, action, info)

    e = Probe(num_envs=2, obs_mode=obs_mode)
    try:
        e.reset(seed=0)
        returned, *_ = e.step(torch.zeros(2, 8))
        obs = seen["obs"]
        assert isinstance(obs, dict)
        if obs_mode == "none":
            assert obs == {}
        else:
            assert set(obs) == {"agent", "extra"} and obs["agent"]["qpos"].shape == (2, 9)
            assert obs["extra"]["block_pose"].shape == (2, 7)
        if obs_mode == "state":
            assert returned.shape == (2, 36)  # what the user gets is still flat
    finally:
        e.close()


# ---------------------------------------------------------------- torch draws follow the seeds
class TorchRandLift(FrankaLiftEnv):
    """FrankaLift drawing its cube offset with torch.rand, as the Prop seed's snippet does."""

    def _initialize_episode(self, env_idx, options):
        super()._initialize_episode(env_idx, options)
        pose = self.block.default_pose[env_idx].clone()
        pose[:, :2] += (torch.rand(len(env_idx), 2) * 2 - 1) * 0.1
        pose[:, 1] += torch.randn(len(env_idx)) * 0.01
        self.block.set_pose(pose, env_ids=env_idx)


def local_xy(env):
    return env.block.state.pose[:, :2] - env.scene.env_origins[:, :2]


def test_torch_draws_are_reproducible_and_per_env():
    batch, single = TorchRandLift(num_envs=4), TorchRandLift(num_envs=1)
    try:
        batch.reset(seed=123)
        first = local_xy(batch)
        batch.reset()
        assert not torch.allclose(local_xy(batch), first)  # unseeded resets advance the streams
        batch.reset(seed=123)
        assert torch.equal(local_xy(batch), first)
        assert len({tuple(r.tolist()) for r in first}) == 4
        single.reset(seed=125)  # env 2 of the batch was seeded 123 + 2
        assert torch.allclose(local_xy(single)[0], first[2], atol=1e-6)
        batch.reset(seed=[125], options={"env_idx": [0]})  # a partial reset draws the same rows
        assert torch.allclose(local_xy(batch)[0], first[2], atol=1e-6)
    finally:
        batch.close()
        single.close()


# ---------------------------------------------------------------- fixed main seed at creation
FRESH = """
import torch, simulo_envs
from simulo_envs.envs.registration import make
e = make("FrankaLift-v1", num_envs=2)
obs, _ = e.reset()
print(repr(obs[:, 27:29].tolist()), list(e._episode_seed), list(e._main_seed))
"""


def test_first_unseeded_reset_is_the_same_in_fresh_processes():
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, check=True).stdout.strip()
    e = simulo_envs.make("FrankaLift-v1", num_envs=2)
    try:
        assert list(e._main_seed) == [2022, 2023]
        obs, _ = e.reset()
        assert out == f"{obs[:, 27:29].tolist()!r} {list(e._episode_seed)} {list(e._main_seed)}"
        second, _ = e.reset()
        assert not torch.allclose(second, obs)  # later unseeded resets advance
    finally:
        e.close()


def test_enhanced_determinism_draws_a_replayable_episode_seed():
    e = simulo_envs.make("FrankaLift-v1", num_envs=2, enhanced_determinism=True)
    single = simulo_envs.make("FrankaLift-v1", num_envs=1)
    try:
        e.reset()
        seeds = e._episode_seed
        assert seeds.tolist() != [2022, 2023]
        pose = local_xy(e)
        single.reset(seed=int(seeds[1]))
        assert torch.allclose(local_xy(single)[0], pose[1], atol=1e-6)
    finally:
        e.close()
        single.close()


# ---------------------------------------------------------------- default reward mode
def test_reward_mode_none_is_the_first_supported_mode():
    e = simulo_envs.make("FrankaLift-v1", num_envs=1, reward_mode=None)
    try:
        assert e.reward_mode == FrankaLiftEnv.SUPPORTED_REWARD_MODES[0] == "normalized_dense"
        e.reset(seed=0)
        _, reward, *_ = e.step(torch.zeros(1, 8))
        assert 0 < reward.item() <= 1
    finally:
        e.close()
    assert np.array_equal(FrankaLiftEnv.SUPPORTED_REWARD_MODES, ("normalized_dense", "dense", "sparse", "none"))
