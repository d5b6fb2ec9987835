"""An image policy reads every camera of its dataset: an SO-101 dataset recorded as LeRobot's SO
setups record (a ``front`` and a ``wrist`` camera) trains a policy whose input stacks both images,
and evaluation renders and feeds both, in the same order, at the recorded size."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.datasets.recording import CameraRecord, RecordingOptions
from simulo_envs.imitation import default_config
from simulo_envs.imitation.checkpoint import load_policy_from, read_checkpoint
from simulo_envs.imitation.datasets_io import load_demonstrations
from simulo_envs.imitation.demos import DemonstrationError
from simulo_envs.imitation.rollout import evaluate, make_eval_env
from simulo_envs.imitation.spec import PolicySpec, policy_inputs, spec_for_env
from simulo_envs.imitation.trainer import train

TINY = {"hidden": 32, "blocks": 1, "batch_size": 8, "lr_warmup": 0, "iterations": 2, "image_features": 16,
        "image_channels": (8, 8)}
SIZE = 32
CAMERAS = (CameraRecord("front", "base_camera", (SIZE, SIZE)), CameraRecord("wrist", "wrist_camera", (SIZE, SIZE)))

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def two_camera_demos(tmp_path_factory) -> str:
    """Two SO101Lift-v1 expert episodes in the follower's schema, with a front and a wrist camera."""
    out = str(tmp_path_factory.mktemp("so101") / "demos")
    summary = collect(CollectSettings(env_id="SO101Lift-v1", num_episodes=2, out=out, num_envs=2, obs_mode="rgb",
                                      recording=RecordingOptions(cameras=CAMERAS)), progress=False)
    assert summary["episodes"] == 2
    return out


def _hwc(images: torch.Tensor) -> np.ndarray:
    """uint8 (T, 3, H, W) -> int (T, H, W, 3)."""
    return images.permute(0, 2, 3, 1).numpy().astype(int)


def test_the_policy_input_stacks_every_camera_of_the_dataset_in_its_order(two_camera_demos):
    demos = load_demonstrations(two_camera_demos, "rgb")
    spec = demos.spec
    assert spec.cameras == ("base_camera", "wrist_camera") and spec.camera == "base_camera"
    assert spec.image_size == (SIZE, SIZE) and spec.state_source == "robot"
    recorded = load_dataset(two_camera_demos)[0].images
    image = demos.episodes[0].image
    assert image.shape == (len(demos.episodes[0]), 6, SIZE, SIZE) and image.dtype == torch.uint8
    assert np.array_equal(_hwc(image[:, :3]), recorded["front"].numpy().astype(int))
    assert np.array_equal(_hwc(image[:, 3:]), recorded["wrist"].numpy().astype(int))
    # two different views: the wrist camera sees the jaws up close, the front one the scene
    assert np.abs(_hwc(image[:, :3]) - _hwc(image[:, 3:])).mean() > 20
    one = load_demonstrations(two_camera_demos, "rgb", camera="wrist")
    assert one.spec.cameras == ("wrist_camera",) and one.episodes[0].image.shape[1] == 3
    assert torch.equal(one.episodes[0].image, image[:, 3:])


def test_evaluation_renders_and_feeds_both_cameras_as_recorded(two_camera_demos):
    demos = load_demonstrations(two_camera_demos, "rgb")
    ds = load_dataset(two_camera_demos)
    env = make_eval_env(demos.spec, 1)
    try:
        obs, _ = env.reset(seed=int(ds.seeds[0]))
        _, image = policy_inputs(obs, demos.spec)
        assert image.shape == (1, 6, SIZE, SIZE)
        for index, sensor in enumerate(("base_camera", "wrist_camera")):
            rendered = obs["sensor_data"][sensor]["rgb"][0, ..., :3].numpy().astype(int)
            assert np.array_equal(_hwc(image[:, 3 * index:3 * index + 3])[0], rendered)
        # the first frame of the recorded episode, re-rendered from its seed: each slot shows its
        # camera's recorded view (up to the MP4's compression), not the other camera's
        first = [ds[0].images[name][0].numpy().astype(int) for name in ("front", "wrist")]
        error = [[np.abs(_hwc(image[:, 3 * i:3 * i + 3])[0] - first[j]).mean() for j in range(2)] for i in range(2)]
        assert error[0][0] < 6 and error[1][1] < 6, error
        assert error[0][1] > 4 * error[0][0] and error[1][0] > 4 * error[1][1], error
    finally:
        env.close()


