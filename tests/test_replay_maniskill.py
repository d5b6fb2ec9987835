"""ManiSkill's own ``mani_skill.trajectory.replay_trajectory`` on trajectories of our envs."""

import json

import gymnasium as gym
import h5py
import numpy as np
import torch
from mani_skill.trajectory.replay_trajectory import main as ms_replay
from mani_skill.trajectory.replay_trajectory import parse_args as ms_replay_args
from mani_skill.utils.wrappers.record import RecordEpisode

import simulo_envs  # noqa: F401  (registers the tasks)


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
