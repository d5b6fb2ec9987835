"""Partial reset: reset(options={"env_idx": ...}) re-initialises only the listed envs."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents.panda import REST_QPOS
from conftest import BACKENDS_UNDER_TEST

N = 4
SPAWN_X, SPAWN_Y, SPAWN_Z = 0.5, 0.0, 0.025
X_RANGE, Y_RANGE = 0.10, 0.20


@pytest.fixture(scope="module", params=BACKENDS_UNDER_TEST)
def env(request):
    e = gym.make("FrankaLift-v1", num_envs=N, sim_backend=request.param)  # default spacing: env origins differ
    yield e
    e.close()


def forms_of_1_3():
    return {
        "list": [1, 3],
        "tuple": (1, 3),
        "numpy": np.array([1, 3]),
        "numpy_int32": np.array([1, 3], dtype=np.int32),
        "torch": torch.tensor([1, 3]),
        "torch_int32": torch.tensor([1, 3], dtype=torch.int32),
        "numpy_mask": np.array([False, True, False, True]),
        "torch_mask": torch.tensor([False, True, False, True]),
        "list_mask": [False, True, False, True],
    }


def snapshot(env):
    u = env.unwrapped
    return {
        "block": torch.cat([u.block.state.pose, u.block.state.linear_velocity, u.block.state.angular_velocity], 1),
        "qpos": u.agent.robot.state.qpos,
        "qvel": u.agent.robot.state.qvel,
        "tcp": u.agent.robot.state.tcp_pose,
        "elapsed": u.elapsed_steps,
        "state": u.get_state(),
    }


def run_three_random_steps(env, seed=0):
    env.reset(seed=seed)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(3):
        env.step(torch.rand(N, 8, generator=gen) * 2 - 1)


def test_three_steps_move_things(env):
    """Guard: after 3 random steps the robot has moved away from rest and every env counts 3 steps."""
    run_three_random_steps(env)
    s = snapshot(env)
    assert s["elapsed"].tolist() == [3, 3, 3, 3]
    assert (s["qpos"] - torch.tensor(REST_QPOS)).abs().max() > 1e-3


@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_partial_reset(env, form):
    u = env.unwrapped
    run_three_random_steps(env)
    before = snapshot(env)
    obs, info = env.reset(options={"env_idx": forms_of_1_3()[form]})
    after = snapshot(env)
    kept, reset = [0, 2], [1, 3]

    # Envs 0 and 2: untouched, bit for bit.
    assert torch.equal(after["block"][kept], before["block"][kept])
    assert torch.equal(after["qpos"][kept], before["qpos"][kept])
    assert torch.equal(after["qvel"][kept], before["qvel"][kept])
    assert torch.equal(after["tcp"][kept], before["tcp"][kept])
    assert torch.equal(after["state"][kept], before["state"][kept])
    assert after["elapsed"][kept].tolist() == [3, 3]
    assert info["elapsed_steps"].tolist() == [3, 0, 3, 0]

    # Envs 1 and 3: a new episode.
    assert after["elapsed"][reset].tolist() == [0, 0]
    assert torch.count_nonzero(after["block"][reset, 7:]) == 0  # velocity exactly 0
    local = after["block"][reset, :3] - u.scene.env_origins[reset]
    assert ((local[:, 0] >= SPAWN_X - X_RANGE) & (local[:, 0] <= SPAWN_X + X_RANGE)).all(), local
    assert ((local[:, 1] >= SPAWN_Y - Y_RANGE) & (local[:, 1] <= SPAWN_Y + Y_RANGE)).all(), local
    assert torch.allclose(local[:, 2], torch.full((2,), SPAWN_Z), atol=1e-6)
    assert torch.allclose(after["block"][reset, 3:7], torch.tensor([[1.0, 0, 0, 0]] * 2), atol=1e-6)
    assert torch.allclose(after["qpos"][reset], torch.tensor([REST_QPOS] * 2), atol=1e-6)
    assert torch.count_nonzero(after["qvel"][reset]) == 0

    # The observation returned by reset reflects the new state (env-local block pose).
    obs_dict = u.get_obs(unflattened=True)
    assert torch.allclose(obs_dict["extra"]["block_pose"][reset, :3], local, atol=1e-6)


def _reset_result(env, env_idx):
    run_three_random_steps(env, seed=7)
    env.reset(options={"env_idx": env_idx})
    s = snapshot(env)
    return s["block"][[1, 3]], s["qpos"][[1, 3]], s["elapsed"]


def test_every_form_gives_the_same_result(env):
    ref_block, ref_qpos, ref_elapsed = _reset_result(env, [1, 3])
    for name, form in forms_of_1_3().items():
        block, qpos, elapsed = _reset_result(env, form)
        assert torch.equal(block, ref_block), name
        assert torch.equal(qpos, ref_qpos), name
        assert torch.equal(elapsed, ref_elapsed), name


def test_reset_envs_draw_new_positions(env):
    """Two successive partial resets of the same envs give different block positions (the stream advances)."""
    run_three_random_steps(env)
    env.reset(options={"env_idx": [1, 3]})
    first = env.unwrapped.block.state.pose[[1, 3], :2]
    env.reset(options={"env_idx": [1, 3]})
    second = env.unwrapped.block.state.pose[[1, 3], :2]
    assert not torch.equal(first, second)


@pytest.mark.parametrize("empty", [[], (), np.array([], dtype=np.int64), torch.tensor([], dtype=torch.long),
                                   np.zeros(N, dtype=bool)])
def test_empty_env_idx_changes_nothing(env, empty):
    run_three_random_steps(env)
    before = snapshot(env)
    env.reset(options={"env_idx": empty})
    after = snapshot(env)
    for key in before:
        assert torch.equal(after[key], before[key]), key


@pytest.mark.parametrize("bad,exc", [([4], IndexError), ([-1], IndexError), ([1, 1], ValueError),
                                     ([1.0, 3.0], TypeError), (np.array([True, False]), ValueError)])
def test_bad_env_idx_raises_and_changes_nothing(env, bad, exc):
    run_three_random_steps(env)
    before = snapshot(env)
    with pytest.raises(exc):
        env.reset(options={"env_idx": bad})
    after = snapshot(env)
    for key in before:
        assert torch.equal(after[key], before[key]), key


def test_step_after_partial_reset_counts_per_env(env):
    run_three_random_steps(env)
    env.reset(options={"env_idx": [1, 3]})
    env.step(torch.zeros(N, 8))
    assert env.unwrapped.elapsed_steps.tolist() == [4, 1, 4, 1]


def test_set_elapsed_steps_counts_on_from_the_written_counts(env):
    """BaseEnv.set_elapsed_steps: listed envs only, read back at once, the next step counts on from
    the written counts and truncates at the limit (counts above it accepted); nothing else moves."""
    u = env.unwrapped
    run_three_random_steps(env)
    limit = u.max_episode_steps
    state = u.get_state()
    u.set_elapsed_steps(torch.tensor([limit - 1, 7]), env_idx=[2, 0])
    assert u.elapsed_steps.tolist() == [7, 3, limit - 1, 3] and torch.equal(u.get_state(), state)
    _, _, _, truncated, info = env.step(torch.zeros(N, 8))
    assert info["elapsed_steps"].tolist() == [8, 4, limit, 4] and truncated.tolist() == [False, False, True, False]
    u.set_elapsed_steps(np.array([0.0, 1.0, 2.0, 5 * limit]))  # whole floats, as randint_like on floats gives
    _, _, _, truncated, info = env.step(torch.zeros(N, 8))
    assert info["elapsed_steps"].tolist() == [1, 2, 3, 5 * limit + 1] and truncated.tolist() == [False, False, False, True]


@pytest.mark.parametrize("steps, env_idx, error", [
    (torch.tensor([1, 2, 3]), None, ValueError),            # one count short
    (torch.tensor([[1, 2, 3, 4]]), None, ValueError),       # (1, N)
    (torch.tensor([1, -1, 2, 3]), None, ValueError),        # negative
    (np.array([1.5, 0, 0, 0]), None, ValueError),           # a fraction
    (np.array([np.nan, 0, 0, 0]), None, ValueError),
    (np.array([0, 0, 0, np.inf]), None, ValueError),
    ([2**31, 0, 0, 0], None, ValueError),                   # beyond the int32 counter
    (torch.tensor([True, False, True, False]), None, TypeError),
    (["1", "2", "3", "4"], None, TypeError),
    (None, None, TypeError),
    ([1], [4], IndexError),
    ([1, 2], [0, 0], ValueError),                           # duplicate ids
])
def test_set_elapsed_steps_refuses_bad_counts_and_changes_nothing(env, steps, env_idx, error):
    run_three_random_steps(env)
    before = snapshot(env)
    with pytest.raises(error, match="steps|env_idx"):
        env.unwrapped.set_elapsed_steps(steps, env_idx=env_idx)
    after = snapshot(env)
    for key in before:
        assert torch.equal(after[key], before[key]), key
