"""SO101Sort-v1 (and SO100Sort-v1): the bin test in the bin's frame, success (each cube in its own
bin, released), fail (a cube in the other bin), rewards, the instruction, variants and the expert."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.authoring.containers import Container
from simulo_envs.policies import EXPERTS
from simulo_envs.tasks.so101_sort import in_bin


def _put(base, prop, world_xyz):
    pose = prop.state.pose
    pose[:, :3] = torch.as_tensor(world_xyz, dtype=torch.float32)
    pose[:, 3:] = torch.tensor([1.0, 0, 0, 0])
    prop.set_pose(pose)


def test_in_bin_uses_the_bins_own_frame():
    box = Container(kind="bin", inner_size=(0.05, 0.03), height=0.03, wall=0.004, floor=0.004, flare=0.0)
    yaw = math.pi / 2  # the bin's 5 cm side runs along world y
    pose = torch.tensor([[0.0, 0.0, 0.0, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]]).repeat(4, 1)
    points = torch.tensor([[0.0, 0.02, 0.01],    # 2 cm along the long side: inside
                           [0.02, 0.0, 0.01],    # 2 cm across the 3 cm side: outside
                           [0.0, 0.0, 0.002],    # in the floor
                           [0.0, 0.0, 0.035]])   # above the rim
    assert in_bin(points, pose, box).tolist() == [True, False, False, False]


def test_registered_with_51_floats_and_a_sentence_naming_both_colours():
    env = gym.make("SO101Sort-v1", num_envs=2)
    try:
        base = env.unwrapped
        obs, info = env.reset(seed=0)
        assert obs.shape == (2, 51) and base.agent.uid == "so101"
        assert info["success"].tolist() == [False, False] and info["fail"].tolist() == [False, False]
        for text, a, b in zip(base.instructions(), base.color_names(0), base.color_names(1)):
            assert text == f"Put the {a} cube in the {a} bin and the {b} cube in the {b} bin." and a != b
    finally:
        env.close()


def test_success_needs_each_cube_in_its_own_bin_and_a_swap_fails():
    env = gym.make("SO101Sort-v1", num_envs=1, reward_mode="dense")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        bin_a, bin_b = (b.state.root_pose[0, :3] for b in base.bins)
        rest = base.cfg.bin.floor + base.cfg.cube_size / 2
        _put(base, base.cubes[0], [float(bin_a[0]), float(bin_a[1]), float(bin_a[2]) + rest])
        info = base.get_info()
        assert info["a_in_bin"].tolist() == [True] and info["success"].tolist() == [False]
        base.compute_dense_reward(None, None, info)
        assert info["reward_terms"]["placed"].tolist() == [1.0]
        _put(base, base.cubes[1], [float(bin_b[0]), float(bin_b[1]), float(bin_b[2]) + rest])
        info = base.get_info()
        assert info["success"].tolist() == [True] and info["fail"].tolist() == [False]
        assert float(base.compute_dense_reward(None, None, info)[0]) == base.cfg.success_reward
        _put(base, base.cubes[0], [float(bin_b[0]), float(bin_b[1]), float(bin_b[2]) + rest])  # both in B's bin
        info = base.get_info()
        assert info["fail"].tolist() == [True] and info["success"].tolist() == [False]
        assert float(base.compute_dense_reward(None, None, info)[0]) == 0.0
        assert base.compute_sparse_reward(None, None, info).tolist() == [-1.0]
    finally:
        env.close()


def test_dense_terms_follow_the_first_cube_not_in_its_bin():
    env = gym.make("SO101Sort-v1", num_envs=2, reward_mode="normalized_dense")
    try:
        env.reset(seed=3)
        _, reward, _, _, info = env.step(torch.zeros(2, 6))
        terms = info["reward_terms"]
        assert sorted(terms) == ["carry", "grasp", "placed", "reach"]
        assert terms["placed"].tolist() == [0.0, 0.0] and terms["grasp"].tolist() == [0.0, 0.0]
        tcp_to_a = info["tcp_to_a"].norm(dim=1)
        expected = 1 - torch.tanh(tcp_to_a * env.unwrapped.cfg.reach_scale)
        assert torch.allclose(terms["reach"], expected, atol=1e-5)
        assert torch.allclose(reward, expected / env.unwrapped.cfg.success_reward, atol=1e-5)
    finally:
        env.close()


def test_heldout_builds_cylinders_and_two_distractors_in_other_colours():
    env = gym.make("SO101Sort-v1", num_envs=4, variant="heldout")
    try:
        env.reset(seed=1)
        base = env.unwrapped
        assert len(base.distractors) == 2 and base.cfg.colors == ("orange", "purple", "cyan", "pink")
        names = [base.color_names(role) for role in range(4)]
        assert all(len(set(row)) == 4 for row in zip(*names))
        assert all(" cylinder in the " in text for text in base.instructions())
    finally:
        env.close()


@pytest.mark.parametrize("variant", ["train", "heldout"])
def test_the_expert_sorts_both_cubes_and_lets_go(variant):
    # 64 seeds per variant: docs/suite_benchmark.md; 8 here (the held-out ones the expert once
    # failed on: seeds 2000003 and 2000004), terminations ignored.
    env = gym.make("SO101Sort-v1", num_envs=8, control_mode="pd_ee_delta_pos", variant=variant)
    try:
        expert = EXPERTS["SO101Sort-v1"](env)
        env.reset(seed=0 if variant == "train" else 2_000_000)
        for _ in range(env.unwrapped.default_max_episode_steps):
            _, _, _, _, info = env.step(expert.act())
        assert info["success"].float().mean() >= 0.875, info["success"]
        assert not info["is_grasped"].any()
    finally:
        env.close()


@pytest.mark.parametrize("variant", ["heldout", "heldout_positions", "heldout_distractors"])
def test_heldout_layouts_keep_every_object_clear_of_the_others_and_the_bins(variant):
    # The held-out generation once drew 4 objects and 2 bins into sectors too small for them
    # (92 % of "heldout" layouts overlapped; the expert sorted 64 %): the held-out positions fit
    # every time, and distractors keep clear of everything. (The train positions, which
    # "heldout_distractors" keeps, put a cube nearer a bin than their clearances in about 2 % of
    # layouts; the expert sorts those too.)
    env = gym.make("SO101Sort-v1", num_envs=64, variant=variant)
    try:
        base = env.unwrapped
        env.reset(seed=2_000_000)
        k = base.cfg
        objects = torch.stack([base.local(p.state.pose)[:, :2] for p in base.cubes + base.distractors], 1)
        bins = torch.stack([base.local(b.state.root_pose)[:, :2] for b in base.bins], 1)
        rows = slice(2, None) if variant == "heldout_distractors" else slice(None)  # there: the distractors alone
        apart = (torch.cdist(objects, objects) + torch.eye(objects.shape[1]) * 1e3)[:, rows]
        assert apart.min() >= 2 * k.object_clearance + k.clearance_gap - 1e-4
        assert torch.cdist(objects, bins)[:, rows].min() >= k.object_clearance + k.bin_clearance + k.clearance_gap - 1e-4
        assert (bins[:, 0] - bins[:, 1]).norm(dim=1).min() >= 2 * k.bin_clearance + k.clearance_gap - 1e-4
    finally:
        env.close()
