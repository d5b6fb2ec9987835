"""The worked example of ``docs/writing_a_task.md`` (``docs/examples/push_cube.py``) is a working
task, and the guide quotes it faithfully."""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import simulo_envs  # noqa: F401
from simulo_envs.agents.panda import CONTROLLER_CONFIGS, Panda
from simulo_envs.vector import SingleEnvView

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "push_cube.py"
GUIDE = ROOT / "docs" / "writing_a_task.md"


@pytest.fixture(scope="module")
def push_cube():
    """The example imported as a user would import their own task module (it registers its id)."""
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        return importlib.import_module("push_cube")
    finally:
        sys.path.remove(str(EXAMPLE.parent))


def push_action(tcp: torch.Tensor, cube: torch.Tensor, start_x: torch.Tensor) -> torch.Tensor:
    """A scripted ``pd_ee_delta_pos`` policy (env-local positions in, (N, 4) actions out): line up
    5 cm behind the cube 10 cm above the ground, lower, then push along +x with the gripper closed."""
    behind = torch.stack([cube[:, 0] - 0.05, cube[:, 1]], dim=1)
    lined_up = (tcp[:, :2] - behind).norm(dim=1) < 0.01
    pushing = ((tcp[:, 1] - cube[:, 1]).abs() < 0.01) & (tcp[:, 0] < cube[:, 0] - 0.02) & (tcp[:, 2] < 0.03)
    target = torch.stack([torch.where(pushing, start_x + 0.15, behind[:, 0]), cube[:, 1],
                          torch.where(pushing | lined_up, 0.02, 0.10)], dim=1)
    action = torch.full((len(tcp), 4), -1.0)
    action[:, :3] = ((target - tcp) / 0.1).clamp(-1, 1)  # the controller moves at most 0.1 m per step
    return action


def test_the_scripted_push_succeeds_in_every_env(push_cube):
    env = gym.make("PushCubeExample-v1", num_envs=3, reward_mode="dense")
    assert isinstance(env.unwrapped, push_cube.PushCubeEnv) and env.max_episode_steps == 60
    _, info = env.reset(seed=0)
    origins, first_success = env.unwrapped._env_origins, [None] * 3
    for step in range(1, 61):
        start_x = env.unwrapped._start_x - origins[:, 0]
        action = push_action(env.agent.tcp_pose[:, :3] - origins, info["cube_pose"][:, :3] - origins, start_x)
        _, reward, terminated, truncated, info = env.step(action)
        for i in range(3):
            if terminated[i] and first_success[i] is None:
                first_success[i] = step
                assert info["progress"][i] >= 0.10 and reward[i] == push_cube.PushCubeConfig.success_reward
    assert all(s is not None and s < 60 for s in first_success), first_success
    env.close()


def test_its_reset_option_and_gymnasium_checker(push_cube):
    env = gym.make("PushCubeExample-v1", num_envs=2)
    env.reset(seed=0, options={"cube_y": 0.03})
    local_y = env.unwrapped.cube.state.pose[:, 1] - env.unwrapped._env_origins[:, 1]
    assert torch.allclose(local_y, torch.full((2,), 0.03), atol=1e-6)
    with pytest.raises(ValueError, match="cube_y"):
        env.reset(options={"cube_x": 0.03})
    env.close()
    view = SingleEnvView(gym.make("PushCubeExample-v1", num_envs=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(view)
    view.close()


def test_the_guide_quotes_the_example_verbatim():
    source, guide = EXAMPLE.read_text(), GUIDE.read_text()
    quoted = re.findall(r"<!-- from docs/examples/push_cube.py -->\n```python\n(.*?)```", guide, re.S)
    assert len(quoted) >= 6
    for block in quoted:
        assert block in source or textwrap.dedent(block) in textwrap.dedent(source), block


def test_agents_list_their_control_modes():
    assert Panda.supported_control_modes == tuple(CONTROLLER_CONFIGS)
    env = gym.make("FrankaLift-v1", num_envs=1)
    assert "pd_ee_delta_pos" in env.agent.supported_control_modes
    env.close()
    with pytest.raises(ValueError, match="pd_joint_delta_pos"):
        gym.make("FrankaLift-v1", num_envs=1, control_mode="pd_joint_vel")
