"""The Stable-Baselines3 VecEnv adapter (issue 5)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

pytest.importorskip("stable_baselines3")
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

import simulo_envs  # noqa: F401,E402
from simulo_envs.tasks.franka_reach import FrankaReachEnv  # noqa: E402
from simulo_envs.wrappers.sb3 import SB3VecEnv  # noqa: E402


class CountingWrapper(gym.Wrapper):
    """Stands in for the video recorder: a plain Gymnasium wrapper that sees every call."""

    def __init__(self, env):
        super().__init__(env)
        self.steps = 0
        self.resets = []

    def step(self, action):
        self.steps += 1
        return self.env.step(action)

    def reset(self, *, seed=None, options=None):
        self.resets.append(None if options is None else options.get("env_idx"))
        return self.env.reset(seed=seed, options=options)


def test_ppo_learns_512_steps():
    adapter = SB3VecEnv(FrankaReachEnv(num_envs=4, max_episode_steps=16))
    assert isinstance(adapter, VecEnv)
    model = PPO("MlpPolicy", adapter, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # episodes finished and were reported
    adapter.close()


def test_step_wait_infos_and_stats_restart_on_reset():
    wrapped = CountingWrapper(FrankaReachEnv(num_envs=2, max_episode_steps=10))
    adapter = SB3VecEnv(wrapped)
    obs = adapter.reset()
    assert isinstance(obs, np.ndarray) and obs.dtype == np.float32 and obs.shape == (2, 27)
    zero = np.zeros((2, 4), dtype=np.float32)
    for _ in range(3):
        adapter.step(zero)
    adapter.reset()  # explicit reset: the 3 steps above belong to no episode
    for step in range(10):
        obs, rewards, dones, infos = adapter.step(zero)
        assert rewards.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == 2
        if step < 9:
            assert not dones.any() and all("episode" not in i for i in infos)
    assert dones.all()
    for info in infos:
        assert info["episode"]["l"] == 10  # not 13
        assert info["TimeLimit.truncated"] is True
        assert info["is_success"] is False
        terminal = info["terminal_observation"]
        assert terminal.dtype == np.float32 and terminal.shape == (27,)
    # the terminal observation is the finished episode's; obs is the new episode's
    assert not np.array_equal(infos[0]["terminal_observation"], obs[0])
    # every call went through the wrapper underneath: steps, explicit resets, the autoreset
    assert wrapped.steps == 13
    assert wrapped.resets[-1] is not None and torch.as_tensor(wrapped.resets[-1]).all()
    assert adapter.env_is_wrapped(CountingWrapper) == [True, True]
    assert adapter.get_attr("num_envs") == [2, 2]
    adapter.close()
