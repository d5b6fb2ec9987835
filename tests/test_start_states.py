"""Training episodes that start from scripted-expert states (``simulo_envs.training.start_states``):
the bank holds the expert's successful episodes env-local, restored states are exact at any env's
origin, the fraction is honoured, evaluation never uses them, and bad settings are refused."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import torch

pytest.importorskip("rsl_rl")

from simulo_envs.tasks import franka_stack_v2_ppo  # noqa: E402
from simulo_envs.tasks.franka_stack import FrankaStackEnv  # noqa: E402
from simulo_envs.tasks.franka_push import FrankaPushEnv  # noqa: E402
from simulo_envs.tasks.franka_reach import FrankaReachEnv  # noqa: E402
from simulo_envs.training.start_states import StartFromStates, check_start_states, expert_start_states  # noqa: E402
from simulo_envs.training.rsl_rl_train import make_rsl_env, plan_training, train_config_for  # noqa: E402
from simulo_envs.vector.vector_env import make_vector_env  # noqa: E402

KW = {"control_mode": "pd_ee_delta_pos", "reward_mode": "normalized_dense"}


@pytest.fixture(scope="module")
def bank():
    return expert_start_states(FrankaStackEnv, 6, 2 ** 20, KW)


def _local_rows(env) -> torch.Tensor:
    """(N, 23): A's and B's poses, env-local, and the robot's qpos."""
    sd = env.get_state_dict()
    a, b = sd["actors"]["CubeA"][:, :7].clone(), sd["actors"]["CubeB"][:, :7].clone()
    a[:, :3] -= env.env_origins
    b[:, :3] -= env.env_origins
    return torch.cat([a, b, sd["articulations"]["Robot"][:, 13:22]], 1)


def _bank_rows(bank) -> torch.Tensor:
    states = bank.states
    return torch.cat([states["actors"]["CubeA"][:, :7], states["actors"]["CubeB"][:, :7],
                      states["articulations"]["Robot"][:, 13:22]], 1)


def test_the_bank_holds_every_step_of_the_successful_expert_episodes_env_local(bank):
    assert bank.episodes == 6                      # the Stack expert succeeds in every episode
    assert 6 * 30 < len(bank) < 6 * 80             # each episode: 30-80 steps before its success
    assert int(bank.steps.min()) == 0 and 30 < int(bank.steps.max()) < 80
    a = bank.states["actors"]["CubeA"]
    assert float(a[:, 0].min()) > 0.3 and float(a[:, 0].max()) < 0.75  # env-local: near x = 0.5
    assert float(a[:, 2].max()) > 0.06              # some states carry A above B


def test_restored_states_are_exact_at_every_envs_origin(bank):
    env = FrankaStackEnv(num_envs=4, **KW)
    try:
        wrapped = StartFromStates(env, bank, fraction=1.0, seed=3)
        wrapped.reset(seed=0)
        assert wrapped.started_from_states == 4
        assert int((env.env_origins[:, :2].abs().sum(1) > 0).sum()) >= 1  # the envs sit apart
        distance, row = torch.cdist(_local_rows(env), _bank_rows(bank)).min(1)
        assert float(distance.max()) < 5e-3           # each env holds one bank state (poses, qpos)
        positions = _local_rows(env)[:, [0, 1, 2, 7, 8, 9]] - _bank_rows(bank)[row][:, [0, 1, 2, 7, 8, 9]]
        assert float(positions.abs().max()) < 1e-5    # at its own origin, to float32 rounding
        assert torch.equal(env.elapsed_steps, torch.zeros(4, dtype=env.elapsed_steps.dtype))
    finally:
        env.close()


def test_a_fraction_of_zero_changes_nothing(bank):
    plain, wrapped_env = FrankaStackEnv(num_envs=3, **KW), FrankaStackEnv(num_envs=3, **KW)
    try:
        wrapped = StartFromStates(wrapped_env, bank, fraction=0.0)
        expected, _ = plain.reset(seed=5)
        got, _ = wrapped.reset(seed=5)
        assert torch.equal(expected, got) and wrapped.started_from_states == 0
    finally:
        plain.close()
        wrapped_env.close()


def test_autoresets_start_from_bank_states_and_leave_the_other_envs_alone(bank):
    venv = make_vector_env(FrankaStackEnv, num_envs=4, record_metrics=True, max_episode_steps=2,
                           ignore_terminations=True,
                           env_wrapper=partial(StartFromStates, bank=bank, fraction=1.0, seed=0), **KW)
    try:
        venv.reset(seed=0)
        started = venv.env.started_from_states
        venv.base_env.set_elapsed_steps([0, 1, 0, 0])   # env 1 times out at the next step
        before = _local_rows(venv.base_env)
        obs, _, _, truncated, info = venv.step(torch.zeros(4, 4))
        assert truncated.tolist() == [False, True, False, False]
        assert venv.env.started_from_states == started + 1
        after = _local_rows(venv.base_env)
        assert float(torch.cdist(after[1:2], _bank_rows(bank)).min()) < 5e-3
        assert not torch.allclose(after[1], before[1])
        # what the step returned is the envs' state now: the restored row and the others
        base = venv.base_env
        torch.testing.assert_close(obs, base.get_obs(base.get_info()))
        torch.testing.assert_close(info["a_pose"], base.get_info()["a_pose"])
        assert info["elapsed_steps"].tolist() == [1, 0, 1, 1]
    finally:
        venv.close()


