"""The rsl-rl-lib VecEnv adapter (issue 5)."""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("rsl_rl")
from rsl_rl.env import VecEnv  # noqa: E402
from rsl_rl.runners import OnPolicyRunner  # noqa: E402
from tensordict import TensorDict  # noqa: E402

import simulo_envs  # noqa: F401,E402
from simulo_envs.tasks.franka_reach import TRAIN_CONFIG, FrankaReachEnv  # noqa: E402
from simulo_envs.wrappers.rsl_rl import RslRlVecEnv  # noqa: E402


def _runner_cfg() -> dict:
    cfg = copy.deepcopy(TRAIN_CONFIG["runner"])
    cfg["num_steps_per_env"] = 8
    cfg["actor"]["hidden_dims"] = [32, 32]
    cfg["critic"]["hidden_dims"] = [32, 32]
    return cfg


def test_interface():
    env = RslRlVecEnv(FrankaReachEnv(num_envs=3, max_episode_steps=4))
    assert isinstance(env, VecEnv)
    assert (env.num_envs, env.num_actions, env.max_episode_length) == (3, 4, 4)
    obs = env.get_observations()
    assert isinstance(obs, TensorDict) and obs["policy"].shape == (3, 27)
    for _ in range(4):
        obs, rewards, dones, extras = env.step(torch.zeros(3, 4))
    assert rewards.shape == (3,) and rewards.dtype == torch.float32
    assert dones.tolist() == [1, 1, 1]
    assert extras["time_outs"].all()
    assert extras["episode"]["length"].tolist() == [4.0, 4.0, 4.0]
    assert torch.equal(env.episode_length_buf, torch.zeros(3, dtype=torch.long))
    env.episode_length_buf = torch.tensor([0, 1, 2])
    _, _, dones, _ = env.step(torch.zeros(3, 4))
    assert env.episode_length_buf.tolist() == [1, 2, 3] and not dones.any()
    env.close()


def test_on_policy_runner_learns_one_iteration(tmp_path):
    env = RslRlVecEnv(FrankaReachEnv(num_envs=4, max_episode_steps=8), {"ignore_terminations": True})
    runner = OnPolicyRunner(env, _runner_cfg(), log_dir=str(tmp_path), device="cpu")
    runner.learn(num_learning_iterations=1, init_at_random_ep_len=True)
    assert (tmp_path / "model_0.pt").exists()
    env.close()


def test_privileged_group_feeds_an_asymmetric_critic(tmp_path):
    """A randomized task adds the "privileged" group; a critic reading it trains."""
    env = RslRlVecEnv(simulo_envs.make("FrankaLiftRandomized-v1", num_envs=2, max_episode_steps=4))
    obs = env.get_observations()
    assert set(obs.keys()) == {"policy", "privileged"} and obs["privileged"].shape == (2, 40)
    assert torch.allclose(obs["privileged"][:, 1], env.base_env.block.mass, rtol=1e-6)  # column 1: block.mass
    cfg = _runner_cfg()
    cfg["obs_groups"] = {"actor": ["policy"], "critic": ["policy", "privileged"]}
    runner = OnPolicyRunner(env, cfg, log_dir=str(tmp_path), device="cpu")
    runner.learn(num_learning_iterations=1)
    assert (tmp_path / "model_0.pt").exists()
    env.close()
