"""A LeRobot dataset killed between any two writes of a commit: no ``meta/episodes`` row refers to
frames that are not committed (LeRobot's ``EpisodeAwareSampler`` walks every row), the totals
agree with the rows, and the writer goes on from there. The same kills, read by LeRobot's own
classes: ``integrations/lerobot_env_simulo/tests/test_interrupted_dataset.py``."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from interrupted_commits import COMMITTED, SCHEMA, episode, kill_points
from simulo_envs.datasets import DatasetLayoutError, LeRobotWriter, atomic, load_dataset


def every_episode_row(root: str) -> list[dict]:
    """Every row of every ``meta/episodes`` file, as LeRobot's loader reads them (no filtering)."""
    rows = []
    for folder, _, names in os.walk(os.path.join(root, "meta", "episodes")):
        for name in sorted(names):
            if name.endswith(".parquet") and not name.startswith("."):
                rows += pq.read_table(os.path.join(folder, name)).to_pylist()
    return sorted(rows, key=lambda r: r["episode_index"])


def test_a_commit_killed_between_any_two_writes_shows_only_committed_episodes(tmp_path):
    outcomes = []
    for k, root in kill_points(str(tmp_path)):
        with open(os.path.join(root, "meta", "info.json")) as f:
            info = json.load(f)
        rows = every_episode_row(root)
        total = info["total_episodes"]
        outcomes.append(total)
        assert total in (COMMITTED, COMMITTED + 1), k
        assert [r["episode_index"] for r in rows] == list(range(total)), k  # rows == the totals, no more
        assert rows[-1]["dataset_to_index"] == info["total_frames"], k
        for row in rows:  # each row's frames and video are there, whole
            data = pq.read_table(os.path.join(root, info["data_path"].format(
                chunk_index=row["data/chunk_index"], file_index=row["data/file_index"])))
            frames = data.filter(np.isin(np.asarray(data["episode_index"]), [row["episode_index"]]))
            assert frames.num_rows == row["length"], k
            assert os.path.isfile(os.path.join(root, info["video_path"].format(
                video_key="observation.images.front", chunk_index=row["videos/observation.images.front/chunk_index"],
                file_index=row["videos/observation.images.front/file_index"]))), k
        ds = load_dataset(root)
        assert ds.seeds.tolist() == list(range(total)), k
        assert np.array_equal(ds[total - 1].observation_state.numpy()[:, 0], total - 1 + np.arange(6)), k
        writer = LeRobotWriter(root, SCHEMA, append=True, episodes_per_file=1)  # goes on from the commit
        writer.add(episode(10))
        ds = load_dataset(root)
        assert ds.seeds.tolist() == list(range(total)) + [10], k
        assert ds[total].images["front"].shape == (6, 32, 48, 3)
        assert not [p for p in os.listdir(root) + os.listdir(os.path.join(root, "meta")) if atomic.TMP_MARK in p]
    assert outcomes[0] == COMMITTED and outcomes[-1] == COMMITTED + 1 and len(outcomes) >= 4
    # the commit is one step: every kill before the exchange of meta/ shows the old dataset
    assert outcomes == sorted(outcomes) and outcomes.count(COMMITTED + 1) <= 2


def test_a_folder_caught_between_two_renames_is_put_back(tmp_path, monkeypatch):
    """Where the file system cannot exchange two folders, the old one is renamed away, then the new
    one in: a writer killed in between leaves no meta/, and the next writer puts the new one back."""
    root = str(tmp_path / "ds")
    writer = LeRobotWriter(root, SCHEMA)
    writer.add(episode(0))
    monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    swap = atomic.FolderSwap(os.path.join(root, "meta"))
    with swap.write("marker") as path:
        open(path, "w").close()
    os.replace(os.path.join(root, "meta"), os.path.join(root, ".meta.old.tmp-1"))  # killed after the first rename
    assert not os.path.isdir(os.path.join(root, "meta"))
    with pytest.raises(DatasetLayoutError, match="interrupted while it replaced meta/.*--append"):
        load_dataset(root)  # a reader is told, not shown a guess
    LeRobotWriter(root, SCHEMA, append=True).add(episode(1))
    assert load_dataset(root).seeds.tolist() == [0, 1]
    assert os.path.exists(os.path.join(root, "meta", "marker"))  # the next version was taken
    assert not [p for p in os.listdir(root) if atomic.TMP_MARK in p]
