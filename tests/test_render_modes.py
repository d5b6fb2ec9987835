"""Render modes ``human`` and ``all``, the seed's render and sensor methods, the pointcloud obs
mode and the ``normal``/``albedo`` textures."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs
from simulo_envs.envs import viewer as viewer_module

SENSOR = {"width": 64, "height": 64}
HUMAN = {"width": 96, "height": 80}


def make(**kwargs):
    return simulo_envs.make("FrankaLift-v1", **kwargs)


@pytest.fixture(scope="module")
def env():
    e = make(num_envs=2, obs_mode="rgbd", render_mode="all", sensor_configs=SENSOR, human_render_camera_configs=HUMAN)
    yield e
    e.close()


# ---------------------------------------------------------------- render modes and methods
def test_render_all_tiles_the_render_camera_and_the_sensor_images(env):
    env.reset(seed=0)
    image = env.render()
    sensors = env.get_sensor_images()
    assert set(sensors["base_camera"]) == {"rgb", "depth"}
    assert all(v.shape == (2, 64, 64, 3) and v.dtype == torch.uint8 for v in sensors["base_camera"].values())
    assert image.shape == (2, 80, 96 + 64 + 64, 3) and image.dtype == torch.uint8
    assert torch.equal(image[:, :, :96], env.render_rgb_array())
    assert torch.equal(image[:, :64, 96:], env.render_sensors())
    assert torch.count_nonzero(image[:, 64:, 96:]) == 0  # the shorter sensor images are padded with black
    assert torch.equal(env.render_sensors()[:, :, :64], sensors["base_camera"]["rgb"])


def test_render_sensors_shows_depth_as_grey(env):
    env.reset(seed=0)
    depth = env.get_sensor_images()["base_camera"]["depth"]
    assert torch.equal(depth[..., 0], depth[..., 1]) and int(depth.max()) > 0


def test_human_mode_is_refused_at_construction_without_a_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(RuntimeError, match="needs a display.*render_mode='rgb_array'"):
        make(num_envs=1, render_mode="human")
    with pytest.raises(RuntimeError, match="needs a display"):  # gym.make adds no pygame wrapper either
        gym.make("FrankaLift-v1", num_envs=1, render_mode="human")


class FakeViewer:
    def __init__(self):
        self.calls = []

    def set_scene(self, scene):
        self.calls.append(("scene", scene))

    def set_camera_pose(self, pose):
        self.calls.append(("pose", list(pose.p)))

    def render(self):
        self.calls.append(("render",))

    def close(self):
        self.calls.append(("close",))


def test_human_mode_opens_sapiens_viewer_where_a_display_exists(monkeypatch):
    import sapien.utils

    monkeypatch.setattr(viewer_module, "display_available", lambda: True)
    monkeypatch.setattr(viewer_module, "device_can_present", lambda: True)
    monkeypatch.setattr(sapien.utils, "Viewer", FakeViewer)
    e = make(num_envs=2, render_mode="human", viewer_camera_configs={"pose": [0.5, -1.0, 0.8, 1, 0, 0, 0]})
    try:
        assert e.viewer is None
        e.reset(seed=0)
        viewer = e.render()
        assert isinstance(viewer, FakeViewer) and e.viewer is viewer
        assert viewer.calls[0] == ("scene", e._backend.scenes[0])
        expected = e.scene.env_origins[0] + torch.tensor([0.5, -1.0, 0.8])  # env 0's frame
        assert viewer.calls[1][0] == "pose" and np.allclose(viewer.calls[1][1], expected.numpy())
        e.render()
        assert [c[0] for c in viewer.calls].count("render") == 2
    finally:
        e.close()
    assert viewer.calls[-1] == ("close",) and e.viewer is None


def test_sensor_and_state_methods_of_the_seed(env, capsys):
    u = env
    assert u.sim_timestep == pytest.approx(0.01) and u.gpu_sim_enabled is False
    assert u.robot_link_names == u.agent.robot.link_names and "panda_hand_tcp" in u.robot_link_names
    assert u.viewer is None
    u.capture_sensor_data()
    u.print_sim_details()
    out = capsys.readouterr().out
    assert "FrankaLift" in out and "num_envs=2" in out and "physx_cpu" in out and "obs_mode=rgbd" in out


def test_update_obs_space_follows_a_wrapper_observation():
    e = make(num_envs=3)
    try:
        e.update_obs_space(torch.zeros(3, 10))
        assert e.single_observation_space.shape == (10,) and e.observation_space.shape == (3, 10)
        e.update_obs_space({"a": torch.zeros(3, 2, dtype=torch.uint8)})
        assert e.single_observation_space["a"].dtype == np.uint8
        assert e._init_raw_obs["a"].shape == (3, 2)
    finally:
        e.close()


# ---------------------------------------------------------------- pointcloud, normal, albedo
def test_pointcloud_is_fused_in_the_world_frame():
    e = make(num_envs=2, obs_mode="pointcloud", sensor_configs=SENSOR)
    try:
        obs, _ = e.reset(seed=1)
        pcd = obs["pointcloud"]
        assert pcd["xyzw"].shape == (2, 64 * 64, 4) and pcd["xyzw"].dtype == torch.float32
        assert pcd["rgb"].shape == (2, 64 * 64, 3) and pcd["rgb"].dtype == torch.uint8
        assert pcd["segmentation"].shape == (2, 64 * 64, 1)
        assert obs["sensor_data"] == {} and "cam2world_gl" in obs["sensor_param"]["base_camera"]
        block_id = next(k for k, v in e.segmentation_id_map.items() if v == e.block.path)
        block = e.block.state.pose[:, :3]
        for i in range(2):
            on_block = pcd["segmentation"][i, :, 0] == block_id
            assert on_block.sum() > 10
            points = pcd["xyzw"][i, on_block]
            assert torch.all(points[:, 3] == 1)
            assert (points[:, :3] - block[i]).norm(dim=1).max() < 0.05  # within the 5 cm cube
            ground = pcd["segmentation"][i, :, 0] == next(k for k, v in e.segmentation_id_map.items() if v == "ground")
            assert pcd["xyzw"][i, ground, 2].abs().max() < 2e-3
        assert e.observation_space["pointcloud"]["xyzw"].shape == (2, 4096, 4)
    finally:
        e.close()


def test_normal_and_albedo_textures():
    e = make(num_envs=1, obs_mode="rgb+normal+albedo+segmentation", sensor_configs=SENSOR)
    try:
        obs, _ = e.reset(seed=1)
        images = obs["sensor_data"]["base_camera"]
        assert set(images) == {"rgb", "normal", "albedo", "segmentation"}
        normal, albedo = images["normal"][0], images["albedo"][0]
        assert normal.dtype == torch.float32 and albedo.dtype == torch.uint8
        seg = images["segmentation"][0, ..., 0]
        block = seg == next(k for k, v in e.segmentation_id_map.items() if v == e.block.path)
        assert block.sum() > 10
        assert torch.allclose(albedo[block].float().mean(0), torch.tensor([217.0, 38.0, 26.0]), atol=4)
        ground = seg == next(k for k, v in e.segmentation_id_map.items() if v == "ground")
        cam2world = obs["sensor_param"]["base_camera"]["cam2world_gl"][0, :3, :3]
        world_normals = normal[ground] @ cam2world.T
        assert torch.allclose(world_normals.mean(0), torch.tensor([0.0, 0.0, 1.0]), atol=1e-2)
        assert torch.allclose(normal[block].norm(dim=1), torch.ones(int(block.sum())), atol=1e-2)
    finally:
        e.close()
    with pytest.raises(ValueError, match="cannot render.*normal"):
        make(num_envs=1, obs_mode="normal", shader_dir="minimal")
    with pytest.raises(ValueError, match="obs_mode"):
        make(num_envs=1, obs_mode="rgb+shiny")