@pytest.mark.parametrize("policy", ["bc", "diffusion"])
def test_a_trained_policy_reads_both_cameras(two_camera_demos, tmp_path, policy):
    demos = load_demonstrations(two_camera_demos, "rgb")
    config = default_config(policy, "rgb", dict(TINY))
    result = train(demos, config, str(tmp_path / "run"), progress=False)
    trained, spec, config = load_policy_from(read_checkpoint(result.checkpoint))
    assert spec.cameras == ("base_camera", "wrist_camera")
    assert trained.encoder.cond_dim == config.obs_horizon * (6 + 2 * config.image_features)
    episode = demos.episodes[0]
    state = episode.state[:1].unsqueeze(1).expand(-1, config.obs_horizon, -1)
    image = episode.image[:1].unsqueeze(1).expand(-1, config.obs_horizon, -1, -1, -1).clone()

    def plan(images):
        return trained.plan(state, images, torch.Generator().manual_seed(0))

    base = plan(image)
    for channels in (slice(0, 3), slice(3, 6)):  # another front image, then another wrist image
        changed = image.clone()
        changed[:, :, channels] = 255 - changed[:, :, channels]
        assert (plan(changed) - base).abs().max() > 1e-4, channels
    # the checkpoint evaluates (short episodes: every step renders both cameras of both envs)
    summary = evaluate(result.checkpoint, 2, seed=1000, max_envs=2, max_episode_steps=8)
    assert summary["episodes"] == 2 and 0 < summary["mean_length"] <= 8


def test_cameras_of_different_sizes_are_refused_naming_them(two_camera_demos, tmp_path):
    copy = str(tmp_path / "resized")
    shutil.copytree(two_camera_demos, copy)
    for name in ("info.json", "simulo_env.json"):  # the metadata of a 24x24 wrist camera
        path = os.path.join(copy, "meta", name)
        with open(path) as f:
            meta = json.load(f)
        if name == "info.json":
            meta["features"]["observation.images.wrist"]["shape"] = [24, 24, 3]
        else:
            meta["cameras"]["wrist"] = [24, 24, 3]
        with open(path, "w") as f:
            json.dump(meta, f)
    assert load_dataset(copy).cameras["wrist"][:2] == (24, 24)
    with pytest.raises(DemonstrationError, match=r"different sizes \(front 32x32, wrist 24x24\).*--camera"):
        load_demonstrations(copy, "rgb")
    with pytest.raises(DemonstrationError, match=r"no images of camera 'side'"):
        load_demonstrations(two_camera_demos, "rgb", camera=["front", "side"])
    with pytest.raises(ValueError, match=r"one size; SO101Lift-v1's are base_camera 32x32, wrist_camera 24x24"):
        spec_for_env("SO101Lift-v1", "rgb", "pd_joint_pos", ["base_camera", "wrist_camera"],
                     recorded_kwargs={"sensor_configs": {"base_camera": {"width": 32, "height": 32},
                                                         "wrist_camera": {"width": 24, "height": 24}}})


def test_an_image_crop_with_two_cameras_is_refused(two_camera_demos, tmp_path):
    demos = load_demonstrations(two_camera_demos, "rgb")
    config = default_config("bc", "rgb", {**TINY, "image_crop": (0, 0, 16, 16)})
    with pytest.raises(ValueError, match=r"image_crop is a region of one camera's image; the policy reads 2 cameras"):
        train(demos, config, str(tmp_path / "run"), progress=False)
    assert not os.path.exists(tmp_path / "run" / "model_final.pt")


def test_a_one_camera_checkpoint_spec_reads_its_camera():
    old = {"env_id": "FrankaLift-v1", "obs": "rgb", "control_mode": "pd_ee_delta_pos", "state_dim": 25,
           "action_dim": 4, "camera": "base_camera", "image_size": [64, 64]}  # written before ``cameras``
    spec = PolicySpec.from_dict(old)
    assert spec.cameras == ("base_camera",) and spec.to_dict()["cameras"] == ("base_camera",)
    with pytest.raises(ValueError, match="must be distinct and begin with camera 'base_camera'"):
        PolicySpec.from_dict({**old, "cameras": ["wrist_camera", "base_camera"]})
