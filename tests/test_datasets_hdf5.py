"""HDF5 trajectories in ManiSkill's layout: round trip, the sidecar, ManiSkill's own loader
reads them, appending, damaged files refused."""

import json
import os
import shutil

import h5py
import numpy as np
import pytest
from test_datasets_common import SCHEMA, STATE_SCHEMA, make_episode

from simulo_envs.datasets import DatasetLayoutError, HDF5Writer, load_dataset


def write(folder, episodes, schema=SCHEMA, close=True, **kwargs):
    """Write ``episodes`` one commit each; ``close=False`` leaves the writer open (a run that is
    still going, or was killed)."""
    writer = HDF5Writer(str(folder), schema, **kwargs)
    for ep in episodes:
        writer.add(ep)
    if close:
        writer.close()
    return writer


def test_layout_is_maniskills(tmp_path):
    episodes = [make_episode(11, steps=6), make_episode(12, steps=4, succeed=False)]
    write(tmp_path, episodes)
    meta = json.loads((tmp_path / "trajectory.json").read_text())
    assert meta["env_info"] == {"env_id": "FrankaLift-v1", "env_kwargs": SCHEMA.env_kwargs, "max_episode_steps": 100}
    assert meta["episodes"][1] == {"episode_id": 1, "episode_seed": 12, "control_mode": "pd_ee_delta_pos",
                                   "elapsed_steps": 4, "reset_kwargs": {"seed": 12, "options": {}}, "success": False}
    with h5py.File(tmp_path / "trajectory.h5", "r") as f:
        assert list(f.keys()) == ["traj_0", "traj_1"]
        group = f["traj_0"]
        assert list(group.keys()) == ["obs", "actions", "rewards", "terminated", "truncated", "success", "env_states"]
        assert list(group["obs"].keys()) == ["agent", "extra", "sensor_data"]  # the env's order, not sorted
        assert list(group["obs/extra"].keys()) == ["tcp_pose", "is_grasped"]
        assert group["actions"].shape == (6, 4) and group["actions"].dtype == np.float32
        assert group["obs/sensor_data/base_camera/rgb"].shape == (7, 32, 48, 3)
        assert group["obs/sensor_data/base_camera/rgb"].compression == "gzip"
        assert group["env_states/actors/Block"].shape == (7, 13)
        assert group["terminated"].dtype == bool and group["terminated"][()].tolist()[-1]
        assert np.array_equal(group["env_states/articulations/Robot"][()], episodes[0].env_states["articulations"]["Robot"])


def test_round_trip_is_exact(tmp_path):
    episodes = [make_episode(s, steps=5 + s) for s in range(3)]
    write(tmp_path, episodes)
    ds = load_dataset(str(tmp_path))
    assert ds.format == "hdf5" and ds.schema == SCHEMA and ds.seeds.tolist() == [0, 1, 2]
    for source, ep in zip(episodes, ds):
        n = source.length
        assert np.array_equal(ep.observation_state.numpy(), source.state_vector()[:n])
        assert np.array_equal(ep.action.numpy(), source.actions) and np.array_equal(ep.reward.numpy(), source.rewards)
        assert np.array_equal(ep.images["base_camera"].numpy(), source.rgb()["base_camera"][:n])  # lossless
        assert np.array_equal(ep.done.numpy(), source.terminated | source.truncated)
    state = np.concatenate([e.state_vector()[:-1] for e in episodes])
    assert np.allclose(ds.stats["observation.state"]["mean"].numpy(), state.mean(0), atol=1e-6)
    assert load_dataset(str(tmp_path / "trajectory.h5")).seeds.tolist() == [0, 1, 2]  # the .h5 path works too


def test_maniskills_trajectory_dataset_reads_it(tmp_path):
    from mani_skill.trajectory.dataset import ManiSkillTrajectoryDataset

    episodes = [make_episode(s, steps=4, images=False) for s in range(2)]
    write(tmp_path, episodes, schema=STATE_SCHEMA)
    data = ManiSkillTrajectoryDataset(str(tmp_path / "trajectory.h5"), success_only=True)
    assert len(data) == 8
    assert np.array_equal(data[5]["action"], episodes[1].actions[1])
    assert np.array_equal(data[5]["obs"]["agent"]["qpos"], episodes[1].obs["agent"]["qpos"][1])


def test_append_adds_episodes_behind_new_links_until_closed(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)])
    writer = HDF5Writer(str(tmp_path), SCHEMA, append=True)
    assert writer.add_many([make_episode(5, steps=3), make_episode(6, steps=3)]) == [1, 2]
    # while it runs: the finished file under a second name, and 1 and 2 in one part file
    assert sorted(os.listdir(tmp_path / "episodes")) == ["traj_0.h5", "traj_1.h5"]
    assert load_dataset(str(tmp_path)).seeds.tolist() == [0, 5, 6]
    writer.close()
    assert sorted(os.listdir(tmp_path)) == ["trajectory.h5", "trajectory.json"]
    ds = load_dataset(str(tmp_path))
    assert ds.seeds.tolist() == [0, 5, 6] and ds[2].action.shape == (3, 4)


