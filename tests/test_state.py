"""Env state round trips, robot read-your-writes, and the pd_joint_pos controller."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents.panda import REST_QPOS
from conftest import BACKENDS_UNDER_TEST

N = 3
DOF = 9
STATE_DIM = 13 + 13 + 2 * DOF


@pytest.fixture(scope="module", params=BACKENDS_UNDER_TEST)
def env(request):
    e = gym.make("FrankaLift-v1", num_envs=N, sim_backend=request.param)
    yield e
    e.close()


def random_steps(env, k, seed=0):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(k):
        env.step(torch.rand(env.unwrapped.num_envs, 8, generator=gen) * 2 - 1)


# ---------------------------------------------------------------- get_state / set_state
def test_state_layout(env):
    u = env.unwrapped
    env.reset(seed=0)
    state = u.get_state()
    assert state.shape == (N, STATE_DIM) and state.dtype == torch.float32
    sd = u.get_state_dict()
    assert list(sd["actors"]) == ["Block"]
    assert list(sd["articulations"]) == ["Robot"]
    block, robot = sd["actors"]["Block"], sd["articulations"]["Robot"]
    assert block.shape == (N, 13) and robot.shape == (N, 13 + 2 * DOF)
    assert torch.equal(block[:, :7], u.block.state.pose)
    assert torch.equal(block[:, 7:10], u.block.state.linear_velocity)
    assert torch.equal(block[:, 10:13], u.block.state.angular_velocity)
    assert torch.equal(robot[:, :7], u.agent.robot.state.root_pose)
    assert torch.equal(robot[:, 13:13 + DOF], u.agent.robot.state.qpos)
    assert torch.equal(robot[:, 13 + DOF:], u.agent.robot.state.qvel)
    assert torch.equal(state, torch.cat([block, robot], 1))


def test_root_pose_is_env_origin(env):
    u = env.unwrapped
    root = u.agent.robot.state.root_pose
    assert torch.allclose(root[:, :3], u.scene.env_origins, atol=1e-6)
    assert torch.allclose(root[:, 3:], torch.tensor([[1.0, 0, 0, 0]] * N), atol=1e-6)


def test_get_state_round_trip(env):
    u = env.unwrapped
    env.reset(seed=0)
    random_steps(env, 3, seed=1)
    saved = u.get_state()
    saved_copy = saved.clone()
    random_steps(env, 3, seed=2)
    assert not torch.allclose(u.get_state(), saved, atol=1e-4)
    u.set_state(saved)
    assert torch.equal(saved, saved_copy), "set_state must not modify its argument"
    assert torch.allclose(u.get_state(), saved, atol=1e-6)
    # The restored qpos is also the PD target: the arm holds still rather than springing back.
    assert torch.allclose(u.agent.robot.state.drive_targets, saved[:, 26:26 + DOF], atol=1e-6)


@pytest.mark.parametrize("env_idx", [[1], [0, 2], np.array([2, 0]), torch.tensor([False, True, True])])
def test_set_state_env_idx_subset(env, env_idx):
    u = env.unwrapped
    env.reset(seed=0)
    random_steps(env, 2, seed=3)
    old = u.get_state()
    random_steps(env, 2, seed=4)
    now = u.get_state()
    ids = torch.as_tensor(np.flatnonzero(np.asarray(env_idx)) if np.asarray(env_idx).dtype == bool
                          else np.asarray(env_idx))
    others = [i for i in range(N) if i not in ids.tolist()]
    u.set_state(old[ids], env_idx=env_idx)
    after = u.get_state()
    assert torch.allclose(after[ids], old[ids], atol=1e-6)
    assert torch.equal(after[others], now[others])


def test_state_dict_round_trip_with_subset(env):
    u = env.unwrapped
    env.reset(seed=0)
    random_steps(env, 2, seed=5)
    old = u.get_state_dict()
    random_steps(env, 2, seed=6)
    now = u.get_state()
    sub = {"actors": {k: v[[0, 2]] for k, v in old["actors"].items()},
           "articulations": {k: v[[0, 2]] for k, v in old["articulations"].items()}}
    u.set_state_dict(sub, env_idx=[0, 2])
    after = u.get_state_dict()
    for group in ("actors", "articulations"):
        for k in old[group]:
            assert torch.allclose(after[group][k][[0, 2]], old[group][k][[0, 2]], atol=1e-6), k
    assert torch.equal(u.get_state()[1], now[1])
    # Full round trip.
    u.set_state_dict(old)
    for group in ("actors", "articulations"):
        for k in old[group]:
            assert torch.allclose(u.get_state_dict()[group][k], old[group][k], atol=1e-6)


def test_state_dict_is_fresh(env):
    u = env.unwrapped
    before = u.get_state()
    sd = u.get_state_dict()
    sd["actors"]["Block"].add_(1.0)
    sd["articulations"]["Robot"].add_(1.0)
    u.get_state().add_(1.0)
    assert torch.equal(u.get_state(), before)


def test_set_state_empty_env_idx_changes_nothing(env):
    u = env.unwrapped
    before = u.get_state()
    u.set_state(torch.zeros(0, STATE_DIM), env_idx=[])
    assert torch.equal(u.get_state(), before)


def test_set_state_restores_the_trajectory(env):
    """From a restored state, the same actions give (nearly) the same states again."""
    u = env.unwrapped
    env.reset(seed=0)
    random_steps(env, 2, seed=7)
    saved = u.get_state()
    random_steps(env, 3, seed=8)
    first = u.get_state()
    u.set_state(saved)
    random_steps(env, 3, seed=8)
    assert torch.allclose(u.get_state(), first, atol=1e-3)


# ---------------------------------------------------------------- robot writes
def test_set_qpos_read_your_writes_and_tcp_moves_without_a_step(env):
    u = env.unwrapped
    robot = u.agent.robot
    env.reset(seed=0)
    tcp_before = robot.state.tcp_pose
    origins = u.scene.env_origins
    q = torch.tensor([REST_QPOS] * N)
    q[:, 0] += torch.tensor([0.3, -0.5, 0.0])  # rotate the base joint (about world z)
    robot.set_qpos(q)
    assert torch.allclose(robot.state.qpos, q, atol=1e-6)
    tcp_after = robot.state.tcp_pose
    for i, angle in enumerate([0.3, -0.5, 0.0]):
        c, s = math.cos(angle), math.sin(angle)
        x, y, z = (tcp_before[i, :3] - origins[i]).tolist()
        expected = torch.tensor([c * x - s * y, s * x + c * y, z]) + origins[i]
        assert torch.allclose(tcp_after[i, :3], expected, atol=1e-5), (i, tcp_after[i], expected)
    assert not torch.allclose(tcp_after[0, :3], tcp_before[0, :3], atol=1e-3)
    assert torch.equal(tcp_after[2], tcp_before[2]) or torch.allclose(tcp_after[2], tcp_before[2], atol=1e-6)


def test_set_qpos_partial_touches_only_listed_envs(env):
    u = env.unwrapped
    robot = u.agent.robot
    env.reset(seed=0)
    random_steps(env, 2, seed=9)
    before_q, before_v, before_tcp = robot.state.qpos, robot.state.qvel, robot.state.tcp_pose
    q = torch.tensor([REST_QPOS])
    q[0, 3] -= 0.4
    robot.set_qpos(q, env_ids=[1])
    after_q = robot.state.qpos
    assert torch.allclose(after_q[1], q[0], atol=1e-6)
    assert torch.equal(after_q[[0, 2]], before_q[[0, 2]])
    assert torch.equal(robot.state.qvel[[0, 2]], before_v[[0, 2]])
    assert torch.equal(robot.state.tcp_pose[[0, 2]], before_tcp[[0, 2]])
    assert not torch.allclose(robot.state.tcp_pose[1], before_tcp[1], atol=1e-3)


def test_set_qvel_read_your_writes(env):
    robot = env.unwrapped.agent.robot
    qvel = torch.linspace(-0.5, 0.5, N * DOF).reshape(N, DOF)
    robot.set_qvel(qvel)
    assert torch.allclose(robot.state.qvel, qvel, atol=1e-6)
    robot.set_qvel(torch.zeros(1, DOF), env_ids=2)
    got = robot.state.qvel
    assert torch.count_nonzero(got[2]) == 0
    assert torch.allclose(got[:2], qvel[:2], atol=1e-6)


def test_robot_state_is_fresh(env):
    robot = env.unwrapped.agent.robot
    q = robot.state.qpos
    q.add_(1.0)
    t = robot.state.tcp_pose
    t.add_(1.0)
    assert not torch.allclose(robot.state.qpos, q)
    assert not torch.allclose(robot.state.tcp_pose, t)


def test_robot_names_and_limits(env):
    robot = env.unwrapped.agent.robot
    assert robot.dof == DOF
    assert robot.joint_names[:7] == [f"panda_joint{i}" for i in range(1, 8)]
    assert robot.joint_names[7:] == ["panda_finger_joint1", "panda_finger_joint2"]
    lim = robot.qlimits
    assert lim.shape == (DOF, 2)
    assert (lim[:, 0] < lim[:, 1]).all()
    rest = torch.tensor(REST_QPOS)
    assert ((rest >= lim[:, 0]) & (rest <= lim[:, 1])).all()


# ---------------------------------------------------------------- pd_joint_pos
def test_pd_joint_pos_reaches_its_target():
    e = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_joint_pos")
    try:
        u = e.unwrapped
        assert u.control_mode == "pd_joint_pos"
        space = u.single_action_space
        assert space.shape == (8,)
        lim = u.agent.robot.qlimits[:7]
        assert np.allclose(space.low[:7], lim[:, 0].numpy()) and np.allclose(space.high[:7], lim[:, 1].numpy())
        e.reset(seed=0)
        rest = torch.tensor(REST_QPOS[:7])
        targets = torch.stack([
            rest + torch.tensor([0.3, -0.2, 0.2, 0.3, -0.2, 0.2, 0.4]),
            rest + torch.tensor([-0.4, 0.1, -0.2, -0.2, 0.3, -0.3, -0.4]),
        ])
        action = torch.cat([targets, torch.tensor([[1.0], [-1.0]])], 1)  # env 0 opens, env 1 closes
        start_err = (u.agent.robot.state.qpos[:, :7] - targets).abs().max()
        assert start_err > 0.3
        for _ in range(20):
            e.step(action)
        qpos = u.agent.robot.state.qpos
        err = (qpos[:, :7] - targets).abs()
        assert err.max() < 0.05, err
        assert torch.allclose(u.agent.robot.state.drive_targets[:, :7], targets, atol=1e-6)
        assert (qpos[0, 7:] > 0.035).all(), qpos[0, 7:]  # open: 0.04 m
        assert (qpos[1, 7:] < 0.005).all(), qpos[1, 7:]  # closed on nothing
    finally:
        e.close()


def test_pd_joint_delta_pos_is_the_default(env):
    assert env.unwrapped.control_mode == "pd_joint_delta_pos"
