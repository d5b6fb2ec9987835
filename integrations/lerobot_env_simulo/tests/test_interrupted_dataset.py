"""LeRobot's own classes read a dataset of ours that was killed between any two writes of a commit:
``LeRobotDataset`` opens it, and ``EpisodeAwareSampler`` (what ``lerobot-train`` samples with; it
walks every row of ``meta/episodes``) yields only frames of committed episodes, each readable with
the values that were written. The kills: ``tests/interrupted_commits.py``."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "tests"))
from interrupted_commits import COMMITTED, kill_points  # noqa: E402


def test_lerobot_never_sees_an_uncommitted_episode(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from lerobot.datasets.sampler import EpisodeAwareSampler

    seen = []
    for k, root in kill_points(str(tmp_path / "kills")):
        ds = LeRobotDataset("local/interrupted", root=root, video_backend="pyav")
        episodes = ds.meta.episodes
        assert ds.meta.total_episodes == len(episodes) in (COMMITTED, COMMITTED + 1), k
        sampler = EpisodeAwareSampler(episodes["dataset_from_index"], episodes["dataset_to_index"])
        indices = list(sampler)
        assert sorted(indices) == list(range(ds.meta.total_frames)), k  # every sampled frame is committed
        for index in indices:
            item = ds[index]
            episode, t = int(item["episode_index"]), int(item["frame_index"])
            assert episode < ds.meta.total_episodes, k
            assert np.allclose(item["observation.state"].numpy(), episode + t), k  # the written values
            assert tuple(item["observation.images.front"].shape) == (3, 32, 48), k
        seen.append(ds.meta.total_episodes)
    assert seen[0] == COMMITTED and seen[-1] == COMMITTED + 1
