"""Gymnasium's own vector wrappers (``gymnasium.wrappers.vector``) on our vector env, in the
documented configuration: ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point",
numpy=True, autoreset_mode="NextStep")``. Each wrapper's effect is checked against the values
that pass beneath it (``Tap``)."""

from __future__ import annotations

import gymnasium as gym
import imageio
import numpy as np
import pytest
import torch
from gymnasium.vector import VectorWrapper
from gymnasium.wrappers import vector as V

import simulo_envs  # noqa: F401
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.sim.render import vulkan_available
from simulo_envs.tasks.franka_lift import FrankaLiftEnv

N = 3


def make(autoreset_mode: str = "NextStep", num_envs: int = N, env_id: str = "FrankaLift-v1", **kwargs):
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", numpy=True,
                        autoreset_mode=autoreset_mode, **kwargs)


def _copy(value):
    return np.array(value.cpu() if isinstance(value, torch.Tensor) else value, copy=True)


class Tap(VectorWrapper):
    """Passes everything through and keeps a numpy copy of the last actions, observations and rewards."""

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.obs = _copy(obs)
        return obs, info

    def step(self, actions):
        self.actions = _copy(actions)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self.obs, self.reward = _copy(obs), _copy(reward)
        return obs, reward, terminated, truncated, info


def _check_per_env(info: dict, num_envs: int, path: str = "info") -> None:
    for key, value in info.items():
        if isinstance(value, dict):
            _check_per_env(value, num_envs, f"{path}[{key}]")
            continue
        assert isinstance(value, np.ndarray) and value.shape[:1] == (num_envs,), (path, key, value)
        if key.startswith("_"):
            assert value.dtype == bool and key[1:] in info, (path, key)


@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
@pytest.mark.parametrize("env_id", sorted(REGISTERED))
def test_every_info_value_is_per_env_or_masked(env_id, autoreset_mode):
    env = make(autoreset_mode, env_id=env_id, num_envs=2, max_episode_steps=2, record_metrics=True)
    _, info = env.reset(seed=0)
    _check_per_env(info, 2)
    # A prop scale is drawn at build time: the seeded reset draws it again, so it rebuilds the scene.
    rebuilt = env_id == "FrankaLiftRandomized-v1"
    assert info["reconfigure"].tolist() == [rebuilt, rebuilt] and info["_reconfigure"].tolist() == [True, True]
    for _ in range(3):  # crosses an episode end: final_obs / final_info and their masks
        *_, info = env.step(env.action_space.sample())
        _check_per_env(info, 2)
    _, info = env.reset(options={"reset_mask": np.array([False, True])})  # Gymnasium's partial reset
    assert info["_reconfigure"].tolist() == [False, True]
    env.close()


def test_a_task_info_value_that_is_not_per_env_is_named():
    class SharedGoal(FrankaLiftEnv):
        def evaluate(self):
            return {**super().evaluate(), "goal": torch.zeros(3), "stage": 2}

    venv = simulo_envs.vector.SimuloVectorEnv(SharedGoal(num_envs=2))
    with pytest.raises(ValueError, match=r"info\['goal'\] is not per env.*got \(3,\)"):
        venv.reset(seed=0)
    venv.close()


def test_reset_mask_and_env_idx_together_are_refused():
    env = make()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not both"):
        env.reset(options={"reset_mask": np.ones(N, bool), "env_idx": [0]})
    env.close()


def test_record_episode_statistics():
    tap = Tap(make(max_episode_steps=4))
    env = V.RecordEpisodeStatistics(tap)
    env.reset(seed=0)
    returns, action = np.zeros(N), np.full((N, 8), 0.3, dtype=np.float32)
    for step in range(1, 10):
        *_, info = env.step(action)
        if step == 5:  # next-step autoreset: this step only reset the envs
            returns[:] = 0
            continue
        returns += tap.reward
        if step in (4, 9):  # two full episodes of 4 steps
            assert info["_episode"].tolist() == [True] * N
            assert info["episode"]["l"].tolist() == [4] * N
            np.testing.assert_allclose(info["episode"]["r"], returns, rtol=1e-6)
            returns[:] = 0
        else:
            assert "episode" not in info
    assert len(env.return_queue) == 2 * N
    env.close()


def test_normalize_observation():
    tap = Tap(make(max_episode_steps=5))
    env = V.NormalizeObservation(tap)
    obs, _ = env.reset(seed=0)
    for _ in range(7):
        obs, *_ = env.step(env.action_space.sample())
        expected = (tap.obs - env.obs_rms.mean) / np.sqrt(env.obs_rms.var + env.epsilon)
        np.testing.assert_allclose(obs, expected.astype(np.float32), rtol=1e-5, atol=1e-6)
    assert env.obs_rms.count == pytest.approx(8 * N + 1e-4)  # reset + 7 steps, N rows each
    env.close()
    with pytest.raises(ValueError, match="NEXT_STEP"):  # Gymnasium refuses same-step autoreset here
        V.NormalizeObservation(make("SameStep"))