def _same_dataset(folder, episodes):
    ds = load_dataset(str(folder))
    assert ds.seeds.tolist() == [ep.seed for ep in episodes]
    for source, ep in zip(episodes, ds):
        n = source.length
        assert np.array_equal(ep.observation_state.numpy(), source.state_vector()[:n])
        assert np.array_equal(ep.action.numpy(), source.actions)
        if source.rgb():
            assert np.array_equal(ep.images["base_camera"].numpy(), source.rgb()["base_camera"][:n])


def test_a_closed_dataset_is_two_files_that_travel_alone(tmp_path):
    from mani_skill.trajectory.dataset import ManiSkillTrajectoryDataset

    episodes = [make_episode(s, steps=3 + s) for s in range(3)]
    writer = HDF5Writer(str(tmp_path / "made"), SCHEMA)
    writer.add(episodes[0])
    writer.add_many(episodes[1:])
    writer.close()
    assert sorted(os.listdir(tmp_path / "made")) == ["trajectory.h5", "trajectory.json"]   # no part files
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    for name in ("trajectory.h5", "trajectory.json"):
        shutil.copy(tmp_path / "made" / name, moved / name)
    with h5py.File(moved / "trajectory.h5", "r") as f:
        assert list(f.keys()) == ["traj_0", "traj_1", "traj_2"]
        assert not any(isinstance(f.get(k, getlink=True), h5py.ExternalLink) for k in f)
        assert list(f["traj_2"].keys()) == ["obs", "actions", "rewards", "terminated", "truncated", "success",
                                            "env_states"]
        assert list(f["traj_2/obs/extra"].keys()) == ["tcp_pose", "is_grasped"]       # the env's order kept
        assert f["traj_1/obs/sensor_data/base_camera/rgb"].compression == "gzip"
    _same_dataset(moved, episodes)
    state_only = [make_episode(s, steps=4, images=False) for s in range(2)]
    write(tmp_path / "state", state_only, schema=STATE_SCHEMA)
    shutil.copy(tmp_path / "state" / "trajectory.h5", moved / "state.h5")
    shutil.copy(tmp_path / "state" / "trajectory.json", moved / "state.json")
    data = ManiSkillTrajectoryDataset(str(moved / "state.h5"), success_only=True)   # ManiSkill's own reader
    assert len(data) == 8 and np.array_equal(data[5]["action"], state_only[1].actions[1])


def test_a_run_that_never_closed_is_a_dataset_and_the_next_append_consolidates(tmp_path):
    episodes = [make_episode(s, steps=3) for s in range(2)]
    write(tmp_path, episodes, close=False)                      # killed before close: links into part files
    assert sorted(os.listdir(tmp_path / "episodes")) == ["traj_0.h5", "traj_1.h5"]
    _same_dataset(tmp_path, episodes)
    (tmp_path / "episodes" / "traj_2.h5").write_bytes(b"half a commit")   # a part the kill cut short
    writer = HDF5Writer(str(tmp_path), SCHEMA, append=True)
    writer.add(make_episode(9, steps=3))
    writer.close()
    assert sorted(os.listdir(tmp_path)) == ["trajectory.h5", "trajectory.json"]
    _same_dataset(tmp_path, episodes + [make_episode(9, steps=3)])


def test_an_empty_dataset_is_valid_from_the_start(tmp_path):
    writer = HDF5Writer(str(tmp_path), SCHEMA)
    assert len(load_dataset(str(tmp_path))) == 0
    writer.close()
    assert sorted(os.listdir(tmp_path)) == ["trajectory.h5", "trajectory.json"] and len(load_dataset(str(tmp_path))) == 0


def test_truncated_main_file_is_named(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)])
    main = tmp_path / "trajectory.h5"
    main.write_bytes(main.read_bytes()[:300])
    with pytest.raises(DatasetLayoutError, match="trajectory.h5 is not a readable HDF5 file"):
        load_dataset(str(tmp_path))


def test_truncated_episode_file_is_named_when_read(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)], close=False)
    part = tmp_path / "episodes" / "traj_0.h5"
    part.write_bytes(part.read_bytes()[:1000])
    with pytest.raises(DatasetLayoutError, match="traj_0"):
        load_dataset(str(tmp_path))[0]


def test_sidecar_without_episodes_or_inconsistent_lengths_is_refused(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)])
    sidecar = tmp_path / "trajectory.json"
    meta = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**meta, "episodes": [{**meta["episodes"][0], "elapsed_steps": 5}]}))
    with pytest.raises(DatasetLayoutError, match="3 actions, its sidecar says 5"):
        load_dataset(str(tmp_path))[0]
    sidecar.write_text(json.dumps({"env_info": meta["env_info"]}))
    with pytest.raises(DatasetLayoutError, match="lacks its episodes list"):
        load_dataset(str(tmp_path))
