"""``write_episode_outcomes``: the seed and success episode columns added to a LeRobot v3.0
dataset written elsewhere (here by our writer, then with the columns stripped, as LeRobot's own
writer leaves them; ``integrations/lerobot_robot_simulo/tests`` does it on a dataset that
``lerobot-record`` wrote)."""

import os

import pyarrow.parquet as pq
import pytest
from test_datasets_common import STATE_SCHEMA, make_episode

from simulo_envs.datasets import DatasetLayoutError, LeRobotWriter, load_dataset
from simulo_envs.datasets.episode_outcomes import write_episode_outcomes

EPISODES = "meta/episodes/chunk-000/file-000.parquet"


@pytest.fixture
def written_elsewhere(tmp_path):
    """Three episodes whose episode table lacks our ``seed`` and ``success`` columns."""
    root = tmp_path / "ds"
    writer = LeRobotWriter(str(root), STATE_SCHEMA)
    for seed in (5, 6, 7):
        writer.add(make_episode(seed, steps=4, images=False))
    path = root / EPISODES
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["seed", "success"]), path)
    os.remove(root / "meta/simulo_env.json")
    return str(root)


def test_outcomes_become_episode_columns_both_readers_see(written_elsewhere):
    before = load_dataset(written_elsewhere)
    assert list(before.seeds) == [-1, -1, -1] and list(before.successes) == [False] * 3
    assert write_episode_outcomes(written_elsewhere, {0: {"seed": 1000, "success": True},
                                                      2: {"seed": 1002, "success": False}}) == [0, 2]
    table = pq.read_table(os.path.join(written_elsewhere, EPISODES))
    assert table["seed"].to_pylist() == [1000, None, 1002] and table["success"].to_pylist() == [True, None, False]
    after = load_dataset(written_elsewhere)
    assert list(after.seeds) == [1000, -1, 1002] and list(after.successes) == [True, False, False]
    write_episode_outcomes(written_elsewhere, {1: {"success": True}})  # the others keep theirs
    assert pq.read_table(os.path.join(written_elsewhere, EPISODES))["success"].to_pylist() == [True, True, False]


def test_bad_outcomes_change_nothing(written_elsewhere, tmp_path):
    path = os.path.join(written_elsewhere, EPISODES)
    before = pq.read_table(path)
    with pytest.raises(ValueError, match=r"episodes \[3\] are not in"):
        write_episode_outcomes(written_elsewhere, {0: {"seed": 1}, 3: {"seed": 2}})
    with pytest.raises(ValueError, match=r"unknown outcome columns \['reward'\]"):
        write_episode_outcomes(written_elsewhere, {0: {"reward": 1.0}})
    assert pq.read_table(path).equals(before)
    assert write_episode_outcomes(written_elsewhere, {0: {"seed": 1}, 3: {"seed": 2}}, skip_unknown=True) == [0]
    with pytest.raises(DatasetLayoutError, match="info.json is missing"):
        write_episode_outcomes(str(tmp_path / "nothing"), {0: {"seed": 1}})
