"""RecordEpisode: mp4 videos (frame counts, tiling, episode boundaries) and HDF5 trajectories."""

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert
from simulo_envs.wrappers.record import RecordEpisode, replay, tile_images

SIZE = 64


def _make(num_envs, tmp_path, **kwargs):
    env = gym.make("FrankaLift-v1", num_envs=num_envs, control_mode="pd_ee_delta_pos", render_mode="rgb_array",
                   human_render_camera_configs=dict(width=SIZE, height=SIZE))
    return RecordEpisode(env, str(tmp_path), **kwargs)


@pytest.mark.parametrize("num_envs, grid", [(1, (1, 1)), (3, (2, 2))])
def test_video_frame_count_and_tiling(tmp_path, num_envs, grid):
    env = _make(num_envs, tmp_path)
    expert = LiftExpert(env)
    env.reset(seed=0)
    for _ in range(7):
        env.step(expert.act())
    env.reset(seed=1)
    for _ in range(4):
        env.step(expert.act())
    env.close()
    assert len(env.video_paths) == 2
    first, second = (iio.imread(p) for p in env.video_paths)
    assert first.shape == (8, grid[0] * SIZE, grid[1] * SIZE, 3)
    assert second.shape == (5, grid[0] * SIZE, grid[1] * SIZE, 3)


def test_first_frame_after_reset_shows_the_new_episode(tmp_path):
    env = _make(1, tmp_path)
    u = env.unwrapped
    env.reset(seed=0)
    for _ in range(5):
        env.step(torch.tensor([[0.0, 0.0, 1.0, 1.0]]))  # raise the arm: the last frame differs from a rest pose
    last_of_first = u.render_rgb_array()[0].numpy().astype(int)
    env.reset(seed=0)
    fresh = u.render_rgb_array()[0].numpy().astype(int)
    env.step(torch.zeros(1, 4))
    env.close()
    second = iio.imread(env.video_paths[1]).astype(int)
    err_fresh = np.abs(second[0] - fresh).mean()
    err_stale = np.abs(second[0] - last_of_first).mean()
    assert np.abs(fresh - last_of_first).mean() > 2  # the two scenes do differ
    assert err_fresh < err_stale / 2, (err_fresh, err_stale)


def test_max_steps_per_video_and_trigger(tmp_path):
    env = _make(1, tmp_path, max_steps_per_video=3, video_trigger=lambda episode: episode % 2 == 1)
    env.reset(seed=0)
    for _ in range(4):
        env.step(torch.zeros(1, 4))
    assert env.video_paths == []  # episode 0 not filmed
    env.reset(seed=1)
    for _ in range(4):
        env.step(torch.zeros(1, 4))
    env.close()
    assert [iio.imread(p).shape[0] for p in env.video_paths] == [4, 1]


def test_info_on_video_needs_one_env(tmp_path):
    env = gym.make("FrankaLift-v1", num_envs=2, render_mode="rgb_array", human_render_camera_configs=dict(width=32, height=32))
    with pytest.raises(ValueError, match="single env"):
        RecordEpisode(env, str(tmp_path), info_on_video=True)
    env.close()


def test_tile_images_layout():
    images = np.stack([np.full((2, 3, 3), k, dtype=np.uint8) for k in (1, 2, 3)])
    grid = tile_images(images)
    assert grid.shape == (4, 6, 3)
    assert grid[0, 0, 0] == 1 and grid[0, 3, 0] == 2 and grid[2, 0, 0] == 3 and grid[2, 3, 0] == 0


def test_trajectory_replay_reproduces_block_poses(tmp_path):
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    env = RecordEpisode(env, str(tmp_path), save_video=False, save_trajectory=True)
    expert = LiftExpert(env)
    env.reset(seed=4)
    recorded_block = []
    for _ in range(30):
        env.step(expert.act())
        recorded_block.append(env.unwrapped.block.state.pose.clone())
    env.close()
    target = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    for mode in ("state", "action"):
        for frame in replay(env.trajectory_path, target, episode=0, mode=mode):
            if frame["t"] > 0:
                replayed = target.unwrapped.block.state.pose
                assert torch.allclose(replayed, recorded_block[frame["t"] - 1], atol=1e-5), (mode, frame["t"])
            assert np.abs(frame["replayed"] - frame["state"]).max() < 1e-5
    target.close()


def test_partial_resets_and_step_none_replay_exactly(tmp_path):
    env = gym.make("FrankaLift-v1", num_envs=3)
    env = RecordEpisode(env, str(tmp_path), save_video=False, save_trajectory=True)
    env.reset(seed=0)
    generator = torch.Generator().manual_seed(0)
    for _ in range(3):
        env.step(torch.rand(3, 8, generator=generator) * 2 - 1)
    env.reset(options={"env_idx": [1]})
    env.step(None)
    for _ in range(2):
        env.step(torch.rand(3, 8, generator=generator) * 2 - 1)
    final = env.unwrapped.get_state().clone()
    env.close()
    target = gym.make("FrankaLift-v1", num_envs=3)
    frames = list(replay(env.trajectory_path, target, mode="action"))
    assert max(np.abs(f["replayed"] - f["state"]).max() for f in frames) < 1e-5
    assert torch.allclose(target.unwrapped.get_state(), final, atol=1e-5)
    target.close()
    other = gym.make("FrankaLiftMixed-v1", num_envs=3)
    with pytest.raises(ValueError, match="recorded on FrankaLift-v1"):
        next(replay(env.trajectory_path, other))
    other.close()


def test_a_reset_with_no_step_since_the_last_leaves_no_frame(tmp_path):
    """Without save_on_reset a video goes on across full resets; a reset right after another (a
    vector env's own reset, then the seeded one) replaces its frame: the clip starts on the
    seeded scene."""
    env = RecordEpisode(gym.make("FrankaLift-v1", num_envs=1, render_mode="rgb_array", randomization="visual",
                                 human_render_camera_configs=dict(width=SIZE, height=SIZE)),
                        str(tmp_path), save_on_reset=False)   # the floor's colour differs between seeds
    u = env.unwrapped
    env.reset(seed=3)
    stale = u.render_rgb_array()[0].numpy().astype(int)
    env.reset(seed=0)
    fresh = u.render_rgb_array()[0].numpy().astype(int)
    env.step(torch.zeros(1, *u.single_action_space.shape))
    path = env.flush_video()
    env.close()
    frames = iio.imread(path).astype(int)
    assert len(frames) == 2
    assert np.abs(fresh - stale).mean() > 2  # the two scenes do differ
    assert np.abs(frames[0] - fresh).mean() < np.abs(frames[0] - stale).mean() / 2
