"""The LeRobot v3.0 writer and reader: layout, round trip (exact for tables, within the codec's
loss for video frames), statistics, several files, appending, and damaged files refused."""

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_datasets_common import SCHEMA, STATE_SCHEMA, make_episode

from simulo_envs.datasets import DatasetLayoutError, LeRobotWriter, load_dataset, stats
from simulo_envs.datasets.lerobot import TASK_INDEX_COLUMN

CODEC_MEAN_LOSS = 3.0
"""Bound on the mean absolute difference (levels of 255) between written and decoded frames of the
smooth synthetic images (AV1, crf 30, yuv420p; measured about 1.2)."""


def write(root, episodes, schema=SCHEMA, **kwargs):
    writer = LeRobotWriter(str(root), schema, **kwargs)
    for ep in episodes:
        writer.add(ep)
    return writer


def test_layout_follows_lerobot_v3(tmp_path):
    root = tmp_path / "ds"
    write(root, [make_episode(7, steps=12), make_episode(8, steps=9)])
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == ["data/chunk-000/file-000.parquet", "meta/episodes/chunk-000/file-000.parquet", "meta/info.json",
                     "meta/simulo_env.json", "meta/stats.json", "meta/tasks.parquet",
                     "videos/observation.images.base_camera/chunk-000/file-000.mp4"]
    info = json.loads((root / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 20 and info["robot_type"] == "panda"
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (2, 21, 1)
    assert info["splits"] == {"train": "0:2"} and info["chunks_size"] == 1000
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] == "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    features = info["features"]
    assert list(features) == ["observation.state", "observation.images.base_camera", "action", "next.reward",
                              "next.done", "next.success", "timestamp", "frame_index", "episode_index", "index",
                              "task_index"]
    assert features["observation.state"] == {"dtype": "float32", "shape": [5], "names": list(SCHEMA.state_names)}
    assert features["action"]["names"] == ["arm.dx", "arm.dy", "arm.dz", "gripper"]
    video = features["observation.images.base_camera"]
    assert video["shape"] == [32, 48, 3] and video["names"] == ["height", "width", "channels"]
    assert video["info"]["video.codec"] == "av1" and video["info"]["video.pix_fmt"] == "yuv420p"
    assert (video["info"]["video.height"], video["info"]["video.width"], video["info"]["video.fps"]) == (32, 48, 20)
    assert features["next.done"] == {"dtype": "bool", "shape": [1], "names": None}
    data = pq.read_table(root / "data/chunk-000/file-000.parquet")
    state_type = data.schema.field("observation.state").type
    assert pa.types.is_fixed_size_list(state_type) and state_type.list_size == 5 and state_type.value_type == pa.float32()
    assert data["index"].to_pylist() == list(range(21)) and data["frame_index"].to_pylist()[12:14] == [0, 1]
    assert np.allclose(data["timestamp"].to_numpy()[:3], [0.0, 0.05, 0.1])
    assert data["next.done"].to_pylist()[11] and not any(data["next.done"].to_pylist()[:11])
    episodes = pq.read_table(root / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    assert [(e["dataset_from_index"], e["dataset_to_index"], e["length"], e["seed"]) for e in episodes] == \
        [(0, 12, 12, 7), (12, 21, 9, 8)]
    key = "videos/observation.images.base_camera"
    assert [(e[f"{key}/from_timestamp"], e[f"{key}/to_timestamp"]) for e in episodes] == [(0.0, 0.6), (0.6, 1.05)]
    assert episodes[0]["tasks"] == ["Lift a cube with a Franka Panda."]
    assert len(episodes[0]["stats/observation.state/mean"]) == 5
    assert np.asarray(episodes[0]["stats/observation.images.base_camera/mean"]).shape == (3, 1, 1)
    tasks = pq.read_table(root / "meta/tasks.parquet")
    assert tasks["task_index"].to_pylist() == [0] and tasks[TASK_INDEX_COLUMN].to_pylist() == [SCHEMA.task]
    assert b"pandas" in tasks.schema.metadata  # pandas.read_parquet restores the task text as the index


def test_round_trip_tables_exact_frames_within_codec_loss(tmp_path):
    episodes = [make_episode(s, steps=n) for s, n in ((3, 12), (4, 15), (5, 10))]
    write(tmp_path / "ds", episodes)
    ds = load_dataset(str(tmp_path / "ds"))
    assert ds.format == "lerobot" and len(ds) == 3 and ds.num_frames == 37
    assert ds.schema == SCHEMA and ds.seeds.tolist() == [3, 4, 5] and ds.successes.tolist() == [True] * 3
    for source, ep in zip(episodes, ds):
        n = source.length
        assert ep.length == n and ep.seed == source.seed
        assert np.array_equal(ep.observation_state.numpy(), source.state_vector()[:n])
        assert np.array_equal(ep.action.numpy(), source.actions)
        assert np.array_equal(ep.reward.numpy(), source.rewards)
        assert np.array_equal(ep.done.numpy(), source.terminated | source.truncated)
        assert np.array_equal(ep.success.numpy(), source.success)
        frames = ep.images["base_camera"].numpy()
        assert frames.shape == (n, 32, 48, 3) and frames.dtype == np.uint8
        loss = np.abs(frames.astype(int) - source.rgb()["base_camera"][:n]).mean()
        assert 0 < loss < CODEC_MEAN_LOSS


def test_stats_json_holds_the_statistics_of_every_frame(tmp_path):
    episodes = [make_episode(s, steps=n) for s, n in ((1, 8), (2, 20))]
    write(tmp_path / "ds", episodes)
    ds = load_dataset(str(tmp_path / "ds"))
    state = np.concatenate([e.state_vector()[:-1] for e in episodes])
    got = ds.stats["observation.state"]
    assert np.allclose(got["mean"].numpy(), state.mean(0), atol=1e-6)
    assert np.allclose(got["std"].numpy(), state.std(0), atol=1e-6)
    assert np.allclose(got["min"].numpy(), state.min(0)) and got["count"].tolist() == [28]
    pixels = np.concatenate([e.rgb()["base_camera"][:-1] for e in episodes]).reshape(-1, 3) / 255.0
    assert np.allclose(ds.stats["observation.images.base_camera"]["mean"].numpy().ravel(), pixels.mean(0), atol=1e-6)
    assert set(ds.stats) >= {"action", "next.reward", "timestamp", "index"}


def test_episodes_spread_over_files_and_appending_opens_new_ones(tmp_path):
    root = tmp_path / "ds"
    episodes = [make_episode(s, steps=6 + s) for s in range(5)]
    write(root, episodes[:3], episodes_per_file=2)
    writer = LeRobotWriter(str(root), SCHEMA, append=True, episodes_per_file=2)
    for ep in episodes[3:]:
        writer.add(ep)
    names = sorted(str(p.relative_to(root / "data")) for p in (root / "data").rglob("*.parquet"))
    assert names == ["chunk-000/file-000.parquet", "chunk-000/file-001.parquet", "chunk-000/file-002.parquet"]
    videos = sorted(p.name for p in (root / "videos/observation.images.base_camera/chunk-000").iterdir())
    assert videos == ["file-000.mp4", "file-001.mp4", "file-002.mp4"]
    ds = load_dataset(str(root))
    assert ds.seeds.tolist() == [0, 1, 2, 3, 4]
    for source, ep in zip(episodes, ds):
        assert np.array_equal(ep.action.numpy(), source.actions)
        loss = np.abs(ep.images["base_camera"].numpy().astype(int) - source.rgb()["base_camera"][:-1]).mean()
        assert loss < CODEC_MEAN_LOSS
    rows = pq.read_table(root / "meta/episodes/chunk-000/file-001.parquet").to_pylist()
    assert [r["episode_index"] for r in rows] == [2] and rows[0]["videos/observation.images.base_camera/from_timestamp"] == 0.0


def test_add_many_commits_several_episodes_at_once(tmp_path):
    writer = LeRobotWriter(str(tmp_path / "ds"), STATE_SCHEMA)
    assert writer.add_many([make_episode(s, images=False) for s in range(3)]) == [0, 1, 2]
    ds = load_dataset(str(tmp_path / "ds"))
    assert len(ds) == 3 and ds.cameras == {} and ds[2].images == {}
    assert not (tmp_path / "ds" / "videos").exists()


def test_concatenated_frames_for_training(tmp_path):
    write(tmp_path / "ds", [make_episode(s, steps=5, images=False) for s in range(2)], schema=STATE_SCHEMA)
    batch = load_dataset(str(tmp_path / "ds")).concatenated()
    assert batch["observation.state"].shape == (10, 5) and batch["action"].shape == (10, 4)
    assert batch["episode_index"].tolist() == [0] * 5 + [1] * 5 and batch["frame_index"].tolist() == list(range(5)) * 2


# ---------------------------------------------------------------------- damaged files
def test_a_truncated_data_file_is_named(tmp_path):
    root = tmp_path / "ds"
    write(root, [make_episode(1, images=False)], schema=STATE_SCHEMA)
    path = root / "data/chunk-000/file-000.parquet"
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(DatasetLayoutError, match="file-000.parquet is not a readable parquet file"):
        load_dataset(str(root))


def test_info_of_another_version_or_broken_json_is_refused(tmp_path):
    root = tmp_path / "ds"
    write(root, [make_episode(1, images=False)], schema=STATE_SCHEMA)
    info_path = root / "meta/info.json"
    info = json.loads(info_path.read_text())
    info_path.write_text(json.dumps({**info, "codebase_version": "v2.1"}))
    with pytest.raises(DatasetLayoutError, match="v2.1"):
        load_dataset(str(root))
    info_path.write_text(json.dumps(info)[:100])
    with pytest.raises(DatasetLayoutError, match="info.json is not valid JSON"):
        load_dataset(str(root))


def test_a_column_of_the_wrong_width_is_refused(tmp_path):
    root = tmp_path / "ds"
    write(root, [make_episode(1, images=False)], schema=STATE_SCHEMA)
    info_path = root / "meta/info.json"
    info = json.loads(info_path.read_text())
    info["features"]["observation.state"]["shape"] = [6]
    info_path.write_text(json.dumps(info))
    with pytest.raises(DatasetLayoutError, match="observation.state"):
        load_dataset(str(root))


def test_a_missing_video_is_named_when_its_episode_is_read(tmp_path):
    root = tmp_path / "ds"
    write(root, [make_episode(1)])
    os.unlink(root / "videos/observation.images.base_camera/chunk-000/file-000.mp4")
    ds = load_dataset(str(root))
    with pytest.raises(DatasetLayoutError, match="file-000.mp4 is missing"):
        ds[0]


def test_rows_of_an_uncommitted_episode_are_ignored_and_trimmed_on_append(tmp_path):
    root = tmp_path / "ds"
    write(root, [make_episode(s, images=False) for s in range(2)], schema=STATE_SCHEMA)
    info_path = root / "meta/info.json"
    info = json.loads(info_path.read_text())
    committed = dict(info, total_episodes=1, total_frames=12, splits={"train": "0:1"})
    info_path.write_text(json.dumps(committed))  # as if killed before the second commit
    assert len(load_dataset(str(root))) == 1
    writer = LeRobotWriter(str(root), STATE_SCHEMA, append=True)
    writer.add(make_episode(9, images=False))
    ds = load_dataset(str(root))
    assert ds.seeds.tolist() == [0, 9]
    assert pq.read_table(root / "data/chunk-000/file-000.parquet").num_rows == 12  # the stale rows are gone
    assert stats.from_json(json.loads((root / "meta/stats.json").read_text()))["index"]["count"].tolist() == [24]
