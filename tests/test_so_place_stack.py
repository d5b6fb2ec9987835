"""The SO table-top suite's place and stack tasks (``tasks/so101_place_in_bowl.py``,
``so101_place_on_target.py``, ``so101_stack.py``): observation, instruction, layout, success and
fail predicates, the three reward modes, and the scripted expert."""

from __future__ import annotations

import importlib.util
import os
import re

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import EXPERTS
from simulo_envs.policies.pick_experts import RELEASE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = {  # env id: (state observation size, instruction pattern)
    "SO101PlaceInBowl-v1": (36, r"Put the (red|green|blue|yellow) cube in the bowl\."),
    "SO101PlaceOnTarget-v1": (36, r"Put the (red|green|blue|yellow) cube on the (red|green|blue|yellow) square\."),
    "SO101Stack-v1": (40, r"Stack the (red|green|blue|yellow) cube on the (red|green|blue|yellow) cube\."),
}


def _local(base, prop):
    return prop.state.pose[:, :3] - base.env_origins


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_observation_instruction_and_the_so100_twin(env_id):
    size, pattern = TASKS[env_id]
    env = gym.make(env_id, num_envs=4)
    try:
        obs, info = env.reset(seed=0)
        base = env.unwrapped
        assert obs.shape == (4, size) and base.agent.uid == "so101"
        assert info["success"].tolist() == [False] * 4 and info["fail"].tolist() == [False] * 4
        sentences = base.instructions()
        assert len(sentences) == 4 and all(re.fullmatch(pattern, s) for s in sentences), sentences
    finally:
        env.close()
    twin = gym.make(env_id.replace("SO101", "SO100"), num_envs=1)
    try:
        assert twin.unwrapped.agent.uid == "so100"
    finally:
        twin.close()


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_heldout_uses_other_colours_cylinders_and_more_distractors(env_id):
    env = gym.make(env_id, num_envs=4, variant="heldout")
    try:
        env.reset(seed=2)
        base = env.unwrapped
        assert len(base.distractors) == 2
        sentences = base.instructions()
        assert all("cylinder" in s and not re.search(r"\b(red|green|blue|yellow)\b", s) for s in sentences), sentences
        for prop in [getattr(base, "cube", None) or base.cube_a] + base.distractors:
            local = _local(base, prop)
            bearing = torch.atan2(local[:, 1], local[:, 0]).abs()
            assert ((bearing >= 0.55 - 1e-5) & (bearing <= 0.9 + 1e-5)).all()
    finally:
        env.close()


def test_place_in_bowl_success_fail_and_rewards():
    env = gym.make("SO101PlaceInBowl-v1", num_envs=3)
    try:
        env.reset(seed=0)
        base = env.unwrapped
        bowl = base.bowl.state.root_pose[:, :3]
        rest = bowl + torch.tensor([0.0, 0.0, base.cfg.bowl.floor + 0.0125])
        pose = base.cube.state.pose
        pose[0, :3] = rest[0] + torch.tensor([0.02, 0.0, 0.0])      # in the bowl, off centre
        pose[1, :3] = rest[1] + torch.tensor([0.0, 0.0, 0.06])      # above the rim
        pose[2, :3] = base.env_origins[2] + torch.tensor([0.42, 0.0, 0.0125])  # out of reach
        base.cube.set_pose(pose)
        info = base.get_info()
        assert info["in_bowl"].tolist() == [True, False, False]
        assert info["success"].tolist() == [True, False, False] and info["fail"].tolist() == [False, False, True]
        assert torch.allclose(info["cube_to_place"][0], torch.tensor([-0.02, 0.0, 0.0]), atol=1e-5)
        normalized = base.get_reward(None, torch.zeros(3, 6), info)
        assert normalized[0].item() == pytest.approx(1.0) and normalized[2].item() == 0.0
        assert 0.0 < normalized[1].item() < 1.0
        base.reward_mode = "sparse"
        assert base.get_reward(None, torch.zeros(3, 6), info).tolist() == [1.0, 0.0, -1.0]
    finally:
        env.close()


