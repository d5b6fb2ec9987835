"""Bad input never reaches PhysX: it raises a clear ValueError and no env changes."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401

N = 3
NAN, INF = float("nan"), float("inf")


@pytest.fixture(scope="module")
def env():
    e = gym.make("FrankaLift-v1", num_envs=N)
    e.reset(seed=0)
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):  # a non-trivial state: the arm moving, velocities non-zero
        e.step(torch.rand(N, 8, generator=gen) * 2 - 1)
    yield e
    e.close()


def snapshot(env):
    u = env.unwrapped
    return {
        "state": u.get_state(),
        "targets": u.agent.robot.state.drive_targets,
        "elapsed": u.elapsed_steps,
        "tcp": u.agent.robot.state.tcp_pose,
    }


def assert_unchanged(env, before):
    after = snapshot(env)
    for key in before:
        assert torch.equal(after[key], before[key]), f"{key} changed after a rejected input"


def good_poses(k):
    pose = torch.zeros(k, 7)
    pose[:, 0] = 0.4
    pose[:, 2] = 0.1
    pose[:, 3] = 1.0
    return pose


def with_entry(t, row, col, value):
    t = t.clone()
    t[row, col] = value
    return t


def test_state_is_nontrivial(env):
    s = snapshot(env)
    assert torch.count_nonzero(s["state"]) > 0
    assert s["elapsed"].tolist() == [3] * N


# ---------------------------------------------------------------- Prop.set_pose / set_velocity
@pytest.mark.parametrize("bad,ids", [
    (good_poses(N)[:, :6], None),          # (N, 6)
    (good_poses(N - 1), None),             # too few rows
    (good_poses(N + 1), None),             # too many rows
    (good_poses(1)[0], None),              # (7,) unbatched
    (good_poses(N)[:, :, None], None),     # (N, 7, 1)
    (good_poses(N), [0, 2]),               # N rows for 2 envs
    (good_poses(1), [0, 2]),
])
def test_set_pose_wrong_shape(env, bad, ids):
    before = snapshot(env)
    with pytest.raises(ValueError, match=r"pose.*shape|shape.*pose"):
        env.unwrapped.block.set_pose(bad, env_ids=ids)
    assert_unchanged(env, before)


@pytest.mark.parametrize("col", [0, 2, 3, 6])
@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_set_pose_non_finite(env, col, value):
    before = snapshot(env)
    with pytest.raises(ValueError, match="NaN|inf"):
        env.unwrapped.block.set_pose(with_entry(good_poses(N), N - 1, col, value))  # only the last row is bad
    assert_unchanged(env, before)


def test_set_pose_non_finite_partial(env):
    before = snapshot(env)
    with pytest.raises(ValueError):
        env.unwrapped.block.set_pose(with_entry(good_poses(2), 1, 1, NAN), env_ids=[0, 2])
    assert_unchanged(env, before)


def test_set_pose_zero_quaternion(env):
    before = snapshot(env)
    bad = good_poses(N)
    bad[1, 3:] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        env.unwrapped.block.set_pose(bad)
    assert_unchanged(env, before)
    with pytest.raises(ValueError, match="quaternion"):
        env.unwrapped.block.set_pose(bad[1:2], env_ids=[1])
    assert_unchanged(env, before)


def test_set_pose_non_numeric(env):
    before = snapshot(env)
    with pytest.raises((TypeError, ValueError)):
        env.unwrapped.block.set_pose([["a"] * 7] * N)
    assert_unchanged(env, before)


@pytest.mark.parametrize("bad", [torch.zeros(N, 3), torch.zeros(N, 7), torch.zeros(N - 1, 6), torch.zeros(6)])
def test_set_velocity_wrong_shape(env, bad):
    before = snapshot(env)
    with pytest.raises(ValueError, match="velocity"):
        env.unwrapped.block.set_velocity(bad)
    assert_unchanged(env, before)


@pytest.mark.parametrize("value", [NAN, INF])
def test_set_velocity_non_finite(env, value):
    before = snapshot(env)
    with pytest.raises(ValueError, match="NaN|inf"):
        env.unwrapped.block.set_velocity(with_entry(torch.zeros(N, 6), 2, 4, value))
    assert_unchanged(env, before)


# ---------------------------------------------------------------- Robot writes
@pytest.mark.parametrize("method", ["set_qpos", "set_qvel", "set_drive_targets"])
def test_robot_writes_wrong_shape(env, method):
    robot = env.unwrapped.agent.robot
    before = snapshot(env)
    for bad in (torch.zeros(N, robot.dof - 1), torch.zeros(N + 1, robot.dof), torch.zeros(robot.dof)):
        with pytest.raises(ValueError, match="shape"):
            getattr(robot, method)(bad)
    with pytest.raises(ValueError, match="shape"):
        getattr(robot, method)(torch.zeros(N, robot.dof), env_ids=[1])
    assert_unchanged(env, before)


@pytest.mark.parametrize("method", ["set_qpos", "set_qvel", "set_drive_targets"])
@pytest.mark.parametrize("value", [NAN, INF])
def test_robot_writes_non_finite(env, method, value):
    robot = env.unwrapped.agent.robot
    before = snapshot(env)
    good = robot.state.qpos if method != "set_qvel" else torch.zeros(N, robot.dof)
    with pytest.raises(ValueError, match="NaN|inf"):
        getattr(robot, method)(with_entry(good, N - 1, 3, value))
    assert_unchanged(env, before)


# ---------------------------------------------------------------- step
@pytest.mark.parametrize("bad", [
    torch.zeros(N, 7),
    torch.zeros(N + 1, 8),
    torch.zeros(8),
    torch.zeros(N, 8, 1),
    np.zeros((N, 9)),
])
def test_step_wrong_action_shape(env, bad):
    before = snapshot(env)
    with pytest.raises(ValueError, match=rf"action.*\({N}, 8\)"):
        env.step(bad)
    assert_unchanged(env, before)


@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_step_non_finite_action(env, value):
    before = snapshot(env)
    with pytest.raises(ValueError, match="NaN|inf"):
        env.step(with_entry(torch.zeros(N, 8), 1, 0, value))
    assert_unchanged(env, before)


def test_step_nan_numpy_action(env):
    before = snapshot(env)
    action = np.zeros((N, 8), dtype=np.float32)
    action[2, 7] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        env.step(action)
    assert_unchanged(env, before)


def test_step_non_numeric_action(env):
    before = snapshot(env)
    with pytest.raises(ValueError):
        env.step([["x"] * 8] * N)
    assert_unchanged(env, before)


def test_env_still_works_after_rejected_input(env):
    with pytest.raises(ValueError):
        env.step(torch.full((N, 8), NAN))
    _, reward, *_ = env.step(torch.zeros(N, 8))
    assert torch.isfinite(reward).all()
    assert torch.isfinite(env.unwrapped.get_state()).all()


# ---------------------------------------------------------------- reset and set_state
def test_reset_wrong_number_of_seeds(env):
    before = snapshot(env)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[1, 2])
    assert_unchanged(env, before)


@pytest.mark.parametrize("which", ["missing_column", "one_row_for_all_envs", "unbatched_1d", "extra_column"])
def test_set_state_wrong_shape(env, which):
    u = env.unwrapped
    before = snapshot(env)
    state = before["state"]
    bad = {
        "missing_column": state[:, :-1],
        "one_row_for_all_envs": state[:1],
        "unbatched_1d": state[0],
        "extra_column": torch.cat([state, state[:, :1]], 1),
    }[which]
    with pytest.raises(ValueError, match="state"):
        u.set_state(bad)
    assert_unchanged(env, before)


@pytest.mark.parametrize("col_from_end", [1, 10])  # last robot qvel / qpos column: after the block
def test_set_state_nan_writes_nothing(env, col_from_end):
    """A NaN anywhere in the state is rejected before any object (the block comes first) is written."""
    u = env.unwrapped
    before = snapshot(env)
    state = before["state"].clone()
    state[:, 0] += 0.05  # a valid, different block position in every env
    state[1, -col_from_end] = NAN
    with pytest.raises(ValueError, match="NaN|inf"):
        u.set_state(state)
    assert_unchanged(env, before)


def test_set_state_dict_nan_writes_nothing(env):
    u = env.unwrapped
    before = snapshot(env)
    sd = u.get_state_dict()
    sd["actors"]["Block"][:, 0] += 0.05
    sd["articulations"]["Robot"][0, 13] = NAN
    with pytest.raises(ValueError, match="NaN|inf"):
        u.set_state_dict(sd)
    assert_unchanged(env, before)


def test_set_state_zero_quaternion_writes_nothing(env):
    u = env.unwrapped
    before = snapshot(env)
    state = before["state"].clone()
    state[:, 0] += 0.05
    state[2, 3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        u.set_state(state)
    assert_unchanged(env, before)
