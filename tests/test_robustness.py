"""Bad input found by trying the env as a new user: clear errors, nothing changed (DESIGN conventions)."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401


@pytest.fixture(scope="module")
def env():
    env = gym.make("FrankaLift-v1", num_envs=4)
    yield env
    env.close()


def _block_xy(env):
    u = env.unwrapped
    return (u.block.state.pose[:, :2] - u.scene.env_origins[:, :2]).clone()


def test_bad_seed_changes_no_stream(env):
    env.reset(seed=100)
    with pytest.raises(ValueError, match="seeds must be >= 0"):
        env.reset(seed=[0, 1, 2, -1])
    env.reset()  # unseeded: continues each env's stream
    after_failure = _block_xy(env)
    env.reset(seed=100)
    env.reset()
    assert torch.equal(after_failure, _block_xy(env))


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, TypeError), ("abc", TypeError), ([0, 1, 2, None], TypeError),
                                         ([0, 1, 2, 3.7], TypeError), ([1, 2], ValueError), ({}, TypeError)])
def test_bad_seeds_raise(env, seed, error):
    with pytest.raises(error, match="seed"):
        env.reset(seed=seed)


def test_zero_dim_tensor_seed_is_an_int(env):
    env.reset(seed=torch.tensor(5))
    a = _block_xy(env)
    env.reset(seed=5)
    assert torch.equal(a, _block_xy(env))


def test_reconfigure_with_a_subset_seeds_every_env_from_the_seed(env):
    env.reset(seed=7, options={"env_idx": [1], "reconfigure": True})
    reconfigured = _block_xy(env)
    env.reset(seed=7)
    assert torch.equal(reconfigured, _block_xy(env))


def test_bad_options_raise(env):
    with pytest.raises(TypeError, match="reconfigure"):
        env.reset(options={"reconfigure": "no"})
    with pytest.raises(TypeError, match="options"):
        env.reset(options="x")


def test_objects_refuse_to_work_after_close():
    env = gym.make("FrankaLift-v1", num_envs=2)
    u = env.unwrapped
    block, robot = u.block, u.agent.robot
    env.close()
    for read in (lambda: block.state.pose, lambda: robot.state.qpos, lambda: robot.state.tcp_pose,
                 lambda: block.set_pose(torch.zeros(2, 7)), lambda: env.render()):
        with pytest.raises(RuntimeError, match="closed"):
            read()


def test_objects_of_a_rebuilt_scene_say_so():
    env = gym.make("FrankaLift-v1", num_envs=1)
    old_block = env.unwrapped.block
    env.reset(options={"reconfigure": True})
    with pytest.raises(RuntimeError, match="rebuilt"):
        old_block.state.pose
    assert env.unwrapped.block.state.pose.shape == (1, 7)
    env.close()


def test_obs_mode_none_means_state():
    env = gym.make("FrankaLift-v1", num_envs=1, obs_mode=None)
    obs, _ = env.reset(seed=0)
    assert env.unwrapped.obs_mode == "state" and obs.shape == (1, 36)
    env.close()


def test_sensors_render_mode_needs_a_visual_obs_mode():
    with pytest.raises(ValueError, match="visual obs_mode"):
        gym.make("FrankaLift-v1", num_envs=1, render_mode="sensors")


def test_sim_config_must_be_a_mapping():
    with pytest.raises(TypeError, match="sim_config"):
        gym.make("FrankaLift-v1", num_envs=1, sim_config=[1, 2])


def test_qpos_outside_joint_limits_is_refused(env):
    robot = env.unwrapped.agent.robot
    before = robot.state.qpos
    bad = before.clone()
    bad[2, 0] = 100.0
    with pytest.raises(ValueError, match="panda_joint1"):
        robot.set_qpos(bad)
    assert torch.equal(robot.state.qpos, before)


def test_single_env_write_accepts_one_row():
    env = gym.make("FrankaLift-v1", num_envs=3)
    block = env.unwrapped.block
    pose = [0.1, 0.2, 0.5, 1.0, 0.0, 0.0, 0.0]
    block.set_pose(pose, env_ids=1)
    assert torch.allclose(block.state.pose[1], torch.tensor(pose))
    env.close()


@pytest.mark.parametrize("action, error", [
    (np.full((4, 8), 1e40), "float32 range"),
    (np.zeros((4, 8), dtype=np.complex64), "real"),
    (np.array([[None] * 8] * 4), "real"),
])
def test_odd_actions_raise(env, action, error):
    with pytest.raises(ValueError, match=error):
        env.step(action)


def test_bfloat16_action_is_accepted(env):
    env.reset(seed=0)
    _, reward, _, _, _ = env.step(torch.zeros(4, 8, dtype=torch.bfloat16))
    assert reward.shape == (4,)


def test_camera_override_with_a_bad_value_raises():
    with pytest.raises(ValueError, match="fov"):
        gym.make("FrankaLift-v1", num_envs=1, render_mode="rgb_array", human_render_camera_configs={"fov": "x"})


def test_set_state_dict_names_what_is_wrong(env):
    with pytest.raises(KeyError, match="actors"):
        env.unwrapped.set_state_dict({})
    sd = env.unwrapped.get_state_dict()
    sd["actors"]["Nope"] = sd["actors"].pop("Block")
    with pytest.raises(KeyError, match="Nope"):
        env.unwrapped.set_state_dict(sd)
    with pytest.raises(ValueError, match=r"\(1, 44\)"):
        env.unwrapped.set_state(env.unwrapped.get_state()[:2], env_idx=[1])
