"""SB3 adapter corners: batched-only methods, images, and gymnasium's TimeLimit."""

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401

pytest.importorskip("stable_baselines3")
from simulo_envs.wrappers.sb3 import SB3VecEnv  # noqa: E402
from simulo_envs.vector.vector_env import SimuloVectorEnv  # noqa: E402


def test_subset_indices_are_refused():
    sb = SB3VecEnv(gym.make("FrankaLift-v1", num_envs=2))
    sb.reset()
    with pytest.raises(ValueError, match="indices"):
        sb.env_method("reset", indices=[1])
    with pytest.raises(ValueError, match="indices"):
        sb.set_attr("foo", 3, indices=[1])
    assert sb.get_attr("num_envs") == [2, 2]
    sb.close()


def test_ignore_terminations_goes_to_the_vector_env():
    with pytest.raises(ValueError, match="SimuloVectorEnv"):
        SB3VecEnv(SimuloVectorEnv(gym.make("FrankaLift-v1", num_envs=1)), ignore_terminations=True)


def test_images_from_the_render_camera():
    env = gym.make("FrankaLift-v1", num_envs=2, render_mode="rgb_array", human_render_camera_configs=dict(width=32, height=24))
    sb = SB3VecEnv(env)
    sb.reset()
    images = sb.get_images()
    assert len(images) == 2 and images[0].shape == (24, 32, 3)
    sb.close()


def test_gym_make_limit_is_per_env_under_sb3():
    sb = SB3VecEnv(gym.make("FrankaLift-v1", num_envs=2, max_episode_steps=2))
    sb.reset()
    _, _, dones, _ = sb.step(torch.zeros(2, 8).numpy())
    assert dones.tolist() == [False, False]
    _, _, dones, infos = sb.step(torch.zeros(2, 8).numpy())
    assert dones.tolist() == [True, True] and all(i["TimeLimit.truncated"] for i in infos)
    sb.close()


def test_a_hand_made_time_limit_is_explained():
    sb = SB3VecEnv(gym.wrappers.TimeLimit(simulo_envs.make("FrankaLift-v1", num_envs=2), 2))
    sb.reset()
    sb.step(torch.zeros(2, 8).numpy())
    with pytest.raises(TypeError, match="max_episode_steps"):
        sb.step(torch.zeros(2, 8).numpy())
    sb.close()
