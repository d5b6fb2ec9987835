"""Spaces, dtypes and the gym surface: obs, reward, terminated/truncated, modes, clipping, close."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs
from simulo_envs.agents.panda import REST_QPOS

N = 2


@pytest.fixture(scope="module")
def env():
    e = gym.make("FrankaLift-v1", num_envs=N)
    yield e
    e.close()


def to_numpy(obs):
    if isinstance(obs, dict):
        return {k: to_numpy(v) for k, v in obs.items()}
    return obs.numpy()


def random_actions(n, seed=0):
    return torch.rand(n, 8, generator=torch.Generator().manual_seed(seed)) * 2 - 1


# ---------------------------------------------------------------- spaces
def test_action_spaces(env):
    u = env.unwrapped
    assert u.single_action_space.shape == (8,)
    assert u.single_action_space.dtype == np.float32
    assert np.all(u.single_action_space.low == -1) and np.all(u.single_action_space.high == 1)
    assert u.action_space.shape == (N, 8)
    assert env.action_space.shape == (N, 8)


def test_observation_space_shapes(env):
    u = env.unwrapped
    assert u.single_observation_space.shape == (36,)
    assert u.observation_space.shape == (N, 36)
    assert u.single_observation_space.dtype == np.float32


def test_reset_obs_dtype_shape_and_inside_space(env):
    u = env.unwrapped
    obs, info = env.reset(seed=0)
    assert isinstance(obs, torch.Tensor)
    assert obs.dtype == torch.float32
    assert obs.shape == (N, *u.single_observation_space.shape)
    assert u.observation_space.contains(obs.numpy())
    for k in range(N):
        assert u.single_observation_space.contains(obs[k].numpy())
    assert isinstance(info, dict)


def test_step_outputs(env):
    u = env.unwrapped
    env.reset(seed=0)
    for i in range(3):
        obs, reward, terminated, truncated, info = env.step(random_actions(N, i))
        assert obs.dtype == torch.float32 and obs.shape == (N, *u.single_observation_space.shape)
        assert u.observation_space.contains(obs.numpy())
        assert torch.isfinite(obs).all()
        assert isinstance(reward, torch.Tensor) and reward.dtype == torch.float32 and reward.shape == (N,)
        for flag in (terminated, truncated):
            assert isinstance(flag, torch.Tensor), type(flag)
            assert not isinstance(flag, bool)
            assert flag.dtype == torch.bool and flag.shape == (N,)
        assert info["elapsed_steps"].tolist() == [i + 1] * N


def test_state_obs_is_env_local(env):
    """The block pose in the observation is env-local: the same for every env with the same seed."""
    u = env.unwrapped
    assert not torch.equal(u.scene.env_origins[0], u.scene.env_origins[1])
    obs, _ = env.reset(seed=[5, 5])
    assert torch.allclose(obs[0], obs[1], atol=1e-5)
    d = u.get_obs(unflattened=True)
    expected = u.block.state.pose[:, :3] - u.scene.env_origins
    assert torch.allclose(d["extra"]["block_pose"][:, :3], expected, atol=1e-6)


# ---------------------------------------------------------------- truncation
def test_truncation_per_env_at_max_episode_steps():
    e = simulo_envs.make("FrankaLift-v1", num_envs=2, max_episode_steps=3)
    try:
        e.reset(seed=0)
        zero = torch.zeros(2, 8)
        flags = []
        for _ in range(2):
            _, _, term, trunc, _ = e.step(zero)
            assert not term.any()
            flags.append(trunc.tolist())
        assert flags == [[False, False], [False, False]]
        e.reset(options={"env_idx": [1]})  # env 1 starts over: its truncation moves 2 steps later
        _, _, _, trunc, info = e.step(zero)
        assert isinstance(trunc, torch.Tensor) and trunc.dtype == torch.bool
        assert trunc.tolist() == [True, False]
        assert info["elapsed_steps"].tolist() == [3, 1]
        _, _, _, trunc, _ = e.step(zero)
        assert trunc.tolist() == [True, False]
        _, _, _, trunc, _ = e.step(zero)
        assert trunc.tolist() == [True, True]
        assert e.elapsed_steps.tolist() == [5, 3]
    finally:
        e.close()


def test_default_max_episode_steps_is_100(env):
    assert env.unwrapped.max_episode_steps == 100


# ---------------------------------------------------------------- obs modes
def test_obs_mode_state_dict():
    e = gym.make("FrankaLift-v1", num_envs=N, obs_mode="state_dict")
    try:
        obs, _ = e.reset(seed=0)
        assert isinstance(obs, dict)
        assert obs["agent"]["qpos"].shape == (N, 9) and obs["agent"]["qpos"].dtype == torch.float32
        assert obs["agent"]["qvel"].shape == (N, 9)
        assert obs["extra"]["tcp_pose"].shape == (N, 7)
        assert obs["extra"]["block_pose"].shape == (N, 7)
        assert obs["extra"]["tcp_to_block"].shape == (N, 3)
        assert obs["extra"]["is_grasped"].shape == (N,)
        assert torch.allclose(obs["agent"]["qpos"], torch.tensor([REST_QPOS] * N), atol=1e-6)
        u = e.unwrapped
        assert u.observation_space.contains(to_numpy(obs))
        obs, *_ = e.step(random_actions(N))
        assert u.observation_space.contains(to_numpy(obs))
        assert isinstance(obs["extra"], dict)
    finally:
        e.close()


def test_obs_mode_none():
    e = gym.make("FrankaLift-v1", num_envs=N, obs_mode="none")
    try:
        obs, _ = e.reset(seed=0)
        assert obs == {}
        obs, reward, term, trunc, _ = e.step(random_actions(N))
        assert obs == {}
        assert reward.shape == (N,) and reward.dtype == torch.float32
    finally:
        e.close()


def test_unknown_modes_raise():
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("FrankaLift-v1", num_envs=1, obs_mode="rgbd_nope")
    with pytest.raises(ValueError, match="reward_mode"):
        gym.make("FrankaLift-v1", num_envs=1, reward_mode="nope")
    with pytest.raises(ValueError, match="control_mode"):
        gym.make("FrankaLift-v1", num_envs=1, control_mode="nope")


# ---------------------------------------------------------------- reward modes
@pytest.mark.parametrize("mode", ["dense", "normalized_dense", "sparse", "none"])
def test_reward_modes(mode):
    e = gym.make("FrankaLift-v1", num_envs=N, reward_mode=mode)
    try:
        e.reset(seed=0)
        for i in range(3):
            _, reward, *_ = e.step(random_actions(N, i))
            assert reward.dtype == torch.float32 and reward.shape == (N,)
            assert torch.isfinite(reward).all()
            if mode == "dense":
                assert (reward >= 0).all() and (reward <= 5.0).all()
                assert (reward > 0).all()  # the reach term is positive whenever the TCP is finite
            elif mode == "normalized_dense":
                assert (reward >= 0).all() and (reward <= 1).all()
                assert (reward > 0).all()
            elif mode == "sparse":
                assert set(reward.tolist()) <= {-1.0, 0.0, 1.0}
            else:
                assert torch.count_nonzero(reward) == 0
    finally:
        e.close()


def test_normalized_dense_is_dense_over_success_reward(env):
    u = env.unwrapped
    env.reset(seed=0)
    obs, _, _, _, info = env.step(random_actions(N))
    action = torch.zeros(N, 8)
    dense = u.compute_dense_reward(obs, action, info)
    norm = u.compute_normalized_dense_reward(obs, action, info)
    assert torch.allclose(norm, dense / 5.0)
    assert (norm >= 0).all() and (norm <= 1).all()


def test_success_terminates_and_gives_the_top_rewards(env):
    """A block held 0.2 m up counts as lifted: success, terminated, dense 5, sparse 1, normalised 1
    (the default reward mode, the seed's SUPPORTED_REWARD_MODES[0])."""
    u = env.unwrapped
    env.reset(seed=0)
    high = u.block.default_pose
    high[0, 2] = 0.2
    u.block.set_pose(high[:1], env_ids=[0])
    obs, reward, term, trunc, info = env.step(torch.zeros(N, 8))
    assert info["success"].tolist() == [True, False]
    assert term.tolist() == [True, False]
    assert trunc.tolist() == [False, False]
    assert u.reward_mode == "normalized_dense"
    assert reward[0].item() == pytest.approx(1.0)
    assert reward[1].item() < 1.0
    assert u.compute_sparse_reward(obs, None, info).tolist() == [1.0, 0.0]
    assert u.compute_dense_reward(obs, None, info)[0].item() == pytest.approx(5.0)


# ---------------------------------------------------------------- action clipping
def test_action_is_clipped_to_the_action_space(env):
    """Env 0 gets +-5, env 1 the same signs at +-1: from the same start they end in the same state."""
    u = env.unwrapped
    env.reset(seed=[3, 3])
    signs = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    action = torch.stack([5.0 * signs, signs])
    sent = action.clone()
    env.step(action)
    assert torch.equal(action, sent), "step must not modify the caller's action"
    targets = u.agent.robot.state.drive_targets
    assert torch.allclose(targets[0], targets[1], atol=1e-6), targets
    qpos = u.agent.robot.state.qpos
    assert torch.allclose(qpos[0], qpos[1], atol=1e-4), qpos
    # Guard: a full +-1 action did move the arm targets by 0.1 rad per joint.
    rest = torch.tensor(REST_QPOS)
    assert torch.allclose((targets[1, :7] - rest[:7]).abs(), torch.full((7,), 0.1), atol=1e-5)


def test_numpy_action_and_single_env_unbatched_action():
    e = gym.make("FrankaLift-v1", num_envs=1)
    try:
        e.reset(seed=0)
        obs, reward, term, trunc, _ = e.step(np.zeros(8, dtype=np.float32))
        assert obs.shape == (1, 36) and reward.shape == (1,) and term.shape == (1,) and trunc.shape == (1,)
        obs, *_ = e.step(np.zeros((1, 8)))
        assert obs.shape == (1, 36)
    finally:
        e.close()


# ---------------------------------------------------------------- close
def test_close_twice_is_fine():
    e = gym.make("FrankaLift-v1", num_envs=1)
    e.reset(seed=0)
    e.close()
    e.close()
    with pytest.raises(RuntimeError):
        e.step(torch.zeros(1, 8))
    with pytest.raises(RuntimeError):
        e.reset()


def test_gym_make_with_module_prefix():
    e = gym.make("simulo_envs:FrankaLift-v1", num_envs=1)
    try:
        assert e.unwrapped.num_envs == 1
        assert isinstance(e.unwrapped, simulo_envs.BaseEnv)
    finally:
        e.close()
