"""``Panda.is_grasping``: contact-based, both fingers, force threshold and angle (issue 3)."""

import dataclasses

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert


@pytest.fixture(scope="module")
def env():
    env = gym.make("FrankaLift-v1", num_envs=2)
    yield env
    env.close()


def test_block_on_the_ground_is_not_grasped(env):
    env.reset(seed=0)
    for _ in range(3):
        _, _, _, _, info = env.step(torch.zeros(2, 8))
    assert not info["is_grasped"].any()
    assert not env.unwrapped.agent.is_grasping(env.unwrapped.block).any()


def test_gripper_closed_on_empty_air_is_not_grasped(env):
    env.reset(seed=0)
    action = torch.zeros(2, 8)
    action[:, 7] = -1.0  # close
    for _ in range(10):
        _, _, _, _, info = env.step(action)
    qpos = env.unwrapped.agent.robot.state.qpos
    assert torch.all(qpos[:, 7:] < 0.005), "fingers should be closed"
    assert not info["is_grasped"].any()


def _move_tcp(env, goal, gripper, steps):
    u = env.unwrapped
    infos = []
    for _ in range(steps):
        tcp = u.agent.tcp_pose[:, :3]
        action = torch.zeros(u.num_envs, 4)
        action[:, :3] = torch.clamp(0.6 * (goal - tcp) / 0.1, -1, 1)
        action[:, 3] = gripper
        infos.append(env.step(action)[4])
    return infos


def test_one_finger_pushing_from_outside_is_not_a_grasp():
    env = gym.make("FrankaLift-v1", num_envs=1, control_mode="pd_ee_delta_pos")
    u = env.unwrapped
    env.reset(seed=0)
    tcp = u.agent.tcp_pose[:, :3]
    block = u.block.state.pose
    # Block 12 cm to the side of the open gripper; lower the TCP to block height, then sweep
    # sideways so that exactly one finger pushes the block from the outside.
    block[:, :2] = tcp[:, :2]
    block[:, 1] -= 0.12
    u.block.set_pose(block)
    low = tcp.clone()
    low[:, 2] = 0.03
    _move_tcp(env, low, 1.0, 12)
    touched = False
    sweep = torch.tensor([[0.0, -0.1, 0.0, 1.0]])  # 1 cm per step towards the block, gripper open
    for _ in range(16):
        info = env.step(sweep)[4]
        forces = u.agent.robot.contact_forces(("panda_leftfinger", "panda_rightfinger"), u.block)
        touched |= bool(forces.norm(dim=2).max() > 0.5)
        assert not info["is_grasped"].any()
    assert touched, "one finger should have pushed the block"
    env.close()


def test_expert_grasp_is_detected_while_lifting():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=5)
    grasped_steps = 0
    for _ in range(60):
        _, _, terminated, _, info = env.step(expert.act())
        grasped_steps += int(info["is_grasped"].sum())
        if terminated.all():
            break
    assert grasped_steps > 0
    assert info["is_grasped"][terminated].all()
    env.close()


def test_a_grasp_replaced_on_the_agent_is_the_one_tested(env):
    """``is_grasping`` remembers its jaw links' indices per ``grasp``; a grasp set on the agent
    afterwards is resolved anew (a jaw link the robot lacks: KeyError naming it)."""
    agent = env.unwrapped.agent
    env.reset(seed=0)
    env.step(torch.zeros(2, 8))
    assert agent.is_grasping(env.unwrapped.block).tolist() == [False, False]
    agent.grasp = dataclasses.replace(agent.grasp, jaw_links=("panda_leftfinger", "no_such_jaw"))
    try:
        with pytest.raises(KeyError, match="no_such_jaw"):
            agent.is_grasping(env.unwrapped.block)
    finally:
        del agent.grasp  # the class's own again
    assert agent.is_grasping(env.unwrapped.block).tolist() == [False, False]
