"""Rendering for real on this machine (lavapipe on CPU): cameras, visual obs, isolation, depth."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.sensors import look_at

SPOT = [0.4, 0.2]  # env-local (x, y) clear of the arm at rest, seen from above
TOP_DOWN = look_at([*SPOT, 0.8], [*SPOT, 0.0], up=(1.0, 0.0, 0.0))


@pytest.fixture(scope="module")
def env():
    """2 envs at the same origin (spacing 0), a top-down sensor over SPOT."""
    env = gym.make("FrankaLift-v1", num_envs=2, obs_mode="rgb+depth+segmentation", render_mode="rgb_array",
                   sim_config=dict(env_spacing=0.0),
                   sensor_configs={"base_camera": dict(pose=TOP_DOWN, width=96, height=96, fov=1.0)},
                   human_render_camera_configs=dict(width=64, height=64))
    yield env
    env.close()


def _block_id(u):
    return next(k for k, v in u.segmentation_id_map.items() if v == u.block.path)


def _project(u, point):
    """Pixel (row, col) of a world point in env 0's base camera."""
    params = u.get_sensor_params()["base_camera"]
    extrinsic, intrinsic = params["extrinsic_cv"][0].double(), params["intrinsic_cv"][0].double()
    cam = extrinsic[:, :3] @ point.double() + extrinsic[:, 3]
    uvw = intrinsic @ cam
    return int(uvw[1] / uvw[2]), int(uvw[0] / uvw[2])


def test_observation_layout(env):
    obs, _ = env.reset(seed=0)
    data = obs["sensor_data"]["base_camera"]
    assert data["rgb"].shape == (2, 96, 96, 3) and data["rgb"].dtype == torch.uint8
    assert data["depth"].shape == (2, 96, 96, 1) and data["depth"].dtype == torch.float32
    assert data["segmentation"].shape == (2, 96, 96, 1)
    assert set(obs["sensor_param"]["base_camera"]) == {"intrinsic_cv", "extrinsic_cv", "cam2world_gl"}
    assert env.unwrapped.single_observation_space["sensor_data"]["base_camera"]["rgb"].shape == (96, 96, 3)
    frame = env.render()
    assert frame.shape == (2, 64, 64, 3) and frame.dtype == torch.uint8


def test_block_visible_where_projected_and_gone_after_teleport(env):
    u = env.unwrapped
    env.reset(seed=0)
    pose = u.block.state.pose
    pose[:, :2] = torch.tensor(SPOT)
    u.block.set_pose(pose)
    block = u.block.state.pose[0, :3]
    row, col = _project(u, block)
    before = u.get_obs()["sensor_data"]["base_camera"]
    assert before["segmentation"][0, row, col, 0] == _block_id(u)
    far = u.block.state.pose
    far[0, 0] += 10.0
    u.block.set_pose(far[:1], env_ids=[0])
    after = u.get_obs()["sensor_data"]["base_camera"]
    assert after["segmentation"][0, row, col, 0] != _block_id(u)
    diff = (before["rgb"][0].int() - after["rgb"][0].int()).abs().sum(-1)
    near = diff[max(row - 2, 0):row + 3, max(col - 2, 0):col + 3].float().mean()
    mask = torch.ones_like(diff, dtype=torch.bool)
    mask[max(row - 12, 0):row + 13, max(col - 12, 0):col + 13] = False
    elsewhere = diff[mask].float().mean()
    assert near > 100, near
    assert elsewhere < 2, elsewhere


def test_each_env_sees_only_itself(env):
    u = env.unwrapped
    env.reset(seed=3)
    view = u.get_obs()["sensor_data"]["base_camera"]["rgb"][0].clone()
    # Move env 1's block right under env 0's camera (both envs share the origin: spacing 0).
    pose = u.block.state.pose
    pose[1, :3] = torch.tensor([*SPOT, 0.2])
    u.block.set_pose(pose[1:], env_ids=[1])
    again = u.get_obs()["sensor_data"]["base_camera"]["rgb"][0]
    assert torch.equal(view, again)


def test_depth_is_metres():
    h = 1.3
    cam = look_at([-1.0, 1.0, h], [-1.0, 1.0, 0.0], up=(1.0, 0.0, 0.0))
    env = gym.make("FrankaLift-v1", num_envs=1, obs_mode="depth",
                   sensor_configs={"base_camera": dict(pose=cam, width=33, height=33, fov=0.5)})
    obs, _ = env.reset(seed=0)
    depth = obs["sensor_data"]["base_camera"]["depth"][0, 16, 16, 0].item()
    assert depth == pytest.approx(h, abs=0.01)
    env.close()


def test_render_without_render_mode_raises():
    env = gym.make("FrankaLift-v1", num_envs=1)
    assert env.render() is None
    with pytest.raises(RuntimeError, match="render_mode"):
        env.unwrapped.render_rgb_array()
    env.close()


def test_no_vulkan_fails_at_construction_with_install_hint(monkeypatch):
    import simulo_envs.sim.render as render

    monkeypatch.setattr(render, "vulkan_available", lambda: False)
    with pytest.raises(RuntimeError, match="mesa-vulkan-drivers"):
        gym.make("FrankaLift-v1", num_envs=1, render_mode="rgb_array")
    with pytest.raises(RuntimeError, match="Vulkan"):
        gym.make("FrankaLift-v1", num_envs=1, obs_mode="rgb")
    env = gym.make("FrankaLift-v1", num_envs=2)  # state-only still works
    env.reset(seed=0)
    _, reward, _, _, _ = env.step(torch.zeros(2, 8))
    assert reward.shape == (2,)
    env.close()


def test_bad_camera_override_raises():
    with pytest.raises(ValueError, match="camera override"):
        gym.make("FrankaLift-v1", num_envs=1, obs_mode="rgb", sensor_configs={"no_such_camera": dict(width=8)})
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("FrankaLift-v1", num_envs=1, obs_mode="rgb+thermal")
