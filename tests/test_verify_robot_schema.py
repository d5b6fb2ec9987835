"""Datasets whose actions are not the experts' own replay bit for bit (``scripts/replay.py --verify``):
an SO arm's LeRobot dataset (joint targets in degrees and 0..100, ``pd_joint_pos_lerobot``) is
recorded from an env in that mode, driven by the expert through its IK (``joint_drive.py``), so its
actions are the executed ones; the same for a ``--control-mode`` collection and for a replay into
the arm's schema. A tampered action is found."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.datasets.replay_job import ReplaySettings, replay
from simulo_envs.datasets.verify import verify
from simulo_envs.envs.registration import REGISTERED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _collect(out, env_id="SO101Lift-v1", fmt="lerobot", episodes=2, **kwargs):
    summary = collect(CollectSettings(env_id, num_episodes=episodes, out=str(out), fmt=fmt, num_envs=2, seed=0,
                                      **kwargs), progress=False)
    assert summary["episodes"] == episodes and summary["error"] is None
    return summary


def _bitwise(report, episodes):
    assert report["isolate_envs"] is True and report["episodes"] == report["matched"] == episodes, report
    assert all(row["bitwise"] and row["max_deviation"] == 0.0 for row in report["per_episode"])


def _replay_main():
    spec = importlib.util.spec_from_file_location("replay_script", os.path.join(ROOT, "scripts", "replay.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.fixture(scope="module")
def so_lerobot(tmp_path_factory):
    """Two SO101Lift-v1 expert episodes in the SO-101 follower's LeRobot schema, two envs at a time."""
    out = tmp_path_factory.mktemp("so101") / "lerobot"
    summary = _collect(out)
    assert summary["control_mode"] == "pd_joint_pos_lerobot" and summary["conversion"] is None
    return out


@pytest.fixture
def threads():
    count = torch.get_num_threads()
    yield
    torch.set_num_threads(count)


def test_an_so_arm_lerobot_dataset_verifies_bit_for_bit_and_a_tampered_action_fails(so_lerobot, tmp_path, capsys,
                                                                                     threads):
    out = tmp_path / "so101"
    shutil.copytree(so_lerobot, out)
    ds = load_dataset(str(out))
    assert ds.control_mode == "pd_joint_pos_lerobot" and ds.robot_type == "so_follower"
    main = _replay_main()
    assert main(["--source", str(out), "--verify", "--json", "--no-progress"]) == 0
    _bitwise(json.loads(capsys.readouterr().out.strip().splitlines()[-1]), 2)
    # one joint target of episode 1 moved by 0.01 deg: that episode no longer reproduces
    path = out / "data" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(path)
    actions = np.array(table.column("action").to_pylist(), np.float32)
    row = int(np.flatnonzero(np.array(table.column("episode_index").to_pylist()) == 1)[5])
    actions[row, 1] += 0.01
    column = pa.FixedSizeListArray.from_arrays(pa.array(actions.ravel(), pa.float32()), actions.shape[1])
    pq.write_table(table.set_column(table.schema.get_field_index("action"), table.schema.field("action"), column), path)
    assert main(["--source", str(out), "--verify", "--json", "--no-progress"]) == 1
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["mismatched"] == [1] and report["per_episode"][1]["max_deviation"] > 0
    assert report["per_episode"][0]["bitwise"]


def test_an_so_arm_lerobot_collection_does_not_depend_on_num_envs(so_lerobot, tmp_path):
    """The expert's IK drives each env from that env's state alone: one env at a time gives the
    dataset two at a time gave."""
    collect(CollectSettings("SO101Lift-v1", num_episodes=2, out=str(tmp_path / "one"), num_envs=1, seed=0),
            progress=False)
    two, one = load_dataset(str(so_lerobot)), load_dataset(str(tmp_path / "one"))
    assert one.seeds.tolist() == two.seeds.tolist() == [0, 1]
    for k in range(2):
        a, b = one.episode(k, images=False), two.episode(k, images=False)
        assert torch.equal(a.action, b.action) and torch.equal(a.observation_state, b.observation_state)


def test_the_drawer_in_the_so_arm_schema_verifies_bit_for_bit(tmp_path):
    """SO101OpenDrawer-v1's handle contact turned a 1e-7 rad target rounding into 0.6 deg."""
    _collect(tmp_path / "drawer", env_id="SO101OpenDrawer-v1", episodes=2)
    _bitwise(verify(str(tmp_path / "drawer"), num_envs=2), 2)


def test_a_control_mode_collection_verifies_bit_for_bit(tmp_path):
    summary = _collect(tmp_path / "delta", fmt="hdf5", control_mode="pd_joint_delta_pos")
    assert summary["conversion"]["converted"] == 2
    _bitwise(verify(str(tmp_path / "delta"), num_envs=1), 2)


def test_a_replay_into_the_so_arm_schema_verifies_bit_for_bit(tmp_path):
    """An HDF5 recording of the expert (``pd_ee_delta_pos``) written in the arm's schema: the target
    env runs in ``pd_joint_pos_lerobot``, converting the recorded drive targets into its actions."""
    _collect(tmp_path / "h5", fmt="hdf5")
    result = replay(ReplaySettings(source=str(tmp_path / "h5"), out=str(tmp_path / "robot"), schema="robot",
                                   num_envs=2), progress=False)
    assert result["episodes"] == 2 and result["control_mode"] == "pd_joint_pos_lerobot"
    assert load_dataset(str(tmp_path / "robot")).robot_type == "so_follower"
    _bitwise(verify(str(tmp_path / "robot"), num_envs=2), 2)
    with pytest.raises(ValueError, match="pd_joint_pos_lerobot"):
        replay(ReplaySettings(source=str(tmp_path / "h5"), out=str(tmp_path / "no"), schema="robot",
                              control_mode="pd_joint_pos"), progress=False)
    assert not (tmp_path / "no").exists()


def test_joint_drive_refuses_what_it_cannot_drive():
    from simulo_envs.datasets.joint_drive import JointDrive

    env = REGISTERED["SO101Lift-v1"](num_envs=1, control_mode="pd_joint_delta_pos")
    try:
        with pytest.raises(ValueError, match="deltas"):
            JointDrive(env, "pd_ee_delta_pos")
        with pytest.raises(ValueError, match="no control mode 'pd_ee_fly'"):
            JointDrive(env, "pd_ee_fly")
    finally:
        env.close()
