"""ManiSkill's own clients over our envs, with mani_skill's installed wrappers: ManiSkillVectorEnv,
RecordEpisode (videos and trajectories), FlattenActionSpaceWrapper; and ManiSkill's names on ours."""

import json

import gymnasium as gym
import h5py
import imageio.v3 as iio
import numpy as np
import pytest
import torch
from mani_skill.utils.wrappers.flatten import FlattenActionSpaceWrapper
from mani_skill.utils.wrappers.record import RecordEpisode
from mani_skill.vector.wrappers.gymnasium import ManiSkillVectorEnv

import simulo_envs
from simulo_envs.authoring import Pose
from simulo_envs.envs.base_env import BaseEnv

SMALL = {"width": 48, "height": 48}


def test_maniskill_vector_env_autoresets_with_maniskill_metrics():
    env = gym.make("FrankaLift-v1", num_envs=3, max_episode_steps=4, sim_backend="cpu")
    venv = ManiSkillVectorEnv(env, 3, ignore_terminations=False, record_metrics=True)
    try:
        obs, _ = venv.reset(seed=1)
        assert obs.shape == (3, 36) and venv.single_action_space.shape == (8,)
        returns = torch.zeros(3)
        for t in range(4):
            obs, reward, terminated, truncated, info = venv.step(torch.zeros(3, 8))
            returns += reward
        assert truncated.tolist() == [True] * 3
        episode = info["final_info"]["episode"]
        assert episode["episode_len"].tolist() == [4, 4, 4]
        assert torch.allclose(episode["return"], returns) and torch.allclose(episode["reward"], returns / 4)
        assert info["final_observation"].shape == (3, 36) and info["_final_info"].all()
        assert venv.base_env.elapsed_steps.tolist() == [0, 0, 0]  # reset by a partial reset of all three
        assert venv.base_env.reconfiguration_freq == 0
    finally:
        venv.close()


def test_maniskill_record_episode_writes_videos_and_replayable_trajectories(tmp_path):
    env = gym.make("FrankaLift-v1", num_envs=2, max_episode_steps=3, render_mode="rgb_array",
                   human_render_camera_configs=SMALL)
    env = RecordEpisode(env, output_dir=str(tmp_path), save_trajectory=True, trajectory_name="traj",
                        max_steps_per_video=3, video_fps=20)
    venv = ManiSkillVectorEnv(env, 2, ignore_terminations=False, record_metrics=True)
    states = []
    try:
        venv.reset(seed=5)
        states.append(venv.base_env.get_state_dict())
        for _ in range(7):  # two autoresets
            venv.step(torch.full((2, 8), 0.3))
    finally:
        venv.close()
    # a video every 3 steps (first frame + 3 steps), the last one flushed by close
    assert sorted(p.name for p in tmp_path.glob("*.mp4")) == ["0.mp4", "1.mp4", "2.mp4"]
    assert len(iio.imread(tmp_path / "0.mp4")) == 4 and iio.imread(tmp_path / "0.mp4").shape[1:3] == (48, 96)
    meta = json.loads((tmp_path / "traj.json").read_text())
    assert meta["env_info"]["env_id"] == "FrankaLift-v1"
    episodes = meta["episodes"]
    assert len(episodes) >= 4 and [e["episode_seed"] for e in episodes[:2]] == [5, 6]
    assert all(e["control_mode"] == "pd_joint_delta_pos" for e in episodes)
    with h5py.File(tmp_path / "traj.h5") as f:
        traj = f["traj_0"]
        assert traj["actions"].shape == (3, 8)
        block = traj["env_states/actors/Block"][:]
        robot = traj["env_states/articulations/Robot"][:]
    assert np.allclose(block[0], states[0]["actors"]["Block"][0].numpy(), atol=1e-6)
    # the recorded state restores on a fresh single env, as ManiSkill's replay does it
    single = simulo_envs.make("FrankaLift-v1", num_envs=1)
    try:
        single.set_state_dict({"actors": {"Block": block[2]}, "articulations": {"Robot": robot[2]}})
        assert np.allclose(single.get_state_dict()["actors"]["Block"][0, :3].numpy(), block[2, :3], atol=1e-5)
    finally:
        single.close()


class TwoPandas(BaseEnv):
    """Two Pandas per env, 0.6 m apart: a dict action space keyed ``panda-0`` / ``panda-1``."""

    SUPPORTED_ROBOTS = (("panda", "panda"),)
    default_robot_uids = ("panda", "panda")

    def _load_agent(self, options, initial_agent_poses=None, build_separate=False):
        super()._load_agent(options, [Pose([0.0, -0.3, 0.0]), Pose([0.0, 0.3, 0.0])])

    def _initialize_episode(self, env_idx, options):
        self.agent.reset(env_idx)

    def compute_normalized_dense_reward(self, obs, action, info):
        return torch.zeros(self.num_envs)


def test_flatten_action_space_wrapper_drives_two_robots():
    base = TwoPandas(num_envs=2, control_mode="pd_joint_pos")
    env = FlattenActionSpaceWrapper(base)
    try:
        assert isinstance(base.single_action_space, gym.spaces.Dict)
        assert set(base.single_action_space.spaces) == {"panda-0", "panda-1"}
        assert env.single_action_space.shape == (16,) and env.action_space.shape == (2, 16)
        obs, _ = env.reset(seed=0)
        assert obs.shape == (2, 36)  # state obs flattened, as ManiSkill's: qpos and qvel of both arms
        assert torch.allclose(obs[:, :9], obs[:, 18:27])  # both arms start at the same qpos
        targets = torch.zeros(2, 16)
        targets[:, 0] = 0.5    # panda-0's first joint
        targets[:, 8] = -0.5   # panda-1's first joint
        for _ in range(10):
            env.step(targets)
        q0 = base.agent.agents["panda-0"].robot.state.qpos[:, 0]
        q1 = base.agent.agents["panda-1"].robot.state.qpos[:, 0]
        assert torch.all(q0 > 0.3) and torch.all(q1 < -0.3)
        roots = base.agent.agents["panda-1"].robot.state.root_pose[:, :3] - base.scene.env_origins
        assert torch.allclose(roots[:, 1], torch.full((2,), 0.3), atol=1e-6)
        with pytest.raises(ValueError, match="panda-0"):
            base.step({"panda-0": torch.zeros(2, 3), "panda-1": torch.zeros(2, 8)})
    finally:
        env.close()


def test_our_vector_env_offers_maniskill_names():
    venv = gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=2,
                        record_metrics=True, sim_backend="cpu")
    try:
        venv.reset(seed=0)
        venv.step(torch.zeros(2, 8))
        obs, reward, terminated, truncated, info = venv.step(torch.zeros(2, 8))
        assert venv._env is venv.env
        assert torch.equal(info["final_observation"], info["final_obs"]) and info["_final_observation"].all()
        episode = info["final_info"]["episode"]
        assert episode["episode_len"].tolist() == [2, 2] == episode["length"].tolist()
        assert torch.allclose(episode["reward"], episode["return"] / 2)
    finally:
        venv.close()
