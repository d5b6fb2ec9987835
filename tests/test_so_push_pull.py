"""SO101Push-v1 / SO101Pull-v1 (and their SO-100 twins): the square region, the success test
(inside the square, on the floor, released), the fail ring, rewards, instructions, variants and
the scripted experts holding success to the episode's last step."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.policies import EXPERTS
from simulo_envs.tasks.so101_push import in_square

TASKS = {"SO101Push-v1": "so101", "SO100Push-v1": "so100", "SO101Pull-v1": "so101", "SO100Pull-v1": "so100"}


def _local(base, world):
    return world - base.env_origins[:, : world.shape[1]]


def _put_cube(base, local_xyz):
    pose = base.cube.state.pose
    pose[:, :3] = base.env_origins + torch.as_tensor(local_xyz, dtype=torch.float32)
    pose[:, 3:] = torch.tensor([1.0, 0, 0, 0])
    base.cube.set_pose(pose)


def test_in_square_uses_the_squares_own_frame():
    yaw = math.pi / 4
    square = torch.tensor([[0.0, 0.0, 0.0, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]]).repeat(3, 1)
    # The square's sides run at 45 deg: (0.02, 0.02) lies 0.028 along one side, 0 across (inside);
    # (0.025, 0) 0.018 along and across (inside); (0.028, 0.028), inside an unturned square, lies
    # 0.040 along its side (outside).
    points = torch.tensor([[0.02, 0.02, 0.0], [0.025, 0.0, 0.0], [0.028, 0.028, 0.0]])
    assert in_square(points, square, 0.03).tolist() == [True, True, False]
    assert in_square(points.numpy(), square.numpy(), 0.03).tolist() == [True, True, False]


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_registered_for_its_arm_with_35_floats_and_a_sentence(env_id):
    env = gym.make(env_id, num_envs=2)
    try:
        base = env.unwrapped
        assert base.agent.uid == TASKS[env_id]
        obs, info = env.reset(seed=0)
        assert obs.shape == (2, 35)
        assert info["success"].tolist() == [False, False] and info["fail"].tolist() == [False, False]
        verb = "Push" if "Push" in env_id else "Pull"
        for text, color, square in zip(base.instructions(), base.color_names(0), base.color_names(1)):
            tail = "into" if verb == "Push" else "back into"
            assert text == f"{verb} the {color} cube {tail} the {square} square."
            assert color != square
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["SO101Push-v1", "SO101Pull-v1"])
def test_spawn_puts_the_square_beyond_or_before_the_cube(env_id):
    env = gym.make(env_id, num_envs=32)
    try:
        env.reset(seed=1)
        base = env.unwrapped
        cube = _local(base, base.cube.state.pose[:, :3])[:, :2]
        goal = _local(base, base.goal.state.pose[:, :3])[:, :2]
        cfg = base.cfg
        radius = cube.norm(dim=1)
        assert float(radius.min()) >= cfg.region.radius[0] - 1e-4 and float(radius.max()) <= cfg.region.radius[1] + 1e-4
        distance = (goal - cube).norm(dim=1)
        assert float(distance.min()) >= cfg.goal_distance[0] - 1e-4 and float(distance.max()) <= cfg.goal_distance[1] + 1e-4
        # The square lies within goal_angle of straight away from (push) / toward (pull) the base.
        outward = ((goal - cube) * cube).sum(1) / (distance * radius)
        angle = torch.arccos(outward.clamp(-1, 1)) if env_id == "SO101Push-v1" else torch.arccos((-outward).clamp(-1, 1))
        assert float(angle.max()) <= cfg.goal_angle + 1e-3
    finally:
        env.close()


def test_success_needs_the_cube_on_the_square_on_the_floor_and_released():
    env = gym.make("SO101Push-v1", num_envs=1, reward_mode="sparse")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        goal = _local(base, base.goal.state.pose[:, :3])[0]
        size = base.cfg.cube_size
        _put_cube(base, [float(goal[0]), float(goal[1]), size / 2])
        info = base.get_info()
        assert info["success"].tolist() == [True]
        _put_cube(base, [float(goal[0]), float(goal[1]), size / 2 + 0.03])  # held up over it
        assert base.get_info()["success"].tolist() == [False]
        _put_cube(base, [float(goal[0]) + 0.05, float(goal[1]) + 0.05, size / 2])  # beside it
        assert base.get_info()["success"].tolist() == [False]
    finally:
        env.close()


def test_fail_ring_gives_minus_one_sparse_and_zero_dense():
    env = gym.make("SO101Pull-v1", num_envs=2, reward_mode="dense")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        _put_cube(base, [[0.05, 0.0, 0.0125], [0.25, 0.0, 0.0125]])  # env 0 in the arm's base
        _, reward, terminated, _, info = env.step(torch.zeros(2, 6))
        assert info["fail"].tolist() == [True, False] and terminated.tolist() == [True, False]
        assert float(reward[0]) == 0.0 and 0.0 < float(reward[1]) < base.cfg.success_reward
        assert base.compute_sparse_reward(None, None, info).tolist() == [-1.0, 0.0]
        terms = info["reward_terms"]
        assert sorted(terms) == ["push", "reach"]
        normalized = base.compute_normalized_dense_reward(None, None, info)
        assert float(normalized[1]) == pytest.approx(float(reward[1]) / base.cfg.success_reward)
    finally:
        env.close()


def test_heldout_distractors_keep_off_the_path_and_take_other_colours():
    env = gym.make("SO101Push-v1", num_envs=16, variant="heldout")
    try:
        env.reset(seed=2)
        base = env.unwrapped
        assert len(base.distractors) == 2 and base.cfg.colors == ("orange", "purple", "cyan", "pink")
        cube = base.cube.state.pose[:, :2]
        goal = base.goal.state.pose[:, :2]
        for prop in base.distractors:
            xy = prop.state.pose[:, :2]
            # Distance from the segment cube -> goal.
            seg = goal - cube
            t = (((xy - cube) * seg).sum(1) / (seg * seg).sum(1)).clamp(0, 1)
            gap = (xy - (cube + t[:, None] * seg)).norm(dim=1)
            assert float(gap.min()) > 2 * base.cfg.object_clearance
        names = [base.color_names(role) for role in range(4)]
        assert all(len(set(row)) == 4 for row in zip(*names))
        assert all(text.startswith("Push the ") and " cylinder " in text for text in base.instructions())
    finally:
        env.close()


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_the_expert_leaves_the_cube_in_the_square_to_the_last_step(env_id):
    # 64 seeds per variant: docs/suite_benchmark.md; 8 here, ignoring terminations.
    env = gym.make(env_id, num_envs=8, control_mode="pd_ee_delta_pos")
    try:
        expert = EXPERTS[env_id](env)
        env.reset(seed=0)
        ever = torch.zeros(8, dtype=torch.bool)
        for _ in range(env.unwrapped.default_max_episode_steps):
            _, _, _, _, info = env.step(expert.act())
            ever |= info["success"]
            assert not info["is_grasped"].any()
        assert ever.all() and info["success"].all(), info["success"]
    finally:
        env.close()
