"""The camera path: the shader pack each camera renders with, 8-bit colour read back as it is."""

import os
import sys

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
        return {"obs": obs["sensor_data"]["base_camera"], "pack": rig.cameras[0].get_picture_names(),
                "colour_target": rig.cameras[0].get_picture("Color").dtype}
    finally:
        env.close()


@needs_vulkan
def test_8bit_colour_equals_the_float_target_rounded(monkeypatch):
    # The same default pack twice: 8-bit colour, then SAPIEN's float target, asked for here in place
    # of the 8-bit one. (A pack of one's own keeps the float target, test above, but gets no BRDF
    # table of ours: SAPIEN would compute its own first, 10 s of CPU for the same pictures,
    # tests/test_brdf_lut.py.)
    fast = _sensor_images("default", "rgb")
    set_picture_format = sapien.render.set_picture_format
    monkeypatch.setattr(sapien.render, "set_picture_format",
                        lambda name, form: set_picture_format(name, "r32g32b32a32sfloat" if name == "Color" else form))
    slow = _sensor_images("default", "rgb")
    assert (fast["colour_target"], slow["colour_target"]) == (np.uint8, np.float32)
    fast, slow = fast["obs"]["rgb"], slow["obs"]["rgb"]
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



def test_background_paint_fills_only_pixels_without_a_surface():
    from simulo_envs.sim.render import _paint, _uint8

    rng = np.random.default_rng(0)
    color = rng.integers(0, 256, (16, 16, 4), dtype=np.uint8)
    color[:5, :, :] = 0  # background rows: nothing hit, black, alpha 0
    color[5:, :, 3] = 255
    expected = color[..., :3].copy()
    expected[:5] = [146, 147, 148]
    painted = color.copy()
    _paint(painted, np.array([146, 147, 148], dtype=np.uint8))
    assert np.array_equal(painted[..., :3], expected) and np.array_equal(painted[..., 3], color[..., 3])
    as_float = color.astype(np.float32) / 255.0  # a float target gives the same picture once rounded
    _paint(as_float, np.array([146, 147, 148], dtype=np.uint8))
    assert np.array_equal(_uint8(as_float), expected)


def test_malloc_settings_of_the_user_are_left_alone():
    from simulo_envs.sim.render import malloc_set_by_user

    assert not malloc_set_by_user({})
    assert not malloc_set_by_user({"GLIBC_TUNABLES": "glibc.pthread.rseq=0"})
    assert malloc_set_by_user({"MALLOC_TRIM_THRESHOLD_": "0"})
    assert malloc_set_by_user({"MALLOC_MMAP_THRESHOLD_": "65536"})
    assert malloc_set_by_user({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"})
    assert malloc_set_by_user({"GLIBC_TUNABLES": "glibc.rtld.x=1:glibc.malloc.mmap_threshold=4096"})


MAX_FAULTS_PER_PICTURE = 120
"""Minor page faults per 128x128 picture allowed while rendering (measured about 20 with freed
memory kept, 200-700 with glibc's defaults)."""


@needs_vulkan
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc settings")
def test_rendering_reuses_freed_memory_instead_of_faulting_it_in_again():
    import resource

    from simulo_envs.sim.render import keep_freed_memory, malloc_set_by_user

    if malloc_set_by_user(os.environ):
        pytest.skip("malloc settings chosen in the environment")
    env = gym.make("FrankaLift-v1", obs_mode="rgb")
    try:
        assert keep_freed_memory()  # set when the process's first render system was made
        env.reset(seed=0)
        action = torch.zeros(1, 8)
        for _ in range(3):
            env.step(action)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            env.step(action)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10
    finally:
        env.close()
    assert faults < MAX_FAULTS_PER_PICTURE


@needs_vulkan
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc settings")
def test_a_freed_block_is_reused_without_page_faults():
    import ctypes
    import resource

    from simulo_envs.sim.render import keep_freed_memory, malloc_set_by_user

    if malloc_set_by_user(os.environ):
        pytest.skip("malloc settings chosen in the environment")
    assert keep_freed_memory()
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, (ctypes.c_size_t,), (ctypes.c_void_p,)
    size = 8 << 20  # 2048 pages: with glibc's defaults a fresh mmap, unmapped when freed
    block = libc.malloc(size)
    ctypes.memset(block, 1, size)
    libc.free(block)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    block = libc.malloc(size)
    ctypes.memset(block, 2, size)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    libc.free(block)
    assert faults < 100  # kept: the pages are still mapped (2048 faults when given back)