@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
def test_normalize_reward(autoreset_mode):
    tap = Tap(make(autoreset_mode, max_episode_steps=5))
    env = V.NormalizeReward(tap, gamma=0.9)
    env.reset(seed=0)
    for _ in range(7):
        _, reward, *_ = env.step(env.action_space.sample())
        np.testing.assert_allclose(reward, tap.reward / np.sqrt(env.return_rms.var + env.epsilon), rtol=1e-6)
    assert tap.reward.dtype == np.float32 and not np.allclose(reward, tap.reward)
    env.close()


@pytest.mark.parametrize("numpy", [True, False])
def test_clip_action(numpy):
    venv = make() if numpy else gym.make_vec("FrankaLift-v1", num_envs=N, vectorization_mode="vector_entry_point")
    tap = Tap(venv)
    env = V.ClipAction(tap)
    env.reset(seed=0)
    low, high = tap.single_action_space.low, tap.single_action_space.high
    action = np.tile(np.linspace(-5, 5, 8, dtype=np.float32), (N, 1))
    env.step(action if numpy else torch.from_numpy(action))
    np.testing.assert_array_equal(tap.actions, np.clip(action, low, high))
    assert np.abs(tap.actions).max() == pytest.approx(float(np.abs(high).max()))
    env.close()


def test_rescale_action():
    tap = Tap(make())
    env = V.RescaleAction(tap, min_action=0.0, max_action=1.0)
    env.reset(seed=0)
    low, high = tap.single_action_space.low, tap.single_action_space.high
    action = np.stack([np.zeros(8), np.ones(8), np.full(8, 0.5)]).astype(np.float32)
    env.step(action)
    np.testing.assert_allclose(tap.actions, np.stack([low, high, (low + high) / 2]), atol=1e-6)
    env.close()


def test_flatten_observation_of_state_dict():
    env = V.FlattenObservation(make(obs_mode="state_dict"))
    flat_state = make(obs_mode="state")
    obs, _ = env.reset(seed=4)
    state, _ = flat_state.reset(seed=4)
    assert obs.shape == state.shape == (N, 36) and obs in env.observation_space
    assert env.single_observation_space.shape == (36,) and env.single_observation_space.dtype == np.float32
    # Same numbers; FlattenObservation orders the keys as the Dict space does (sorted).
    np.testing.assert_array_equal(np.sort(obs, axis=1), np.sort(state, axis=1))
    for e in (env, flat_state):
        e.close()


def test_dict_info_to_list():
    env = V.DictInfoToList(make("SameStep", max_episode_steps=2))
    _, infos = env.reset(seed=0)
    assert len(infos) == N and all(i["reconfigure"] is not None and not i["reconfigure"] for i in infos)
    action = np.zeros((N, 8), dtype=np.float32)
    _, _, _, _, infos = env.step(action)
    assert all("final_info" not in i for i in infos)
    _, _, _, truncated, infos = env.step(action)
    assert truncated.tolist() == [True] * N
    for info in infos:  # same-step autoreset: the new episode's info, the finished one in final_info
        assert info["elapsed_steps"] == 0 and info["final_info"]["elapsed_steps"] == 2
        assert info["final_obs"].shape == (36,)
    _, infos = env.reset(options={"env_idx": [1]})
    assert ["reconfigure" in i for i in infos] == [False, True, False]
    env.close()


@pytest.mark.skipif(not vulkan_available(), reason="no Vulkan driver")
def test_record_video(tmp_path):
    camera = dict(width=32, height=32)
    env = V.RecordVideo(make(num_envs=2, max_episode_steps=3, render_mode="rgb_array",
                             human_render_camera_configs=camera),
                        str(tmp_path), episode_trigger=lambda episode: episode == 0)
    assert env.frames_per_sec == 20
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.zeros((2, 8), dtype=np.float32))
    env.close()
    clips = sorted(tmp_path.glob("*.mp4"))
    assert len(clips) == 1
    reader = imageio.get_reader(str(clips[0]))
    assert reader.get_meta_data()["fps"] == pytest.approx(20)
    assert reader.count_frames() == 4                   # the reset frame and the episode's 3 steps
    assert reader.get_data(0).shape[:2] == (32, 64)    # both envs side by side
    reader.close()
