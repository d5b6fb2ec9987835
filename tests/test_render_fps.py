"""Every adapter and view forwards ``render_fps`` and ``render_modes``, so video recorders write
clips at the env's frame rate (one frame per env step: the control frequency, 20 Hz by default)."""

from __future__ import annotations

import imageio
import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.sim.render import vulkan_available
from simulo_envs.vector import NumpyView, SingleEnvView
from simulo_envs.wrappers.record import RecordEpisode

sb3 = pytest.importorskip("simulo_envs.wrappers.sb3")
rsl_rl = pytest.importorskip("simulo_envs.wrappers.rsl_rl")
needs_vulkan = pytest.mark.skipif(not vulkan_available(), reason="no Vulkan driver")
SMALL = dict(width=32, height=32)


def _adapters(**kwargs):
    """(name, adapter) for every adapter and view over FrankaLift-v1 made with ``kwargs``."""
    def batched(n=2):
        return gym.make("FrankaLift-v1", num_envs=n, **kwargs)

    vector = gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    return [
        ("env", batched()),
        ("SimuloVectorEnv", vector),
        ("NumpyView", NumpyView(gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", **kwargs))),
        ("SingleEnvView", SingleEnvView(batched(1))),
        ("RecordEpisode", RecordEpisode(batched(), "/tmp/unused", save_video=False, save_trajectory=False)),
        ("SB3VecEnv", sb3.SB3VecEnv(batched())),
        ("RslRlVecEnv", rsl_rl.RslRlVecEnv(batched())),
        ("SyncVectorEnv", gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="sync", **kwargs)),
        ("gymnasium vector wrapper", gym.wrappers.vector.RecordEpisodeStatistics(NumpyView(
            gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", **kwargs)))),
    ]


def test_every_adapter_forwards_fps_and_render_modes():
    for name, adapter in _adapters():
        assert adapter.metadata["render_fps"] == 20, name
        assert "rgb_array" in adapter.metadata["render_modes"], name
        adapter.close()


def test_fps_follows_the_control_frequency():
    for name, adapter in _adapters(sim_config=dict(control_freq=10)):
        assert adapter.metadata["render_fps"] == 10, name
        adapter.close()


@needs_vulkan
def test_sb3_video_recorder_writes_clips_at_the_env_rate(tmp_path):
    from stable_baselines3.common.vec_env import VecNormalize, VecVideoRecorder

    env = gym.make("FrankaLift-v1", num_envs=2, render_mode="rgb_array", human_render_camera_configs=SMALL)
    venv = VecVideoRecorder(VecNormalize(sb3.SB3VecEnv(env)), str(tmp_path), record_video_trigger=lambda step: step == 0,
                            video_length=5)
    assert venv.frames_per_sec == 20
    venv.reset()
    for _ in range(6):
        venv.step(np.zeros((2, 8), dtype=np.float32))
    venv.close()
    clips = sorted(tmp_path.glob("*.mp4"))
    assert len(clips) == 1
    reader = imageio.get_reader(str(clips[0]))
    assert reader.get_meta_data()["fps"] == pytest.approx(20)
    frame = reader.get_data(0)
    assert frame.shape[:2] == (64, 32)  # SB3 tiles the 2 envs' 32x32 frames in a square-ish grid (2 x 1)
    reader.close()


@needs_vulkan
def test_single_env_view_under_gymnasium_record_video(tmp_path):
    env = gym.wrappers.RecordVideo(
        SingleEnvView(gym.make("FrankaLift-v1", num_envs=1, render_mode="rgb_array", human_render_camera_configs=SMALL,
                               max_episode_steps=3)),
        str(tmp_path), episode_trigger=lambda episode: episode == 0)
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.zeros(8, dtype=np.float32))
    env.close()
    clips = sorted(tmp_path.glob("*.mp4"))
    assert len(clips) == 1
    reader = imageio.get_reader(str(clips[0]))
    assert reader.get_meta_data()["fps"] == pytest.approx(20)
    assert reader.count_frames() == 4  # the reset frame and 3 steps
    reader.close()
