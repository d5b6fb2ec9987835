"""Visual randomization of the scene: textures of the procedural set on props and the floor, the
floor's colour, and distractor objects (``randomization="visual"``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.authoring.textures import TEXTURE_NAMES, texture, texture_image
from simulo_envs.envs.distractors import PARK_DEPTH
from simulo_envs.envs.randomization import Choice, Randomize, Uniform
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.policies import EXPERTS

TINY = {"width": 16, "height": 16}


def _rgb(env) -> torch.Tensor:
    return env.get_obs()["sensor_data"]["base_camera"]["rgb"]


def test_the_texture_set_is_made_here_and_distinct():
    images = [texture(i).image for i in range(1, len(TEXTURE_NAMES))]
    assert texture(0) is None and all(image.shape == (64, 64, 4) and image.dtype == np.uint8 for image in images)
    assert len({image.tobytes() for image in images}) == len(images)
    np.testing.assert_array_equal(texture_image("noise", 64, 4), images[TEXTURE_NAMES.index("noise") - 1])
    assert texture(2, floor=True).image.shape == (512, 512, 4)
    with pytest.raises(ValueError, match="one of"):
        texture_image("marble", 8, 2)


def test_floor_and_prop_textures_change_only_their_env():
    env = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="rgb", sensor_configs=TINY)
    try:
        env.reset(seed=0)
        before = _rgb(env)
        env.floor.set_texture(1, env_ids=[0])           # checker
        after = _rgb(env)
        assert not torch.equal(after[0], before[0]) and torch.equal(after[1], before[1])
        env.floor.set_texture(0, env_ids=[0])           # plain: the picture as built
        assert torch.equal(_rgb(env), before)
        env.floor.set_color([0.9, 0.1, 0.1], env_ids=[1])
        np.testing.assert_allclose(env.floor.color[1].numpy(), [0.9, 0.1, 0.1], rtol=1e-6)
        red = _rgb(env)
        assert torch.equal(red[0], before[0]) and red[1, ..., 0].float().mean() > before[1, ..., 0].float().mean() + 20
        env.block.set_texture([0, 4])                    # dots on env 1's block
        assert torch.equal(_rgb(env)[0], before[0])
    finally:
        env.close()


@pytest.mark.parametrize("write, match", [
    (lambda env: env.floor.set_texture(len(TEXTURE_NAMES)), r"floor texture\[0\] = 7: a texture is an index in \[0, 7\) "
                                                           r"\(0 plain, 1 checker, 2 stripes"),
    (lambda env: env.block.set_texture(1.5), "a texture is an index"),
    (lambda env: env.floor.set_color([2.0, 0.0, 0.0]), r"floor color\[0, 0\] = 2 is outside \[0, 1\]"),
    (lambda env: env.visual_distractors["0"].set_kind(3), r"an index in \[0, 3\) \(0 box, 1 sphere, 2 cylinder\)"),
])
def test_bad_scene_values_raise_and_change_nothing(write, match):
    table = (Randomize("visual_distractors.0.position", Uniform((0.4, 0.3), (0.5, 0.35))),)
    env = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="rgb", sensor_configs=TINY, randomization=table)
    try:
        env.reset(seed=0)
        before, kind = _rgb(env), env.visual_distractors["0"].kind
        with pytest.raises(ValueError, match=match):
            write(env)
        assert torch.equal(_rgb(env), before) and torch.equal(env.visual_distractors["0"].kind, kind)
    finally:
        env.close()


@pytest.mark.parametrize("entry, match", [
    (Randomize("floor.texture", Choice([0, 9])), "above the valid <= 6"),
    (Randomize("visual_distractors.left.kind", Choice([0, 1])), "a distractor slot is a number"),
    (Randomize("visual_distractors.0.size", Uniform(0.01, 0.02)),
     r"no randomizable parameter 'size'; it has \['color', 'kind', 'position', 'yaw'\]"),
])
def test_bad_scene_entries_are_refused(entry, match):
    with pytest.raises(ValueError, match=match):
        REGISTERED["FrankaLift-v1"](num_envs=1, obs_mode="rgb", sensor_configs=TINY, randomization=(entry,))


def test_distractors_stand_in_their_boxes_and_the_others_wait_below():
    env = REGISTERED["FrankaLift-v1"](num_envs=3, obs_mode="rgb", sensor_configs=TINY, randomization="visual")
    try:
        env.reset(seed=[1, 2, 3])
        origins = env.scene.env_origins
        for slot, ((x0, y0), (x1, y1)) in zip(("0", "1"), env.cfg.distractor_regions):
            distractor = env.visual_distractors[slot]
            xy = distractor.position
            assert torch.all((xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1))
            for k, prop in enumerate(distractor.props):
                local = prop.state.pose[:, :3] - origins
                shown = distractor.kind == k
                torch.testing.assert_close(local[shown, 2], torch.full((int(shown.sum()),), 0.02))
                torch.testing.assert_close(local[shown, :2], xy[shown])
                assert torch.all(local[~shown, 2] == -PARK_DEPTH)
    finally:
        env.close()


@pytest.mark.parametrize("task", ["FrankaLift-v1", "SO100Lift-v1"])
def test_the_expert_rollout_is_the_same_under_the_visual_preset(task):
    """Distractors, textures, colours, lights, cameras and noise change pictures only: the scripted
    expert's episodes (object poses step by step, success) are bit for bit those without them."""
    runs = {}
    for randomization in ("visual", "none"):
        env = REGISTERED[task](num_envs=2, obs_mode="rgb", sensor_configs={"width": 8, "height": 8},
                               randomization=randomization, control_mode="pd_ee_delta_pos")
        try:
            expert = EXPERTS[task](env)
            env.reset(seed=[11, 12])
            poses, success = [], torch.zeros(2, dtype=torch.bool)
            for _ in range(60):
                _, _, terminated, truncated, info = env.step(expert.act())
                poses.append(info["cube_pose" if "cube_pose" in info else "block_pose"].clone())
                success |= info["success"]
                if (terminated | truncated).all():
                    break
            runs[randomization] = (torch.stack(poses), success)
            if randomization == "visual":
                assert len(env.visual_distractors) == 2
        finally:
            env.close()
    assert runs["visual"][1].all() and torch.equal(runs["visual"][1], runs["none"][1])
    assert torch.equal(runs["visual"][0], runs["none"][0])
