"""Simulated SO-101 demonstrations (SO101Lift-v1) merge with a real SO-101 follower's recording, by LeRobot's own
tools: a dataset written by LeRobot's ``LeRobotDataset.create/add_frame/save_episode`` in the
``so101_follower`` schema (``lerobot-record``'s: 30 fps, robot_type ``so_follower``, the six
``<motor>.pos`` features in degrees and 0..100, a front and a wrist camera, no ``next.*``; synthetic
values, since nothing can be downloaded) and ours, collected with ``--fps 30 --camera
front=base_camera:64x48 --camera wrist=wrist_camera:64x48 --no-next``, merge with ``lerobot-edit-dataset --operation.type merge``; LeRobot reads our episodes
in the merge with the values we wrote, and ``lerobot-train`` trains on it. Our script and LeRobot's
commands run in this process (``integrations/tests/lerobot_commands.py``): what is checked is what
they write, not their interpreter's start."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import torch
from lerobot_commands import REPO, run

CAMERAS = {"front": "base_camera", "wrist": "wrist_camera"}
NAMES = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]
HEIGHT, WIDTH = 48, 64
TINY_ACT = ["--policy.type=act", "--policy.pretrained_backbone_weights=null", "--policy.dim_model=32",
            "--policy.dim_feedforward=64", "--policy.n_heads=2", "--policy.n_encoder_layers=1",
            "--policy.n_decoder_layers=1", "--policy.use_vae=false", "--policy.chunk_size=4",
            "--policy.n_action_steps=4", "--policy.device=cpu", "--policy.push_to_hub=false"]
"""A small ACT (no pretrained backbone: nothing can be downloaded)."""


def collect_demos(*args: str) -> None:
    """``scripts/collect_demos.py`` with ``args``, by its ``main`` in this process (it sets torch's
    thread count: given back)."""
    spec = importlib.util.spec_from_file_location("collect_demos_script", os.path.join(REPO, "scripts", "collect_demos.py"))
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    threads = torch.get_num_threads()
    try:
        assert script.main(list(args)) == 0
    finally:
        torch.set_num_threads(threads)


def real_recording(root: str) -> None:
    """Two episodes of 12 frames in the so101_follower schema, written by LeRobot's own writer."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig  # noqa: F401  (registers the type)

    features = {"action": {"dtype": "float32", "shape": (6,), "names": NAMES},
                "observation.state": {"dtype": "float32", "shape": (6,), "names": NAMES}}
    for camera in CAMERAS:
        features[f"observation.images.{camera}"] = {"dtype": "video", "shape": (HEIGHT, WIDTH, 3),
                                                    "names": ["height", "width", "channels"]}
    robot_type = SO101Follower.name  # what lerobot-record writes: robot.name
    ds = LeRobotDataset.create(repo_id="local/real_so101", fps=30, root=root, robot_type=robot_type,
                               features=features, use_videos=True)
    rng = np.random.default_rng(0)
    for _ in range(2):
        for _ in range(12):
            frame = {"action": rng.uniform(-90, 90, 6).astype(np.float32),
                     "observation.state": rng.uniform(-90, 90, 6).astype(np.float32), "task": "Pick up the cube."}
            for camera in CAMERAS:
                frame[f"observation.images.{camera}"] = rng.integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)
            ds.add_frame(frame)
        ds.save_episode()
    ds.finalize()


def test_sim_demos_merge_with_a_real_recording_and_train(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from simulo_envs.datasets import load_dataset

    sim, real, merged = str(tmp_path / "sim"), str(tmp_path / "real"), str(tmp_path / "merged")
    collect_demos("--env-id", "SO101Lift-v1", "--num-episodes", "2", "--num-envs", "2", "--obs-mode", "rgb",
                  "--format", "lerobot", "--out", sim, "--fps", "30",
                  *[f"--camera={name}={sensor}:{WIDTH}x{HEIGHT}" for name, sensor in CAMERAS.items()],
                  "--no-next", "--no-progress")
    real_recording(real)
    run("lerobot-edit-dataset", "--new_repo_id=local/merged", f"--new_root={merged}", "--operation.type=merge",
        "--operation.repo_ids=['local/real_so101', 'local/sim']", f"--operation.roots=['{real}', '{sim}']")
    ds = LeRobotDataset("local/merged", root=merged, video_backend="pyav")
    ours = load_dataset(sim)
    assert ds.meta.total_episodes == 4 and ds.meta.robot_type == "so_follower" and ds.fps == 30
    assert ours.successes.all()  # the expert succeeds at 30 Hz
    assert ds.meta.total_frames == 24 + int(ours.lengths.sum())
    for k in range(2):  # our episodes follow the real ones, values as we wrote them
        row = ds.meta.episodes[2 + k]
        frames = [ds[i] for i in range(row["dataset_from_index"], row["dataset_to_index"])]
        state = np.stack([f["observation.state"].numpy() for f in frames])
        action = np.stack([f["action"].numpy() for f in frames])
        assert np.array_equal(state, ours[k].observation_state.numpy())
        assert np.array_equal(action, ours[k].action.numpy())
        for camera in CAMERAS:
            image = frames[0][f"observation.images.{camera}"].numpy()  # (3, H, W) in [0, 1]
            mine = ours[k].images[camera][0].numpy().transpose(2, 0, 1) / 255.0
            assert image.shape == (3, HEIGHT, WIDTH) and np.abs(image - mine).mean() < 0.02
    threads = torch.get_num_threads()
    try:
        run("lerobot-train", "--dataset.repo_id=local/merged", f"--dataset.root={merged}", "--dataset.video_backend=pyav",
            *TINY_ACT, "--steps=2", "--batch_size=4", "--num_workers=0", "--save_freq=2",
            f"--output_dir={tmp_path / 'train'}", "--wandb.enable=false")
    finally:
        torch.set_num_threads(threads)
    assert os.path.isdir(tmp_path / "train" / "checkpoints" / "000002" / "pretrained_model")