def test_the_stack_v2_recipe_starts_half_its_training_episodes_and_no_evaluation_episode_from_states():
    assert "start_states" not in train_config_for("FrankaStack-v1")
    config = train_config_for("FrankaStack-v2")
    assert config["start_states"] == {"fraction": 0.5, "expert_episodes": 64}
    small = {**config, "start_states": {"fraction": 0.5, "expert_episodes": 2}}
    training = make_rsl_env("FrankaStack-v2", 16, small, 0)
    try:
        wrapper = training.venv.env
        assert isinstance(wrapper, StartFromStates)
        counts = []
        for _ in range(2):
            wrapper.started_from_states = 0
            training.reset(seed=0)
            counts.append(wrapper.started_from_states)
        assert counts[0] == counts[1] and 3 <= counts[0] <= 13   # 16 envs at 0.5; a seed repeats the draws
    finally:
        training.close()
    evaluation = make_rsl_env("FrankaStack-v2", 2, small, 0, evaluation=True)
    try:
        assert not isinstance(evaluation.venv.env, StartFromStates)
    finally:
        evaluation.close()


@pytest.mark.parametrize("bad, error", [
    ({"fraction": 1.5, "expert_episodes": 4}, ValueError),
    ({"fraction": -0.1, "expert_episodes": 4}, ValueError),
    ({"fraction": "half", "expert_episodes": 4}, ValueError),
    ({"fraction": 0.5, "expert_episodes": 0}, ValueError),
    ({"fraction": 0.5, "expert_episodes": 2.5}, ValueError),
    ({"fraction": 0.5}, ValueError),
    ({"fraction": 0.5, "expert_episodes": 4, "schedule": "reverse"}, ValueError),
    ([0.5, 4], ValueError),
])
def test_a_bad_start_states_setting_is_refused_before_anything_is_built(monkeypatch, bad, error):
    monkeypatch.setitem(franka_stack_v2_ppo.TRAIN_CONFIG, "start_states", bad)
    with pytest.raises(error, match="start_states"):
        plan_training("FrankaStack-v2", num_envs=2, total_timesteps=100)


def test_start_states_need_a_task_whole_in_its_state_a_scripted_expert_and_envs_in_this_process():
    setting = {"fraction": 0.5, "expert_episodes": 2}
    check_start_states(FrankaStackEnv, setting)
    with pytest.raises(ValueError, match="worker processes"):
        check_start_states(FrankaStackEnv, setting, num_workers=2)
    with pytest.raises(ValueError, match="episodes_from_states"):   # its goal is drawn per episode
        check_start_states(FrankaPushEnv, setting)
    with pytest.raises(ValueError, match="worker processes"):
        plan_training("FrankaStack-v2", num_envs=2, total_timesteps=100, vector_kwargs={"num_workers": 2})
    with pytest.raises(KeyError, match="scripted expert"):
        expert_start_states(FrankaReachEnv, 2, 0, KW)
    with pytest.raises(ValueError, match="num_workers=1"):
        make_vector_env(FrankaStackEnv, num_envs=2, num_workers=2, env_wrapper=lambda env: env, **KW)


def test_a_bad_fraction_given_to_the_wrapper_is_refused(bank):
    env = FrankaStackEnv(num_envs=1, **KW)
    try:
        for bad in (1.01, -1, True, None):
            with pytest.raises(ValueError, match="fraction"):
                StartFromStates(env, bank, fraction=bad)
    finally:
        env.close()


def test_the_wrapper_takes_numpy_fractions_and_refuses_a_seed_that_is_no_int(bank):
    env = FrankaStackEnv(num_envs=1, **KW)
    try:
        assert StartFromStates(env, bank, fraction=np.float32(0.25)).fraction == 0.25
        for bad in (None, 1.5, "0"):
            with pytest.raises(ValueError, match="seed must be an int"):
                StartFromStates(env, bank, fraction=0.5, seed=bad)
    finally:
        env.close()


def test_a_bank_of_another_task_and_a_task_not_whole_in_its_state_are_refused_when_wrapping(bank):
    push = FrankaPushEnv(num_envs=2, **KW)
    try:
        with pytest.raises(ValueError, match="episodes_from_states"):
            StartFromStates(push, bank, fraction=1.0)
        push.episodes_from_states = True   # as if it declared it: the bank's actors are still not its own
        with pytest.raises(ValueError, match=r"not the env's \[.*'Cube'.*another task"):
            StartFromStates(push, bank, fraction=1.0)
    finally:
        push.close()


def test_an_empty_partial_reset_returns_every_envs_obs_and_a_refused_reset_draws_nothing(bank):
    envs = [StartFromStates(FrankaStackEnv(num_envs=4, **KW), bank, fraction=0.5, seed=3) for _ in range(2)]
    try:
        for env in envs:
            env.reset(seed=0)
        obs, info = envs[0].reset(options={"env_idx": []})
        assert obs.shape == (4, envs[0].unwrapped.single_observation_space.shape[0])
        assert set(info) >= {"success", "elapsed_steps"}
        for bad in ({"options": {"env_idx": [0], "bogus": 1}}, {"seed": [1, 2]}, {"options": {"env_ids": [0]}}):
            with pytest.raises((ValueError, TypeError, KeyError)):
                envs[0].reset(**bad)
        assert torch.equal(envs[0].generator.get_state(), envs[1].generator.get_state())
        assert envs[0].started_from_states == envs[1].started_from_states
        a = envs[0].reset(options={"env_idx": [0, 1, 2, 3]})[0]
        b = envs[1].reset(options={"env_idx": [0, 1, 2, 3]})[0]
        assert torch.equal(a, b)
    finally:
        for env in envs:
            env.close()
