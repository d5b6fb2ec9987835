"""Cartesian controllers: the IK reaches, holds, and respects joint limits (issue 3)."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.controllers import dls_step
from simulo_envs.geometry import quat_mul, quat_to_rotvec, rotvec_to_quat

N = 3


@pytest.fixture(scope="module", params=["pd_ee_delta_pos", "pd_ee_delta_pose"])
def env(request):
    env = gym.make("FrankaLift-v1", num_envs=N, control_mode=request.param)
    yield env
    env.close()


def _zero(env):
    return torch.zeros(N, env.unwrapped.single_action_space.shape[0])


def test_action_space_sizes(env):
    dim = env.unwrapped.single_action_space.shape[0]
    assert dim == {"pd_ee_delta_pos": 4, "pd_ee_delta_pose": 7}[env.unwrapped.control_mode]


def test_constant_z_action_raises_tcp_by_20cm(env):
    env.reset(seed=1)
    u = env.unwrapped
    for _ in range(3):
        env.step(_zero(env))
    start = u.agent.tcp_pose
    action = _zero(env)
    action[:, 2] = 0.2  # 0.02 m per step
    for _ in range(10):
        env.step(action)
    end = u.agent.tcp_pose
    rise = end[:, 2] - start[:, 2]
    assert torch.all((rise - 0.20).abs() <= 0.05), rise
    lateral = (end[:, :2] - start[:, :2]).norm(dim=1)
    assert torch.all(lateral < 0.01), lateral


def test_zero_action_holds_tcp_within_2mm(env):
    env.reset(seed=2)
    u = env.unwrapped
    for _ in range(5):
        env.step(_zero(env))
    start = u.agent.tcp_pose
    for _ in range(20):
        env.step(_zero(env))
    drift = (u.agent.tcp_pose[:, :3] - start[:, :3]).norm(dim=1)
    assert torch.all(drift < 0.002), drift


def test_targets_respect_joint_limits(env):
    env.reset(seed=3)
    u = env.unwrapped
    action = _zero(env)
    action[:, 0] = 1.0  # drive the TCP far out of reach
    limits = u.agent.robot.qlimits
    for _ in range(25):
        env.step(action)
        targets = u.agent.robot.state.drive_targets[:, :7]
        assert torch.all(targets >= limits[:7, 0] - 1e-6) and torch.all(targets <= limits[:7, 1] + 1e-6)


def test_partial_reset_reanchors_target():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    u = env.unwrapped
    env.reset(seed=0)
    action = torch.zeros(2, 4)
    action[:, 2] = 1.0
    for _ in range(5):
        env.step(action)
    env.reset(options={"env_idx": [1]})
    rest = u.agent.tcp_pose[1].clone()
    for _ in range(10):
        env.step(torch.zeros(2, 4))
    # env 1 holds its fresh rest pose instead of flying back to the old raised target.
    assert (u.agent.tcp_pose[1, :3] - rest[:3]).norm() < 0.005
    env.close()


def test_delta_pose_rotates_about_tcp_axis():
    env = gym.make("FrankaLift-v1", num_envs=1, control_mode="pd_ee_delta_pose")
    u = env.unwrapped
    env.reset(seed=0)
    start = u.agent.tcp_pose
    action = torch.zeros(1, 7)
    action[0, 5] = 0.5  # 0.05 rad per step about the TCP's own z axis
    for _ in range(6):
        env.step(action)
    for _ in range(10):
        env.step(torch.zeros(1, 7))
    end = u.agent.tcp_pose
    relative = quat_to_rotvec(quat_mul(torch.cat([start[:, 3:4], -start[:, 4:]], 1), end[:, 3:]))
    assert relative[0, 2].abs() == pytest.approx(0.3, abs=0.03)
    assert relative[0, :2].abs().max() < 0.02
    assert (end[:, :3] - start[:, :3]).norm() < 0.005
    env.close()


def test_absolute_pose_mode_reaches_target():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_pose")
    u = env.unwrapped
    env.reset(seed=0)
    down = quat_to_rotvec(u.agent.tcp_pose[:, 3:])
    goal = torch.tensor([[0.45, 0.1, 0.3], [0.5, -0.15, 0.25]])
    action = torch.cat([goal, down, torch.ones(2, 1)], dim=1)
    for _ in range(40):
        env.step(action)
    local = u.agent.tcp_pose[:, :3] - u.scene.env_origins
    assert torch.all((local - goal).norm(dim=1) < 0.01), local
    env.close()


def test_dls_step_solves_a_full_rank_system():
    torch.manual_seed(0)
    jac = torch.randn(4, 3, 7)
    err = torch.randn(4, 3) * 0.01
    dq = dls_step(jac, err, damping=1e-4)
    assert torch.allclose((jac @ dq.unsqueeze(-1)).squeeze(-1), err, atol=1e-5)


def test_rotvec_quat_round_trip():
    r = torch.tensor([[0.0, 0.0, 0.0], [0.3, -0.2, 0.1], [0.0, 3.0, 0.0]])
    assert torch.allclose(quat_to_rotvec(rotvec_to_quat(r)), r, atol=1e-5)


@pytest.mark.parametrize("mode", ["pd_ee_delta_pos", "pd_ee_delta_pose", "pd_ee_pose"])
def test_numpy_and_torch_ik_paths_agree(mode):
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode=mode)
    u = env.unwrapped
    env.reset(seed=0)
    arm = u.agent.controller.controllers["arm"]
    torch.manual_seed(0)
    action = torch.rand(2, arm.action_dim) * 0.4 - 0.2
    if mode == "pd_ee_pose":
        action[:, :3] += torch.tensor([0.5, 0.0, 0.3])
    qpos = u.agent.robot.state.qpos
    target_np, target_t = arm.target.clone().numpy(), arm.target.clone()
    from_numpy = arm._solve(action.numpy(), qpos.numpy(), target_np, arm._ee_pose(np), lambda: arm._ee_jacobian(np), np)
    from_torch = arm._solve(action, qpos, target_t, u.agent.robot.state.tcp_pose,
                            lambda: u.agent.robot.tcp_jacobian(), torch)
    assert np.allclose(from_numpy, from_torch.numpy(), atol=1e-5)
    assert np.allclose(target_np, target_t.numpy(), atol=1e-6)
    env.close()
