"""The Gymnasium vector env: autoreset by partial reset, as Gymnasium 1.x defines it (issue 5)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, VectorEnv

import simulo_envs  # noqa: F401
import simulo_envs.tasks.franka_reach  # noqa: F401  (until tasks/__init__ imports it)
from simulo_envs.tasks.franka_reach import FrankaReachEnv
from simulo_envs.vector import NumpyView, SimuloVectorEnv, attach_vector_entry_points

attach_vector_entry_points()  # until registration passes vector_entry_point itself

N, LIMIT, SEED = 4, 5, 3
PARTIAL_AT, PARTIAL_ENV = 2, 1


def _actions(steps: int) -> torch.Tensor:
    """A fixed sequence of small actions (steps, N, 4): the arm moves, no env reaches its goal."""
    generator = torch.Generator().manual_seed(0)
    return 0.2 * (torch.rand(steps, N, 4, generator=generator) * 2 - 1)


def _control_run(steps: int):
    """The same episodes without autoreset: the env itself, reset by hand where the vector env would.

    Returns per step: obs before any reset, done mask, obs after the resets."""
    env = FrankaReachEnv(num_envs=N, max_episode_steps=LIMIT)
    env.reset(seed=SEED)
    actions, records = _actions(steps), []
    for t in range(1, steps + 1):
        obs, _, terminated, truncated, _ = env.step(actions[t - 1])
        done = terminated | truncated
        before = obs.clone()
        if done.any():
            obs, _ = env.reset(options={"env_idx": done})
        if t == PARTIAL_AT:
            obs, _ = env.reset(options={"env_idx": [PARTIAL_ENV]})
        records.append((before, done.clone(), obs.clone()))
    env.close()
    return records


@pytest.fixture(scope="module")
def control():
    return _control_run(12)


def _vector(**kwargs) -> SimuloVectorEnv:
    venv = gym.make_vec("FrankaReach-v1", num_envs=N, vectorization_mode="vector_entry_point",
                        max_episode_steps=LIMIT, **kwargs)
    venv.reset(seed=SEED)
    return venv


def test_make_vec_returns_native_vector_env():
    venv = gym.make_vec("FrankaReach-v1", num_envs=2, vectorization_mode="vector_entry_point")
    assert isinstance(venv, SimuloVectorEnv) and isinstance(venv, VectorEnv)
    assert venv.num_envs == 2
    assert venv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert venv.single_observation_space.shape == (27,)
    assert venv.observation_space.shape == (2, 27)
    assert venv.single_action_space.shape == (4,)
    assert venv.action_space.shape == (2, 4)
    assert venv.base_env.max_episode_steps == 50
    venv.close()
    lift = gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.NEXT_STEP)
    assert isinstance(lift, SimuloVectorEnv)
    assert lift.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    lift.close()


def test_same_step_autoreset_matches_control_run(control):
    venv = _vector()
    actions = _actions(12)
    done_steps = {i: [] for i in range(N)}
    for t in range(1, 13):
        obs, reward, terminated, truncated, info = venv.step(actions[t - 1])
        before, done, after = control[t - 1]
        assert torch.equal(terminated | truncated, done)
        for i in torch.nonzero(done).flatten().tolist():
            done_steps[i].append(t)
        if done.any():
            assert torch.equal(info["_final_obs"], done) and torch.equal(info["_final_info"], done)
            # final_obs: the finished episode's last obs, as the run without autoreset saw it.
            assert torch.equal(info["final_obs"][done], before[done])
            assert torch.equal(info["final_info"]["elapsed_steps"][done], torch.full((int(done.sum()),), LIMIT, dtype=torch.int32))
            # the returned obs of a done env is the new episode's first obs
            assert torch.equal(obs[done], after[done])
            assert torch.equal(info["elapsed_steps"][done], torch.zeros(int(done.sum()), dtype=torch.int32))
        else:
            assert "final_obs" not in info and "final_info" not in info
        assert torch.equal(obs[~done], before[~done])
        if t == PARTIAL_AT:
            obs, _ = venv.reset(options={"env_idx": [PARTIAL_ENV]})
            assert torch.equal(obs, after)
    # env 1 was reset by hand at step 2, so its time-outs come 2 steps after the others'.
    assert done_steps == {0: [5, 10], 1: [7, 12], 2: [5, 10], 3: [5, 10]}
    venv.close()


def test_final_obs_and_info_are_copies():
    venv = _vector()
    actions = _actions(6)
    for t in range(LIMIT):
        obs, _, _, _, info = venv.step(actions[t])
    final_obs, final_info = info["final_obs"], info["final_info"]
    kept_obs = final_obs.clone()
    kept_tcp = final_info["tcp_pos"].clone()
    kept_mask = info["_final_obs"].clone()
    assert final_obs.data_ptr() != obs.data_ptr()
    assert final_info["tcp_pos"].data_ptr() != info["tcp_pos"].data_ptr()
    obs.add_(1.0)  # a user writing into the returned obs does not reach final_obs
    info["tcp_pos"].add_(1.0)
    venv.step(actions[LIMIT])
    assert torch.equal(final_obs, kept_obs)
    assert torch.equal(final_info["tcp_pos"], kept_tcp)
    assert torch.equal(info["_final_obs"], kept_mask)
    venv.close()


def test_next_step_autoreset(control):
    venv = _vector(autoreset_mode="NextStep")
    assert venv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    actions = _actions(7)
    for t in range(1, LIMIT + 1):
        obs, reward, terminated, truncated, info = venv.step(actions[t - 1])
        if t == PARTIAL_AT:
            venv.reset(options={"env_idx": [PARTIAL_ENV]})
    before, done, after = control[LIMIT - 1]
    # the finishing step returns the finished episode's last obs and no final_* keys
    assert torch.equal(truncated, done) and not terminated.any()
    assert torch.equal(obs[done], before[done])
    assert "final_obs" not in info
    # the next step resets those envs: their first obs, reward 0, not done
    obs, reward, terminated, truncated, info = venv.step(actions[LIMIT])
    assert torch.equal(obs[done], after[done])
    assert torch.all(reward[done] == 0)
    assert not (terminated | truncated)[done].any()
    assert torch.equal(info["elapsed_steps"][done], torch.zeros(int(done.sum()), dtype=torch.int32))
    assert torch.equal(info["elapsed_steps"][~done], torch.tensor([LIMIT + 1 - PARTIAL_AT], dtype=torch.int32))
    venv.close()


def test_terminated_truncated_are_bool_tensors_and_timeout_is_truncation():
    venv = _vector()
    actions = _actions(LIMIT)
    for t in range(LIMIT):
        _, reward, terminated, truncated, _ = venv.step(actions[t])
        for flag in (terminated, truncated):
            assert isinstance(flag, torch.Tensor) and not isinstance(flag, bool)
            assert flag.dtype == torch.bool and flag.shape == (N,)
        assert reward.dtype == torch.float32 and reward.shape == (N,)
    assert truncated.all() and not terminated.any()  # a time-out: truncated=True, terminated=False
    venv.close()


def _reach_policy(obs: torch.Tensor) -> torch.Tensor:
    """Proportional control of the TCP towards the goal (obs columns 24:27: TCP-to-goal)."""
    action = torch.zeros(obs.shape[0], 4)
    action[:, :3] = torch.clamp(5.0 * obs[:, 24:27], -1, 1)
    return action


def test_success_terminates_and_record_metrics():
    venv = gym.make_vec("FrankaReach-v1", num_envs=N, vectorization_mode="vector_entry_point", record_metrics=True)
    obs, _ = venv.reset(seed=0)
    returns = torch.zeros(N)
    for _ in range(50):
        obs, reward, terminated, truncated, info = venv.step(_reach_policy(obs))
        returns += reward
        episode = info["episode"]
        if terminated.any():
            break
    assert terminated.any() and not truncated[terminated].any()
    finished = info["final_info"]
    assert finished["success"][terminated].all()
    assert finished["episode"]["success_once"][terminated].all()
    assert finished["episode"]["success_at_end"][terminated].all()
    assert torch.allclose(finished["episode"]["return"][terminated], returns[terminated])
    assert torch.equal(episode["length"][terminated], finished["elapsed_steps"][terminated])
    # the reset envs' statistics restart with the new episode
    obs, reward, *_ , info = venv.step(_reach_policy(obs))
    assert torch.all(info["episode"]["length"][terminated] == 1)
    venv.close()


def test_ignore_terminations_resets_on_truncation_only():
    venv = gym.make_vec("FrankaReach-v1", num_envs=N, vectorization_mode="vector_entry_point",
                        max_episode_steps=30, ignore_terminations=True, record_metrics=True)
    obs, _ = venv.reset(seed=0)
    for t in range(1, 31):
        obs, _, terminated, truncated, info = venv.step(_reach_policy(obs))
        assert not terminated.any()
        assert truncated.all() == (t == 30)
    assert info["final_info"]["episode"]["success_once"].all()
    assert info["final_info"]["episode"]["success_at_end"].all()
    assert torch.all(info["final_info"]["episode"]["length"] == 30)
    venv.close()


def test_numpy_view():
    venv = NumpyView(_vector())
    assert venv.single_observation_space.dtype == np.float32
    obs, info = venv.reset(seed=SEED)
    assert isinstance(obs, np.ndarray) and obs.dtype == np.float32 and obs.shape == (N, 27)
    actions = _actions(LIMIT).numpy()
    for t in range(LIMIT):
        obs, reward, terminated, truncated, info = venv.step(actions[t])
    assert obs.dtype == np.float32 and reward.dtype == np.float32
    assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_ and truncated.all()
    assert isinstance(info["final_obs"], np.ndarray) and info["final_obs"].dtype == np.float32
    assert isinstance(info["_final_obs"], np.ndarray) and info["_final_obs"].all()
    venv.close()
