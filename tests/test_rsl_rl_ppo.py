"""FinalValuePPO's bootstrap from the final observation, OrthogonalMLPModel's init, and the
``final_obs`` / ``time_outs`` extras of RslRlVecEnv they read."""

from __future__ import annotations

import copy
import math

import pytest
import torch

pytest.importorskip("rsl_rl")
from rsl_rl.runners import OnPolicyRunner  # noqa: E402
from tensordict import TensorDict  # noqa: E402

import simulo_envs  # noqa: F401,E402
from simulo_envs.tasks.franka_reach import TRAIN_CONFIG, FrankaReachEnv  # noqa: E402
from simulo_envs.wrappers.rsl_rl import RslRlVecEnv  # noqa: E402
from simulo_envs.training.rsl_rl_ppo import FinalValuePPO, OrthogonalMLPModel  # noqa: E402

GAMMA = 0.8


def _runner(env, bootstrap="time_outs", algorithm="simulo_envs.training.rsl_rl_ppo:FinalValuePPO"):
    cfg = copy.deepcopy(TRAIN_CONFIG["runner"])
    cfg["num_steps_per_env"] = 4
    for model in ("actor", "critic"):
        cfg[model].update(class_name="simulo_envs.training.rsl_rl_ppo:OrthogonalMLPModel", hidden_dims=[16, 16])
    cfg["algorithm"].update(class_name=algorithm, gamma=GAMMA)
    if algorithm.endswith("FinalValuePPO"):
        cfg["algorithm"].update(bootstrap=bootstrap, adam_eps=1e-5)
    return OnPolicyRunner(env, cfg, log_dir=None, device="cpu")


@pytest.fixture(scope="module")
def env():
    env = RslRlVecEnv(FrankaReachEnv(num_envs=3, max_episode_steps=4))
    yield env
    env.close()


def test_extras_final_obs_and_time_outs(env):
    env.reset(seed=0)
    before = None
    for _ in range(4):
        before = env.get_observations()["policy"].clone()
        obs, _, dones, extras = env.step(torch.zeros(3, 4))
    assert dones.tolist() == [1, 1, 1] and extras["time_outs"].tolist() == [True, True, True]
    final = extras["final_obs"]["policy"]
    assert final.shape == (3, 27)
    # The final observation is the state the last action led to: neither the reset obs nor the one before.
    assert torch.equal(final, env.last_info["final_obs"])
    assert not torch.allclose(final, obs["policy"]) and not torch.allclose(final, before)
    _, _, _, extras = env.step(torch.zeros(3, 4))
    assert "final_obs" not in extras and not extras["time_outs"].any()


def _step_once(runner, env, dones, time_outs, final):
    alg = runner.alg
    obs = env.get_observations()
    alg.act(obs)
    values_before = alg.transition.values.squeeze(-1).clone()
    extras = {"time_outs": time_outs}
    if final is not None:
        extras["final_obs"] = TensorDict({"policy": final}, batch_size=[3])
    alg.process_env_step(obs, torch.ones(3), dones, extras)
    return alg.storage.rewards[alg.storage.step - 1].squeeze(-1), values_before, extras


@pytest.mark.parametrize("bootstrap", ["time_outs", "dones"])
def test_final_value_bootstrap(env, bootstrap):
    runner = _runner(env, bootstrap)
    alg = runner.alg
    final = torch.randn(3, 27)
    with torch.inference_mode():
        final_values = alg.critic(TensorDict({"policy": final}, batch_size=[3])).squeeze(-1)
        # env 0 truncated, env 1 terminated, env 2 still running.
        rewards, _, extras = _step_once(runner, env, torch.tensor([1, 1, 0]), torch.tensor([True, False, False]), final)
    expected = torch.ones(3)
    expected[0] += GAMMA * final_values[0]
    if bootstrap == "dones":
        expected[1] += GAMMA * final_values[1]
    assert torch.allclose(rewards, expected, atol=1e-6)
    assert "time_outs" in extras  # the caller's extras are left as they were
    assert alg.optimizer.param_groups[0]["eps"] == 1e-5


def test_without_final_obs_falls_back_to_library(env):
    runner = _runner(env)
    with torch.inference_mode():
        rewards, values, _ = _step_once(runner, env, torch.tensor([1, 0, 0]), torch.tensor([True, False, False]), None)
    assert torch.allclose(rewards, torch.tensor([1 + GAMMA * values[0].item(), 1.0, 1.0]), atol=1e-6)


def test_bad_options(env):
    with pytest.raises(ValueError, match="bootstrap"):
        _runner(env, bootstrap="never")
    cfg_runner = _runner(env)
    with pytest.raises(ValueError, match="adam_eps"):
        FinalValuePPO(cfg_runner.alg.actor, cfg_runner.alg.critic, cfg_runner.alg.storage, adam_eps=0.0)


def test_orthogonal_init():
    obs = TensorDict({"policy": torch.zeros(2, 10)}, batch_size=[2])
    model = OrthogonalMLPModel(obs, {"actor": ["policy"]}, "actor", 4, hidden_dims=[32, 32], activation="tanh",
                               output_gain=0.01)
    linears = [m for m in model.mlp if isinstance(m, torch.nn.Linear)]
    last = linears[-1].weight  # (4, 32): orthonormal rows times the gain
    assert torch.allclose(last @ last.T, 0.01 ** 2 * torch.eye(4), atol=1e-7)
    first = linears[0].weight  # (32, 10): orthonormal columns times sqrt(2)
    assert torch.allclose(first.T @ first, 2 * torch.eye(10), atol=1e-5)
    assert all(float(m.bias.detach().abs().max()) == 0.0 for m in linears)
    assert model(obs).abs().max() < 0.05 * math.sqrt(10)
