"""HDF5 trajectories in ManiSkill's layout: round trip, the sidecar, ManiSkill's own loader
reads them, appending, damaged files refused."""

import json
import os

import h5py
import numpy as np
import pytest
from test_datasets_common import SCHEMA, STATE_SCHEMA, make_episode

from simulo_envs.datasets import DatasetLayoutError, HDF5Writer, load_dataset


def write(folder, episodes, schema=SCHEMA, **kwargs):
    writer = HDF5Writer(str(folder), schema, **kwargs)
    for ep in episodes:
        writer.add(ep)
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


def test_append_adds_episodes_behind_new_links(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)])
    writer = HDF5Writer(str(tmp_path), SCHEMA, append=True)
    assert writer.add_many([make_episode(5, steps=3), make_episode(6, steps=3)]) == [1, 2]
    assert sorted(os.listdir(tmp_path / "episodes")) == ["traj_0.h5", "traj_1.h5"]  # 1 and 2 share one file
    ds = load_dataset(str(tmp_path))
    assert ds.seeds.tolist() == [0, 5, 6] and ds[2].action.shape == (3, 4)


def test_truncated_main_file_is_named(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)])
    main = tmp_path / "trajectory.h5"
    main.write_bytes(main.read_bytes()[:300])
    with pytest.raises(DatasetLayoutError, match="trajectory.h5 is not a readable HDF5 file"):
        load_dataset(str(tmp_path))


def test_truncated_episode_file_is_named_when_read(tmp_path):
    write(tmp_path, [make_episode(0, steps=3)])
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
