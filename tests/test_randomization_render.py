"""Visual parameters, rendered for real (lavapipe on CPU): camera jitter shifts the image by the
expected number of pixels, prop colours and lights change the pixels of their env only."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.randomization import Randomize, Uniform
from simulo_envs.envs.sensors import look_at

SPOT = [0.4, 0.2]  # env-local (x, y) clear of the arm at rest, seen from above
HEIGHT = 0.8
TOP_DOWN = look_at([*SPOT, HEIGHT], [*SPOT, 0.0], up=(1.0, 0.0, 0.0))
SIZE, FOV = 64, 1.0


@pytest.fixture(scope="module")
def env():
    """2 envs, each with the cube under a top-down 64x64 sensor."""
    env = gym.make("FrankaLift-v1", num_envs=2, obs_mode="rgb+segmentation",
                   sensor_configs={"base_camera": dict(pose=TOP_DOWN, width=SIZE, height=SIZE, fov=FOV)})
    yield env.unwrapped
    env.close()


def _frame(u):
    """Put both cubes under the camera, return (rgb, segmentation) of both envs as numpy."""
    pose = u.block.default_pose
    pose[:, :2] += torch.tensor(SPOT) - torch.tensor([0.5, 0.0])
    u.block.set_pose(pose)
    data = u.get_obs()["sensor_data"]["base_camera"]
    return data["rgb"].numpy().astype(np.float64), data["segmentation"][..., 0].numpy()


def _block_mask(u, seg):
    block_id = next(k for k, v in u.segmentation_id_map.items() if v == u.block.path)
    return seg == block_id


def test_camera_jitter_shifts_the_image_by_the_expected_pixels(env):
    u = env
    u.reset(seed=0)
    camera = u.sensor_cameras["base_camera"]
    theta = 0.1  # rad about the camera's up axis (a pan), env 1 only
    camera.set_pose_jitter([[0, 0, 0, 0, 0, theta]], env_ids=[1])
    _, seg = _frame(u)
    cols = [np.nonzero(_block_mask(u, seg[i]))[1].mean() for i in range(2)]
    focal = (SIZE / 2) / math.tan(FOV / 2)  # px, square pixels
    assert cols[1] - cols[0] == pytest.approx(focal * math.tan(theta), abs=0.6)  # the scene slides right
    # read-back and the reported extrinsics follow the jitter; env 0 is untouched
    local = camera.local_pose
    assert torch.allclose(local[0], camera.default_local_pose, atol=1e-6)
    turned = torch.tensor([math.cos(theta / 2), 0, 0, math.sin(theta / 2)])
    q0 = camera.default_local_pose[3:]
    want = torch.stack([q0[0] * turned[0] - q0[3] * turned[3], q0[1] * turned[0] + q0[2] * turned[3],
                        q0[2] * turned[0] - q0[1] * turned[3], q0[3] * turned[0] + q0[0] * turned[3]])
    assert torch.allclose(local[1, 3:], want, atol=1e-5) and torch.allclose(local[1, :3], local[0, :3])
    extrinsic = u.get_sensor_params()["base_camera"]["extrinsic_cv"]
    assert not torch.allclose(extrinsic[0], extrinsic[1])
    for bad, ids, error in (([[0, 0, 0, 0, 0, math.nan]], [1], ValueError), (torch.zeros(5), [1], ValueError),
                            (torch.zeros(6), [2], IndexError), ([True] * 6, [1], TypeError)):
        with pytest.raises(error):
            camera.set_pose_jitter(bad, env_ids=ids)
    assert torch.equal(camera.local_pose, local)  # nothing was written
    # a position jitter of 5 cm along env-local +x (the image's up) moves the cube's top face
    # (0.05 m high, so 0.75 m away) down the image by focal * 0.05 / 0.75 px
    camera.set_pose_jitter([[0.05, 0, 0, 0, 0, 0]], env_ids=[1])
    _, seg = _frame(u)
    rows = [np.nonzero(_block_mask(u, seg[i]))[0].mean() for i in range(2)]
    assert rows[1] - rows[0] == pytest.approx(focal * 0.05 / (HEIGHT - 0.05), abs=0.6)
    camera.set_pose_jitter(torch.zeros(6))  # back to the configured pose everywhere
    assert torch.allclose(camera.local_pose, camera.default_local_pose.expand(2, 7), atol=1e-6)


def test_prop_colour_changes_its_envs_pixels_only(env):
    u = env
    u.reset(seed=0)
    u.block.set_color([[0.1, 0.9, 0.1]], env_ids=[1])
    assert torch.allclose(u.block.color, torch.tensor([[0.85, 0.15, 0.1, 1.0], [0.1, 0.9, 0.1, 1.0]]))
    rgb, seg = _frame(u)
    mean = [rgb[i][_block_mask(u, seg[i])].mean(axis=0) for i in range(2)]
    assert mean[0][0] > 2 * mean[0][1]  # red cube in env 0
    assert mean[1][1] > 2 * mean[1][0]  # green in env 1
    u.block.set_color([0.85, 0.15, 0.1])


def test_lights_change_brightness_in_their_env_only(env):
    u = env
    u.reset(seed=0)
    lights = u.lights
    assert lights.intensity.tolist() == [[1.0], [1.0]]
    rgb, seg = _frame(u)
    ground = seg[0] != seg[0][SIZE // 2, SIZE // 2]
    base = [rgb[i][ground].mean() for i in range(2)]
    lights.set_intensity([0.0], env_ids=[1])
    rgb, _ = _frame(u)
    dark = [rgb[i][ground].mean() for i in range(2)]
    assert dark[0] == pytest.approx(base[0], abs=0.5) and dark[1] < base[1] - 15  # ambient light only
    lights.set_intensity(1.0, env_ids=[1])
    lights.set_direction([[1.0, 0.0, -0.15]], env_ids=[1], light=0)  # grazing instead of 45 degrees
    assert torch.allclose(lights.direction[1, 0], torch.tensor([1.0, 0.0, -0.15]) / math.hypot(1, 0.15), atol=1e-5)
    rgb, _ = _frame(u)
    assert rgb[1][ground].mean() < rgb[0][ground].mean() - 5
    lights.set_direction([0.0, 1.0, -1.0], light=0)
    lights.set_ambient([0.6, 0.6, 0.6], env_ids=[0])
    rgb, _ = _frame(u)
    assert rgb[0][ground].mean() > rgb[1][ground].mean() + 5
    with pytest.raises(ValueError):
        lights.set_direction([0.0, 0.0, 0.0], light=0)
    with pytest.raises(ValueError):
        lights.set_color([[-0.1, 1.0, 1.0]], env_ids=[0], light=0)
    with pytest.raises(IndexError):
        lights.set_intensity(1.0, light=1)
    lights.set_ambient([0.3, 0.3, 0.3])


def test_physical_draws_do_not_depend_on_rendering():
    """The same seed gives the same physical values whether the env renders (and so writes its
    visual entries) or not."""
    envs = [gym.make("FrankaLiftRandomized-v1", num_envs=2, obs_mode=mode,
                     sensor_configs=dict(width=16, height=16)).unwrapped for mode in ("state", "rgb")]
    for env in envs:
        env.reset(seed=5, options={"reconfigure": True})
    values = [env.randomization.values() for env in envs]
    for name in values[0]:
        assert torch.equal(values[0][name], values[1][name]), name
    rendered = envs[1]
    assert torch.allclose(rendered.lights.intensity, values[1]["lights.intensity"])
    assert torch.allclose(rendered.block.color[:, :3], values[1]["block.color"])
    jitter = values[1]["sensor_cameras.base_camera.pose_jitter"]
    moved = rendered.sensor_cameras["base_camera"].local_pose[:, :3] - rendered.sensor_cameras["base_camera"].default_local_pose[:3]
    assert torch.allclose(moved, jitter[:, :3], atol=1e-5)
    for env in envs:
        env.close()


def test_one_shared_render_scene_has_no_per_env_lights():
    """With parallel_in_single_scene all envs share one scene's lights: writes are refused, a
    table still draws (and records) its light entries, and prop colours stay per env."""
    table = (Randomize("lights.intensity", Uniform(0.5, 1.5)), Randomize("block.color", Uniform(0.2, 0.8)))
    env = gym.make("FrankaLift-v1", num_envs=2, render_mode="rgb_array", parallel_in_single_scene=True,
                   human_render_camera_configs=dict(width=16, height=16), randomization=table).unwrapped
    env.reset(seed=0)
    values = env.randomization.values()
    assert torch.allclose(env.block.color[:, :3], values["block.color"])
    assert ((values["lights.intensity"] >= 0.5) & (values["lights.intensity"] <= 1.5)).all()
    with pytest.raises(RuntimeError, match="single_scene"):
        env.lights.set_intensity(1.0, env_ids=[0])
    env.close()
