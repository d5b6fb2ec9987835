"""One process, two SAPIEN users: our envs and ManiSkill's render in the same process, whichever
makes its renderer first (SAPIEN renders with one device per process; ``sim/render.py``).

ManiSkill's cameras are handed our BRDF lookup table before their first picture, as our own
cameras are (``sim/brdf_lut.py``): the scenes have no environment map, so the pictures are the same
with either table, and the process does not spend about 12 s of CPU computing SAPIEN's 512x512 one
(measured: ManiSkill's ``gym.make`` of PickCube-v1 13.2 s of CPU without, 0.9 s with; the same image)."""

import os
import subprocess
import sys

import pytest

from simulo_envs.sim.render import vulkan_available

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import sys
import gymnasium as gym
import mani_skill.envs  # registers PickCube-v1
import simulo_envs

def ours():
    env = gym.make("FrankaLift-v1", obs_mode="rgb", sensor_configs={"width": 32, "height": 32})
    obs, _ = env.reset(seed=0)
    image = obs["sensor_data"]["base_camera"]["rgb"]
    print("ours", tuple(image.shape), float(image.float().std()))

def hand_maniskills_cameras_our_table():
    from mani_skill.sensors.camera import Camera
    from simulo_envs.sim.brdf_lut import LUT_NAME, brdf_lut_texture

    init = Camera.__init__

    def init_with_our_table(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for camera in self.camera._render_cameras:
            camera.set_texture(LUT_NAME, brdf_lut_texture())

    Camera.__init__ = init_with_our_table

def maniskill():
    env = gym.make("PickCube-v1", obs_mode="rgb", sim_backend="physx_cpu", sensor_configs={"width": 32, "height": 32})
    obs, _ = env.reset(seed=0)
    image = obs["sensor_data"]["base_camera"]["rgb"]
    print("maniskill", tuple(image.shape), float(image.float().std()))

hand_maniskills_cameras_our_table()
for name in sys.argv[1:]:
    {"ours": ours, "maniskill": maniskill}[name]()
"""


@pytest.mark.skipif(not vulkan_available(), reason="no Vulkan device")
@pytest.mark.parametrize("order", [("ours", "maniskill"), ("maniskill", "ours")])
def test_maniskill_and_our_envs_render_in_one_process_in_either_order(order):
    run = subprocess.run([sys.executable, "-c", SCRIPT, *order], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [line.split() for line in run.stdout.splitlines() if line.startswith(("ours", "maniskill"))]
    assert [line[0] for line in lines] == list(order)
    for line in lines:
        assert line[1:4] == ["(1,", "32,", "32,"]   # (1, 32, 32, 3) images
        assert float(line[-1]) > 5.0                 # something drawn, not a blank picture


@pytest.mark.skipif(not vulkan_available(), reason="no Vulkan device")
def test_the_viewer_check_reads_the_devices_answer():
    from simulo_envs.sim.render import keepalive_render_system
    from simulo_envs.sim.viewer import render_device_can_present

    assert render_device_can_present() is bool(keepalive_render_system().device.can_present())
