"""``SingleEnvView``: every registered id passes Gymnasium's and Stable-Baselines3's environment
checkers with state and state_dict observations, and with rgb ones one task per arm (the camera
images' spaces are built by the same code for every task; every task's cameras render in
test_task_cameras.py); ``reset(seed=s)`` seeds ``np_random``."""

from __future__ import annotations

import copy
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import simulo_envs  # noqa: F401
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.sim.render import vulkan_available
from simulo_envs.vector import SingleEnvView

IDS = sorted(REGISTERED)  # every task registered, today's and tomorrow's
RGB_IDS = sorted({str(REGISTERED[env_id].default_robot_uids): env_id for env_id in reversed(IDS)}.values())
"""The first registered task of each arm (FrankaLift-v1, SO100Lift-v1, SO101Lift-v1 today)."""
SMALL = dict(width=32, height=32)


def _view(env_id: str, obs_mode: str, **kwargs) -> SingleEnvView:
    if obs_mode not in ("state", "state_dict", "none"):
        if not vulkan_available():
            pytest.skip("no Vulkan driver")
        kwargs.update(sensor_configs=SMALL, human_render_camera_configs=SMALL)
    return SingleEnvView(gym.make(env_id, num_envs=1, obs_mode=obs_mode, **kwargs))


@pytest.mark.parametrize("env_id, obs_mode", [
    pytest.param(env_id, mode, id=f"{env_id}-{mode}")
    for env_id in IDS for mode in ("state", "state_dict", "rgb") if mode != "rgb" or env_id in RGB_IDS])
def test_gymnasium_and_sb3_checkers_pass(env_id, obs_mode):
    env = _view(env_id, obs_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # advice (infinite Box bounds, nested dicts), not failures
        # The render and close checks build extra envs through env.spec (the close check one that
        # it closes twice: BaseEnv.close, the same for every obs mode): run them once per id.
        check_env(env, skip_render_check=obs_mode != "state", skip_close_check=obs_mode != "state")
        sb3_check_env(env)
    env.close()


def test_values_are_numpy_unbatched_and_python_scalars():
    env = _view("FrankaLift-v1", "state")
    obs, info = env.reset(seed=0)
    assert obs.shape == (36,) and obs.dtype == np.float32 and env.observation_space.shape == (36,)
    assert env.action_space.shape == (8,)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    assert info["block_pose"].shape == (7,) and isinstance(info["success"], np.bool_)
    assert info["reward_terms"]["reach"].shape == ()
    assert env.metadata["render_fps"] == 20 and env.metadata["render_modes"] == ["rgb_array", "all"]  # no display: no "human"
    env.close()


def test_visual_obs_keep_their_dtypes():
    env = _view("FrankaLift-v1", "rgb+depth+segmentation")
    obs, _ = env.reset(seed=0)
    camera = obs["sensor_data"]["base_camera"]
    assert camera["rgb"].shape == (32, 32, 3) and camera["rgb"].dtype == np.uint8
    assert camera["depth"].dtype == np.float32 and camera["segmentation"].dtype == np.int32
    assert obs in env.observation_space
    assert "sensors" in env.metadata["render_modes"]
    env.close()


def test_seed_seeds_np_random_of_the_batched_env_too():
    env = gym.make("FrankaLift-v1", num_envs=3)
    env.reset(seed=11)
    first = env.np_random.random()
    assert env.np_random_seed == 11
    env.reset(seed=11)
    assert env.np_random.random() == first
    env.reset(seed=[4, 5, 6])  # a list: its first seed
    assert env.np_random_seed == 4
    env.close()


def test_truncation_and_spec_of_a_view():
    env = SingleEnvView(gym.make("FrankaLift-v1", num_envs=1, max_episode_steps=2))
    env.reset(seed=0)
    assert env.step(np.zeros(8))[3] is False and env.step(np.zeros(8))[3] is True
    again = env.spec.make()
    assert isinstance(again.env, SingleEnvView) and again.spec.max_episode_steps == 2
    for e in (env, again):
        e.close()


def test_refuses_a_batch():
    env = gym.make("FrankaLift-v1", num_envs=2)
    with pytest.raises(ValueError, match="num_envs=1"):
        SingleEnvView(env)
    single_spec = copy.deepcopy(gym.spec("FrankaLift-v1"))  # what gym.make_vec vectorizes
    with pytest.raises(ValueError, match="num_envs=2"):
        gym.make(single_spec, num_envs=2)
    env.close()


def test_action_may_be_a_tensor():
    env = _view("FrankaLift-v1", "state")
    env.reset(seed=0)
    obs, *_ = env.step(torch.zeros(8))
    assert obs.shape == (36,)
    env.close()


def test_sb3_dummy_vec_env_over_views():
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: SingleEnvView(gym.make("FrankaLift-v1", num_envs=1, max_episode_steps=2))] * 2)
    obs = venv.reset()
    assert obs.shape == (2, 36)
    venv.step(np.zeros((2, 8), dtype=np.float32))
    _, _, dones, infos = venv.step(np.zeros((2, 8), dtype=np.float32))
    assert dones.tolist() == [True, True] and infos[0]["terminal_observation"].shape == (36,)
    venv.close()
