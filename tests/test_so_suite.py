"""What the SO table-top suite's tasks share (``tasks/so_suite.py``): the ``variant`` option,
colours drawn per episode and named in the instruction, the layout, containers
(``authoring/containers.py``), and the per-env instruction every env has
(``BaseEnv.instructions``), also through worker shards."""

from __future__ import annotations

import math
import re

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.authoring.containers import Container
from simulo_envs.envs.instructions import task_instruction
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.tasks.so100_lift import SO100LiftConfig
from simulo_envs.tasks.so_suite import COLORS, HELDOUT_COLORS, TRAIN_COLORS, VARIANTS, Region, SuiteConfig


def test_variants_change_only_their_axis():
    cfg = SuiteConfig()
    assert cfg.variant("train") is cfg
    held = cfg.variant("heldout")
    assert held.colors == HELDOUT_COLORS and held.shapes == ("cylinder",) and held.distractors == 2
    assert held.region == Region((0.19, 0.31), (0.55, 0.9))
    colors_only = cfg.variant("heldout_colors")
    assert colors_only.colors == HELDOUT_COLORS
    assert (colors_only.shapes, colors_only.distractors, colors_only.region) == (cfg.shapes, cfg.distractors, cfg.region)
    positions = cfg.variant("heldout_positions")
    assert positions.region.bearing == (0.55, 0.9) and positions.colors == TRAIN_COLORS
    assert not set(TRAIN_COLORS) & set(HELDOUT_COLORS) and set(TRAIN_COLORS + HELDOUT_COLORS) <= set(COLORS)
    assert VARIANTS == ("train", "heldout", "heldout_colors", "heldout_shapes", "heldout_distractors",
                        "heldout_positions")


def test_an_unknown_variant_is_refused_before_anything_is_built():
    with pytest.raises(ValueError, match=r"variant must be one of \['train', 'heldout', .*got 'test'"):
        gym.make("SO101Lift-v1", num_envs=1, variant="test")
    with pytest.raises(ValueError, match="Region: radius"):
        Region((0.3, 0.2), (0.0, 0.5))


def test_lift_train_places_the_cube_as_before_and_names_its_colour():
    """The train variant draws the cube's box position first (SO100TableTopConfig's ranges, yaw
    0), the colour after: the same positions per seed as the task had before colours."""
    env = gym.make("SO101Lift-v1", num_envs=8)
    try:
        env.reset(seed=3)
        base = env.unwrapped
        local = base.cube.state.pose[:, :3] - base.env_origins
        assert (abs(local[:, 0] - 0.265) <= 0.03).all() and (abs(local[:, 1]) <= 0.08).all()
        assert torch.allclose(base.cube.state.pose[:, 3:], torch.tensor([1.0, 0, 0, 0]).expand(8, 4))
        rng = np.random.RandomState(int(base.episode_rng.episode_seeds[0]))  # env 0's episode stream
        assert float(local[0, 0]) == pytest.approx(0.265 + rng.uniform(-0.03, 0.03), abs=1e-6)
        assert float(local[0, 1]) == pytest.approx(rng.uniform(-0.08, 0.08), abs=1e-6)
        sentences = base.instructions()
        assert len(sentences) == 8 and all(re.fullmatch(r"Lift the (red|green|blue|yellow) cube\.", s) for s in sentences)
        assert len(set(sentences)) > 1  # drawn per env
        assert base.variant == "train" and base.cfg == SO100LiftConfig()
    finally:
        env.close()


def test_colours_are_painted_where_the_env_renders():
    env = gym.make("SO101Lift-v1", num_envs=4, render_mode="rgb_array", variant="heldout")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        for role, prop in enumerate([base.cube] + base.distractors):
            names = base.color_names(role)
            assert all(n in HELDOUT_COLORS for n in names)
            expected = torch.tensor([COLORS[n] for n in names])
            assert torch.allclose(prop.color[:, :3], expected, atol=1e-6)
        assert all(a != b for a, b in zip(base.color_names(0), base.color_names(1)))  # distinct per env
        assert all(re.fullmatch(r"Lift the (orange|purple|cyan|pink) cylinder\.", s) for s in base.instructions())
    finally:
        env.close()


def test_heldout_positions_lie_in_the_side_sectors_facing_the_base_and_apart():
    env = gym.make("SO101Lift-v1", num_envs=16, variant="heldout")
    try:
        env.reset(seed=1)
        base = env.unwrapped
        poses = [prop.state.pose for prop in [base.cube] + base.distractors]
        for pose in poses:
            local = pose[:, :3] - base.env_origins
            radius, bearing = local[:, :2].norm(dim=1), torch.atan2(local[:, 1], local[:, 0])
            assert ((radius >= 0.19 - 1e-5) & (radius <= 0.31 + 1e-5)).all()
            assert ((bearing.abs() >= 0.55 - 1e-5) & (bearing.abs() <= 0.9 + 1e-5)).all()
            yaw = 2 * torch.atan2(pose[:, 6], pose[:, 3])
            assert torch.allclose(yaw, bearing, atol=1e-4)  # turned to face the base
        apart = (poses[0][:, :2] - poses[1][:, :2]).norm(dim=1)
        assert (apart >= 2 * 0.02 + 0.01 - 1e-5).all()
    finally:
        env.close()


def test_a_bowl_and_a_bin_hold_what_lies_inside_them():
    bowl = Container()
    assert bowl.rim_radius == pytest.approx(0.045 + 0.026 * math.tan(0.35))
    spec = bowl.articulation("Bowl")
    assert spec.fix_base and len(spec.links) == 1 and len(spec.links[0].shapes) == 1 + bowl.segments
    points = torch.tensor([[0.0, 0.0, 0.0165], [0.04, 0.0, 0.0165], [0.05, 0.0, 0.0165], [0.0, 0.0, 0.05]])
    assert bowl.contains(points).tolist() == [True, True, False, False]
    assert bowl.contains(points, margin=0.01).tolist() == [True, False, False, False]
    bin_ = Container("bin", (0.08, 0.12), height=0.04, flare=0.0)
    assert bin_.outer_half_extent == pytest.approx((0.044, 0.064))
    assert [s.name for s in bin_.articulation("Bin").links[0].shapes] == [
        "floor", "wall_x_neg", "wall_x_pos", "wall_y_neg", "wall_y_pos"]
    inside = np.array([[0.035, 0.05, 0.02], [0.045, 0.0, 0.02]])
    assert bin_.contains(inside).tolist() == [True, False]
    for bad, match in [(dict(kind="jar"), "kind"), (dict(inner_size=(0.1, 0.1)), "inner_size"),
                       (dict(kind="bin", inner_size=(0.1, 0.1)), "flare"), (dict(height=0.003), "height > floor"),
                       (dict(segments=4), "segments")]:
        with pytest.raises(ValueError, match=match):
            Container(**bad)


def test_every_env_has_an_instruction_and_shards_join_theirs_in_env_order():
    assert task_instruction(REGISTERED["FrankaLift-v1"]) == "Lift a cube with a Franka Panda."
    env = gym.make("FrankaLift-v1", num_envs=2)
    try:
        assert env.unwrapped.instructions() == ["Lift a cube with a Franka Panda."] * 2
    finally:
        env.close()
    from simulo_envs.vector import make_vector_env

    one = make_vector_env("SO101Lift-v1", num_envs=4)
    sharded = make_vector_env("SO101Lift-v1", num_envs=4, num_workers=2)
    try:
        one.reset(seed=5)
        sharded.reset(seed=5)
        assert sharded.base_env.instructions() == one.base_env.instructions()
    finally:
        one.close()
        sharded.close()
