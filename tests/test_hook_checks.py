"""A task's hook outputs are checked at the first step after each build of its scene: a wrong
shape or a missing ``success`` raises a ValueError naming the hook, the key and the expected shape
(``simulo_envs/envs/hook_checks.py``), not a failure deep inside the framework."""

from __future__ import annotations

import re

import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.tasks.franka_reach import FrankaReachEnv

N = 4


def make(overrides: dict, num_envs: int = N, **kwargs):
    cls = type("MyReach", (FrankaReachEnv,), overrides)
    return cls(num_envs=num_envs, reward_mode=kwargs.pop("reward_mode", "dense"), **kwargs)


def step(env):
    return env.step(torch.zeros(env.num_envs, env.single_action_space.shape[0]))


def test_a_reward_of_shape_n_by_1_names_the_reward_hook():
    def compute_dense_reward(self, obs, action, info):
        return FrankaReachEnv.compute_dense_reward(self, obs, action, info)[:, None]

    env = make({"compute_dense_reward": compute_dense_reward})
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"MyReach\.compute_dense_reward\(\) returned shape \(4, 1\).*shape \(4,\)"):
        step(env)
    env.close()


def test_the_normalized_reward_hook_is_named_in_its_mode():
    def compute_normalized_dense_reward(self, obs, action, info):
        return torch.zeros(self.num_envs, dtype=torch.int64)

    env = make({"compute_normalized_dense_reward": compute_normalized_dense_reward}, reward_mode="normalized_dense")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"compute_normalized_dense_reward\(\) returned shape \(4,\) torch\.int64"):
        step(env)
    env.close()


@pytest.mark.parametrize("bad", [torch.zeros(3), torch.zeros(2, 3), torch.zeros(5)])
def test_an_obs_extra_without_the_env_dimension_names_hook_and_key(bad):
    def _get_obs_extra(self, info):
        return {**FrankaReachEnv._get_obs_extra(self, info), "bias": bad}

    # The reset that construction does is where it shows first.
    with pytest.raises(ValueError, match=r"_get_obs_extra\(\) entry obs\['extra'\]\['bias'\] has shape "
                                         + re.escape(f"{tuple(bad.shape)}; expected the env dimension first, ({N}, ...)")):
        make({"_get_obs_extra": _get_obs_extra})


def test_an_obs_extra_with_another_first_dimension_is_named():
    def _get_obs_extra(self, info):
        return {**FrankaReachEnv._get_obs_extra(self, info), "table": torch.zeros(3, 2)}

    with pytest.raises(ValueError, match=r"_get_obs_extra\(\) entry obs\['extra'\]\['table'\] has shape \(3, 2\)"):
        make({"_get_obs_extra": _get_obs_extra}, num_envs=2)


def test_evaluate_without_success_names_evaluate_and_success():
    def evaluate(self):
        info = FrankaReachEnv.evaluate(self)
        del info["success"]
        return info

    env = make({"evaluate": evaluate})
    env.reset(seed=0)
    # Checked before the reward hook reads info["success"] (a bare KeyError otherwise).
    with pytest.raises(ValueError, match=r"MyReach\.evaluate\(\) returned no 'success' entry.*bool \(4,\)"):
        step(env)
    env.close()


@pytest.mark.parametrize("key, value, shape", [("success", lambda n: torch.zeros(n, 1, dtype=torch.bool), r"\(4, 1\)"),
                                               ("success", lambda n: torch.zeros(n), r"\(4,\) torch\.float32"),
                                               ("fail", lambda n: torch.zeros(1, dtype=torch.bool), r"\(1,\)"),
                                               ("distance", lambda n: torch.zeros(2), r"\(2,\)")])
def test_evaluate_entries_must_be_per_env(key, value, shape):
    def evaluate(self):
        return {**FrankaReachEnv.evaluate(self), key: value(self.num_envs)}

    def compute_dense_reward(self, obs, action, info):
        return torch.zeros(self.num_envs)

    env = make({"evaluate": evaluate, "compute_dense_reward": compute_dense_reward})
    env.reset(seed=0)
    with pytest.raises(ValueError, match=rf"evaluate\(\) entry .*{key}.* has shape {shape}"):
        step(env)
    env.close()


def test_reward_terms_must_be_per_env():
    def compute_dense_reward(self, obs, action, info):
        reward = FrankaReachEnv.compute_dense_reward(self, obs, action, info)
        info["reward_terms"]["reach"] = info["reward_terms"]["reach"].mean()
        return reward

    env = make({"compute_dense_reward": compute_dense_reward})
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"compute_dense_reward\(\) put info\['reward_terms'\]\['reach'\] of shape \(\)"):
        step(env)
    env.close()


def test_checked_on_the_first_step_after_each_build_only():
    calls = []

    def compute_dense_reward(self, obs, action, info):
        calls.append(1)
        reward = FrankaReachEnv.compute_dense_reward(self, obs, action, info)
        return reward[:, None] if self.bad else reward

    env = make({"compute_dense_reward": compute_dense_reward, "bad": False})
    env.reset(seed=0)
    step(env)
    env.bad = True          # later steps of the same build are not checked again
    _, reward, *_ = step(env)
    assert tuple(reward.shape) == (N, 1) and len(calls) == 2   # the reward hook still runs once per step
    env.reset(options={"reconfigure": True})
    with pytest.raises(ValueError, match=r"compute_dense_reward\(\) returned shape \(4, 1\)"):
        step(env)
    env.close()


def test_a_correct_task_and_a_task_without_predicates_pass():
    env = make({})
    env.reset(seed=0)
    _, reward, terminated, _, info = step(env)
    assert reward.shape == (N,) and terminated.shape == (N,) and info["success"].shape == (N,)
    env.close()

    # BaseEnv's own evaluate (no predicates): nothing to check.
    bare = make({"evaluate": BaseEnv.evaluate, "_get_obs_extra": BaseEnv._get_obs_extra}, reward_mode="sparse")
    bare.reset(seed=0)
    _, reward, terminated, _, _ = step(bare)
    assert reward.tolist() == [0.0] * N and not terminated.any()
    bare.close()
