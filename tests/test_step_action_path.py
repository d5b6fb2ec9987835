"""``step`` checks an action once and hands it to the agent's checked path: the same drive
targets as the agent's public ``set_action``, and an agent class that overrides ``set_action``
still gets every step's action."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401


@pytest.fixture(scope="module")
def env():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_joint_pos")
    env.reset(seed=0)
    yield env
    env.close()


def test_a_step_writes_the_targets_set_action_writes(env):
    action = torch.tensor([[0.1, 0.2, -0.1, -2.0, 0.0, 2.0, 0.7, 0.5],
                           [9.0, -9.0, 0.0, -1.5, 0.3, 1.0, 0.0, -0.5]])  # row 1 beyond the limits: clipped
    robot = env.unwrapped.agent.robot
    env.step(action)
    stepped = robot.state.drive_targets
    space = env.unwrapped.single_action_space
    clipped = torch.from_numpy(np.clip(action.numpy(), space.low, space.high))
    env.unwrapped.agent.set_action(clipped)
    np.testing.assert_array_equal(robot.state.drive_targets.numpy(), stepped.numpy())
    assert stepped[1, 0].item() == pytest.approx(float(space.high[0]))  # 9.0 clipped to joint 1's upper limit
    assert stepped[1, 1].item() == pytest.approx(float(space.low[1]))


def test_an_agent_overriding_set_action_gets_each_steps_action(env):
    agent = env.unwrapped.agent
    seen = []
    base = type(agent)

    class Recording(base):
        def set_action(self, action):
            seen.append(action.clone())
            super().set_action(action)

    agent.__class__ = Recording
    try:
        action = torch.full((2, 8), 5.0)  # clipped to the action space's high bound
        env.step(action)
        env.step(action)
    finally:
        agent.__class__ = base
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[0].numpy(), np.broadcast_to(env.unwrapped.single_action_space.high, (2, 8)))


def test_a_non_finite_action_still_writes_no_target(env):
    robot = env.unwrapped.agent.robot
    before = robot.state.drive_targets
    action = torch.zeros(2, 8)
    action[1, 3] = float("nan")
    with pytest.raises(ValueError, match="NaN or inf"):
        env.step(action)
    np.testing.assert_array_equal(robot.state.drive_targets.numpy(), before.numpy())