def test_place_on_target_success_needs_the_named_square():
    env = gym.make("SO101PlaceOnTarget-v1", num_envs=3, reward_mode="dense")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        target = base.target.state.pose[:, :3].clone()
        target[:, 2] = base.env_origins[:, 2] + 0.0125
        other = base.squares[1].state.pose[:, :3].clone()
        other[:, 2] = base.env_origins[:, 2] + 0.0125
        pose = base.cube.state.pose
        pose[0, :3] = target[0] + torch.tensor([0.01, -0.01, 0.0])  # on the target, 14 mm off centre
        pose[1, :3] = other[1]                                       # on the other square
        pose[2, :3] = target[2] + torch.tensor([0.0, 0.0, 0.03])    # over the target, in the air
        base.cube.set_pose(pose)
        info = base.get_info()
        assert info["success"].tolist() == [True, False, False]
        assert info["on_target"].tolist() == [True, False, False]
        dense = base.get_reward(None, torch.zeros(3, 6), info)
        assert dense[0].item() == pytest.approx(base.cfg.success_reward)
        names = base.color_names(len([base.cube] + base.distractors))  # the target's colour per env
        assert all(f"on the {n} square" in s for n, s in zip(names, base.instructions()))
    finally:
        env.close()


def test_stack_success_needs_a_on_b_released_and_b_on_the_table():
    env = gym.make("SO101Stack-v1", num_envs=3)
    try:
        env.reset(seed=0)
        base = env.unwrapped
        b = base.cube_b.state.pose
        a = base.cube_a.state.pose
        a[0, :3] = b[0, :3] + torch.tensor([0.005, 0.0, 0.025])  # on B, 5 mm off
        a[1, :3] = b[1, :3] + torch.tensor([0.02, 0.0, 0.025])   # 20 mm off: falls
        a[2, :3] = b[2, :3] + torch.tensor([0.0, 0.0, 0.05])     # one cube too high
        base.cube_a.set_pose(a)
        info = base.get_info()
        assert info["a_on_b"].tolist() == [True, False, False]
        assert info["success"].tolist() == [True, False, False]
        assert info["fail"].tolist() == [False, False, False]
    finally:
        env.close()


@pytest.mark.parametrize("variant", ["train", "heldout"])
@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_the_scripted_expert_succeeds(env_id, variant):
    """One episode in each of 8 envs (seeds 0..7); the 64-episode figures per split are in docs/so100.md."""
    env = gym.make(env_id, num_envs=8, control_mode="pd_ee_delta_pos", variant=variant)
    try:
        expert = EXPERTS[env_id](env)
        env.reset(seed=0)
        done = torch.zeros(8, dtype=torch.bool)
        success = torch.zeros(8, dtype=torch.bool)
        while not done.all():
            _, _, terminated, truncated, info = env.step(expert.act())
            ended = (terminated | truncated).cpu() & ~done
            success[ended] = info["success"].cpu()[ended]
            done |= ended
        assert int(success.sum()) >= 7, success.tolist()
    finally:
        env.close()


def test_place_on_target_expert_lets_go_in_the_air_and_waits_high_above_the_cube():
    """The expert lets go of the cube ``place_gap`` (15 mm) above its resting place, then rises
    ``retreat_hover`` (0.10 m) above it, well above its 0.04 m pre-grasp hover, and waits there to
    the time limit with the cube in place: recorded to the time limit, neither looks like grasping
    the cube on the table or the hover before it."""
    env = gym.make("SO101PlaceOnTarget-v1", num_envs=1, control_mode="pd_ee_delta_pos")
    try:
        expert = EXPERTS["SO101PlaceOnTarget-v1"](env)
        assert expert.cfg.retreat_hover == pytest.approx(0.10) and expert.cfg.hover == pytest.approx(0.04)
        _, info = env.reset(seed=0)
        let_go_at = None  # the cube's height above its resting place when the jaw starts opening [m]
        for _ in range(env.unwrapped.cfg.max_episode_steps):  # terminations ignored
            action = expert.act(info)
            if let_go_at is None and int(expert.phase[0]) == RELEASE:
                let_go_at = -info["cube_to_place"][0, 2].item()
            _, _, _, _, info = env.step(action)
        assert 0.010 <= let_go_at <= 0.020
        assert info["success"].tolist() == [True]
        rest_z = (info["cube_pose"][0, 2] + info["cube_to_place"][0, 2]).item()
        assert info["tcp_pose"][0, 2].item() == pytest.approx(rest_z + 0.10, abs=0.003)
    finally:
        env.close()


def test_demo_runs_the_expert_in_the_variant_asked_for():
    spec = importlib.util.spec_from_file_location("script_demo", os.path.join(ROOT, "scripts", "demo.py"))
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    summary = demo.run("SO101Stack-v1", num_envs=2, episodes=2, seed=0, variant="heldout", progress=False)
    assert summary["episodes"] == 2 and summary["success_rate"] == 1.0
    with pytest.raises(ValueError, match="variant must be one of"):
        demo.run("SO101Stack-v1", num_envs=1, episodes=1, seed=0, variant="test", progress=False)
