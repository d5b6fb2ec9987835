"""The camera path: the shader pack each camera renders with, 8-bit colour read back as it is."""

import os

import gymnasium as gym
import numpy as np
import pytest
import sapien
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.sensors import CameraConfig
from simulo_envs.sim.render import uint8_color, vulkan_available
from simulo_envs.sim.render_config import resolve_shader_pack, shader_directory

needs_vulkan = pytest.mark.skipif(not vulkan_available(), reason="no Vulkan driver")
SHADERS = os.path.join(os.path.dirname(sapien.__file__), "vulkan_shader")
MAX_RGB_MAD = 0.5
"""Mean absolute RGB difference (0-255 levels) allowed between the minimal and the default pack
(FrankaLift-v1, 2 envs at 64x64; measured 0.08 at 128x128: they differ only on a few outline pixels)."""


def test_auto_is_the_fastest_pack_that_renders_the_textures():
    assert CameraConfig("c", [0, 0, 1, 1, 0, 0, 0]).shader_pack == "auto"
    assert resolve_shader_pack("auto", {"rgb"}) == "minimal"
    assert resolve_shader_pack("auto", {"rgb", "depth", "segmentation", "position"}) == "minimal"
    assert resolve_shader_pack("auto", {"rgb", "normal"}) == "default"
    assert resolve_shader_pack("auto", {"albedo"}) == "default"
    assert resolve_shader_pack("default", {"rgb"}) == "default"  # a named pack is kept
    with pytest.raises(ValueError, match="resolve"):
        shader_directory("auto")


def test_uint8_colour_only_for_sapiens_rasterising_packs(tmp_path):
    assert uint8_color("") and uint8_color(os.path.join(SHADERS, "default")) and uint8_color(os.path.join(SHADERS, "minimal"))
    assert uint8_color(os.path.join(SHADERS, "minimal") + os.sep)
    assert not uint8_color(os.path.join(SHADERS, "rt"))
    os.symlink(os.path.join(SHADERS, "default"), tmp_path / "my_pack")  # a pack of one's own: float target
    assert not uint8_color(str(tmp_path / "my_pack"))


def _sensor_images(pack: str, obs_mode: str) -> dict:
    env = gym.make("FrankaLift-v1", num_envs=2, obs_mode=obs_mode,
                   sensor_configs=dict(width=64, height=64, shader_pack=pack))
    try:
        env.reset(seed=0)
        obs, *_ = env.step(torch.zeros(2, 8))
        rig = env.unwrapped._sensor_rigs["base_camera"]
        return {"obs": obs["sensor_data"]["base_camera"], "pack": rig.cameras[0].get_picture_names()}
    finally:
        env.close()


@needs_vulkan
def test_8bit_colour_equals_the_float_target_rounded(tmp_path):
    # The same default pack twice: SAPIEN's directory (8-bit colour) and a link to it (float colour).
    os.symlink(os.path.join(SHADERS, "default"), tmp_path / "default_float")
    fast = _sensor_images("default", "rgb")["obs"]["rgb"]
    slow = _sensor_images(str(tmp_path / "default_float"), "rgb")["obs"]["rgb"]
    assert fast.dtype == slow.dtype == torch.uint8 and fast.shape == (2, 64, 64, 3)
    assert fast.float().std() > 10  # a picture, not a blank
    assert (fast.int() - slow.int()).abs().max() <= 1


@needs_vulkan
def test_obs_modes_pick_their_pack_and_images_stay_close():
    auto = _sensor_images("auto", "rgb+depth+segmentation")
    default = _sensor_images("default", "rgb+depth+segmentation")
    assert "PositionSegmentation" in auto["pack"] and "Normal" not in auto["pack"]  # minimal
    assert "Normal" in default["pack"]
    rgb_mad = (auto["obs"]["rgb"].float() - default["obs"]["rgb"].float()).abs().mean()
    assert rgb_mad < MAX_RGB_MAD
    assert torch.allclose(auto["obs"]["depth"], default["obs"]["depth"], atol=2e-3)
    assert (auto["obs"]["segmentation"] == default["obs"]["segmentation"]).float().mean() > 0.99
    normal = _sensor_images("auto", "rgb+normal")
    assert "Normal" in normal["pack"] and np.isfinite(normal["obs"]["normal"].numpy()).all()

