"""Datasets that merge with a real SO arm's recordings (LeRobot 0.6's ``lerobot-record``): the
recording frequency, the follower's robot type, camera names and sizes, no ``next.*`` columns,
statistics typed as LeRobot 0.6 writes them, fast-start MP4s; bad options refused before any work.
LeRobot's own merge and training on such a dataset: ``integrations/.../test_dataset_merge.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import simulo_envs  # noqa: F401
from simulo_envs.datasets import load_dataset, video
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.datasets.recording import CameraRecord, RecordingOptions, parse_camera

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEROBOT_RECORD_KEYS = {"observation.state", "action", "observation.images.front", "timestamp", "frame_index",
                       "episode_index", "index", "task_index"}
"""The features of a real SO follower's ``lerobot-record`` dataset with one camera named front."""


@pytest.fixture(scope="module")
def real_schema_demos(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("real") / "demos")
    options = RecordingOptions(fps=30, cameras=(parse_camera("front=base_camera:64x48"),), next_features=False)
    summary = collect(CollectSettings(env_id="SO100Lift-v1", num_episodes=2, out=out, num_envs=2, obs_mode="rgb",
                                      keep_failures=True, recording=options), progress=False)
    assert summary["episodes"] == 2 and summary["error"] is None
    return out


def test_the_dataset_has_the_real_recordings_layout(real_schema_demos):
    with open(os.path.join(real_schema_demos, "meta", "info.json")) as f:
        info = json.load(f)
    assert info["fps"] == 30 and info["robot_type"] == "so_follower"
    assert set(info["features"]) == LEROBOT_RECORD_KEYS
    front = info["features"]["observation.images.front"]
    assert front["shape"] == [48, 64, 3] and front["info"]["video.height"] == 48 and front["info"]["video.fps"] == 30
    assert front["info"]["is_depth_map"] is False and "video.is_depth_map" not in front["info"]  # LeRobot 0.6's keys
    ds = load_dataset(real_schema_demos)
    assert ds.schema.camera_sources == {"front": "base_camera"} and ds.schema.next_features is False
    assert ds[0].images["front"].shape[1:] == (48, 64, 3) and ds[0].reward is None
    assert np.allclose(np.diff(np.asarray(pq.read_table(os.path.join(real_schema_demos, "data", "chunk-000",
                                                                     "file-000.parquet"))["timestamp"])[:5]), 1 / 30)


def test_statistics_are_typed_as_lerobot_06_writes_them(real_schema_demos):
    """LeRobot 0.6.1's writer (measured: ``LeRobotDataset.create/add_frame/save_episode``) stores every
    per-episode statistic as a list of doubles, ``count`` as a list of int64, whatever the feature's dtype."""
    table = pq.read_table(os.path.join(real_schema_demos, "meta", "episodes", "chunk-000", "file-000.parquet"))
    stats = [f for f in table.schema if f.name.startswith("stats/")]
    assert {f.name.split("/")[1] for f in stats} == LEROBOT_RECORD_KEYS
    for field in stats:
        leaf = field.type
        while pa.types.is_list(leaf):
            leaf = leaf.value_type
        assert leaf == (pa.int64() if field.name.endswith("/count") else pa.float64()), field


def test_videos_start_fast_moov_before_mdat(real_schema_demos, tmp_path):
    path = os.path.join(real_schema_demos, "videos", "observation.images.front", "chunk-000", "file-000.mp4")
    with open(path, "rb") as f:
        kinds = [k for k, _, _ in video.top_level_boxes(f.read())]
    assert kinds.index(b"moov") < kinds.index(b"mdat")
    # moving the box keeps every frame: a file muxed with moov last decodes to the same frames
    import av

    frames = np.random.default_rng(0).integers(0, 255, (6, 32, 48, 3), dtype=np.uint8)
    slow = tmp_path / "slow.mp4"
    with av.open(str(slow), "w", format="mp4") as out:
        stream = out.add_stream("libsvtav1", rate=30, options={"g": "2", "crf": "30", "preset": "12"})
        stream.width, stream.height, stream.pix_fmt = 48, 32, "yuv420p"
        for k, image in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = k
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    data = slow.read_bytes()
    assert [k for k, _, _ in video.top_level_boxes(data)].index(b"moov") > [k for k, _, _ in video.top_level_boxes(data)].index(b"mdat")
    fast = tmp_path / "fast.mp4"
    fast.write_bytes(video.faststart(data))
    assert np.array_equal(video.decode(str(fast)), video.decode(str(slow)))
    assert video.faststart(fast.read_bytes()) == fast.read_bytes()  # already fast: unchanged


def test_bad_recording_options_are_one_clear_error_before_any_work(tmp_path, capsys):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import collect_demos
    finally:
        sys.path.pop(0)

    def cli(*args):
        with pytest.raises(SystemExit) as exit_:
            collect_demos.main(list(args))
        return subprocess.CompletedProcess(args, exit_.value.code, "", capsys.readouterr().err)

    out = tmp_path / "never"
    proc = cli("--env-id", "FrankaLift-v1", "--num-episodes", "1", "--out", str(out), "--fps", "30")
    assert proc.returncode == 2 and "FrankaLift-v1 steps its physics at 100 Hz, which 30 does not divide" in proc.stderr
    assert "--sim-freq 120" in proc.stderr and proc.stderr.count("error:") == 1
    proc = cli("--env-id", "SO100Lift-v1", "--num-episodes", "1", "--out", str(out), "--obs-mode", "rgb",
               "--camera", "wrist=wrist_cam:64x48")
    assert proc.returncode == 2 and "'wrist_cam'" in proc.stderr and "no such camera" in proc.stderr
    assert "['base_camera', 'wrist_camera']" in proc.stderr  # the cameras it has
    proc = cli("--env-id", "SO100Lift-v1", "--num-episodes", "1", "--out", str(out), "--camera", "front:640by480")
    assert proc.returncode == 2 and "NAME[=SENSOR][:WxH]" in proc.stderr
    proc = cli("--env-id", "SO100Lift-v1", "--num-episodes", "1", "--out", str(out), "--format", "hdf5", "--no-next")
    assert proc.returncode == 2 and "lerobot format" in proc.stderr
    assert not out.exists()


def test_camera_option_parsing():
    assert parse_camera("front=base_camera:640x480") == CameraRecord("front", "base_camera", (640, 480))
    assert parse_camera("base_camera") == CameraRecord("base_camera", "base_camera", None)
    assert parse_camera("wrist=hand") == CameraRecord("wrist", "hand", None)
    for bad in ("", "front=", "a b", "front:640by480"):
        with pytest.raises(ValueError, match=r"expected NAME\[=SENSOR\]\[:WxH\]"):
            parse_camera(bad)
    with pytest.raises(ValueError, match="width and height must be >= 1 px"):
        parse_camera("front:0x480")
