"""ManiSkill's own ``mani_skill.trajectory.replay_trajectory`` on trajectories of our envs: those
ManiSkill's RecordEpisode writes, and those our collector writes."""

import json

import gymnasium as gym
import h5py
import numpy as np
import pytest
import torch
from mani_skill.trajectory.replay_trajectory import main as ms_replay
from mani_skill.trajectory.replay_trajectory import parse_args as ms_replay_args
from mani_skill.utils.wrappers.record import RecordEpisode

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.datasets.collect import CollectSettings, collect


def test_maniskill_replay_trajectory_reads_the_backend_name_and_replays(tmp_path):
    env = gym.make("FrankaLift-v1", num_envs=1, max_episode_steps=4, control_mode="pd_ee_delta_pos")
    env = RecordEpisode(env, output_dir=str(tmp_path), save_trajectory=True, trajectory_name="traj", save_video=False)
    env.reset(seed=3)
    assert env.unwrapped.backend.sim_backend == "physx_cpu"
    for _ in range(4):
        env.step(torch.tensor([[0.5, 0.0, -0.5, 1.0]]))
    env.close()
    ms_replay(ms_replay_args(["--traj-path", str(tmp_path / "traj.h5"), "-o", "state_dict", "--save-traj",
                              "--allow-failure"]))
    out = tmp_path / "traj.state_dict.pd_ee_delta_pos.physx_cpu.h5"
    meta = json.loads(out.with_suffix(".json").read_text())
    assert [e["episode_seed"] for e in meta["episodes"]] == [3]
    with h5py.File(tmp_path / "traj.h5") as f, h5py.File(out) as g:
        recorded = f["traj_0/env_states/actors/Block"][:]
        replayed = g["traj_0/env_states/actors/Block"][:]
        assert g["traj_0/actions"].shape == (4, 4)
        assert "agent" in g["traj_0/obs"] and g["traj_0/obs/agent/qpos"].shape == (5, 9)
    assert np.allclose(recorded, replayed, atol=1e-5)


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    out = tmp_path_factory.mktemp("ms") / "lift"
    summary = collect(CollectSettings("FrankaLift-v1", num_episodes=3, out=str(out), fmt="hdf5", num_envs=3, seed=5),
                      progress=False)
    assert summary["episodes"] == 3
    return out


@pytest.mark.parametrize("extra", [[], ["--use-first-env-state"]])
def test_maniskill_replays_our_collected_trajectories(collected, extra):
    ms_replay(ms_replay_args(["--traj-path", str(collected / "trajectory.h5"), "-o", "state_dict", "--save-traj",
                              *extra]))
    out = collected / "trajectory.state_dict.pd_ee_delta_pos.physx_cpu.h5"
    meta = json.loads(out.with_suffix(".json").read_text())
    assert len(meta["episodes"]) == 3 and all(e["success"] for e in meta["episodes"])  # only successes are saved
    source = json.loads((collected / "trajectory.json").read_text())
    assert [e["episode_seed"] for e in meta["episodes"]] == [e["episode_seed"] for e in source["episodes"]]
    with h5py.File(collected / "trajectory.h5") as f, h5py.File(out) as g:
        assert np.array_equal(g["traj_0/actions"][()], f["traj_0/actions"][()])
        recorded, replayed = f["traj_0/env_states/actors/Block"][()], g["traj_0/env_states/actors/Block"][()]
    # recorded in fresh physics: ManiSkill's replay is the same trajectory, bit for bit
    assert replayed.shape == recorded.shape and np.array_equal(replayed[1:], recorded[1:])
    # with --use-first-env-state ManiSkill saves the recorded state after the first step as the first row
    assert np.array_equal(replayed[0], recorded[1] if extra else recorded[0])


def test_maniskill_cannot_convert_out_of_cartesian_control(collected):
    with pytest.raises(NotImplementedError, match="pd_ee_delta_pos"):  # its converter starts from joint modes
        ms_replay(ms_replay_args(["--traj-path", str(collected / "trajectory.h5"), "-c", "pd_joint_pos"]))
