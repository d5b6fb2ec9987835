"""Visual randomization of the sensor cameras: field of view, the wrist camera's pose on its link,
and image noise (``randomization="visual"``; ``simulo_envs/envs/image_noise.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.randomization import Randomize, Uniform
from simulo_envs.envs.randomization_presets import FOV_JITTER
from simulo_envs.envs.registration import REGISTERED

TINY = {"width": 16, "height": 16}


def _make(task, num_envs, randomization=None, obs_mode="rgb+state", **kwargs):
    extra = {} if randomization is None else {"randomization": randomization}
    return REGISTERED[task](num_envs=num_envs, obs_mode=obs_mode, sensor_configs=TINY, **extra, **kwargs)


def test_fov_and_wrist_camera_are_drawn_per_env_from_the_seed():
    """SO100Lift-v1's preset jitters both cameras' fields of view and the wrist camera's pose on its
    link: env k seeded s gets the same values and pictures whatever num_envs; the robot (and the
    state observation) is the one of the unrandomized env."""
    two, one, plain = _make("SO100Lift-v1", 2, "visual"), _make("SO100Lift-v1", 1, "visual"), _make("SO100Lift-v1", 1)
    try:
        obs2, _ = two.reset(seed=[7, 8])
        obs1, _ = one.reset(seed=8)
        obs0, _ = plain.reset(seed=8)
        for name in ("base_camera", "wrist_camera"):
            cam2, cam1, nominal = two.sensor_cameras[name], one.sensor_cameras[name], plain.sensor_cameras[name]
            assert torch.equal(cam2.fov[1:], cam1.fov)
            assert cam2.fov[0] != cam2.fov[1]
            assert torch.all((cam2.fov - nominal.default_fov).abs() <= FOV_JITTER + 1e-6)
            assert nominal.fov.item() == pytest.approx(nominal.default_fov)
            # the intrinsics follow: fy = (H / 2) / tan(fov / 2)
            fy = two.get_sensor_params()[name]["intrinsic_cv"][:, 1, 1]
            np.testing.assert_allclose(fy.numpy(), 8.0 / np.tan(cam2.fov.numpy() / 2), rtol=1e-4)
            np.testing.assert_array_equal(obs2["sensor_data"][name]["rgb"][1], obs1["sensor_data"][name]["rgb"][0])
        wrist = two.sensor_cameras["wrist_camera"]
        assert wrist.mounted and not two.sensor_cameras["base_camera"].mounted
        moved = (wrist.local_pose[:, :3] - wrist.default_local_pose[:3]).abs()
        assert torch.all(moved <= 0.005 + 1e-6) and torch.all(moved.amax(dim=1) > 1e-4)
        torch.testing.assert_close(plain.sensor_cameras["wrist_camera"].local_pose[0], wrist.default_local_pose)
        np.testing.assert_array_equal(obs1["state"], obs0["state"])  # the link did not move, nor anything else
        action = torch.zeros((1, *one.single_action_space.shape))
        for _ in range(3):
            obs1, *_ = one.step(action)
            obs0, *_ = plain.step(action)
        np.testing.assert_array_equal(obs1["state"], obs0["state"])
        assert not torch.equal(obs1["sensor_data"]["wrist_camera"]["rgb"], obs0["sensor_data"]["wrist_camera"]["rgb"])
    finally:
        for env in (two, one, plain):
            env.close()


def test_image_noise_changes_the_rgb_observation_only():
    """Brightness, contrast and noise reach obs["sensor_data"][cam]["rgb"] and nothing else: not
    depth, not the state, not render() (get_sensor_images only when asked); a seed gives the same
    noise again, another env other noise."""
    table = (Randomize("sensor_cameras.base_camera.noise_std", Uniform(0.05, 0.06)),)
    noisy = _make("FrankaLift-v1", 2, table, obs_mode="rgbd+state", render_mode="sensors")
    clean = _make("FrankaLift-v1", 2, "none", obs_mode="rgbd+state")
    try:
        obs_n, _ = noisy.reset(seed=[3, 4])
        obs_c, _ = clean.reset(seed=[3, 4])
        rgb_n, rgb_c = obs_n["sensor_data"]["base_camera"]["rgb"], obs_c["sensor_data"]["base_camera"]["rgb"]
        residual = rgb_n.double() - rgb_c.double()
        assert 0.04 * 255 < residual.std() < 0.07 * 255 and abs(residual.mean()) < 3
        assert not torch.equal(residual[0], residual[1])
        np.testing.assert_array_equal(obs_n["sensor_data"]["base_camera"]["depth"], obs_c["sensor_data"]["base_camera"]["depth"])
        np.testing.assert_array_equal(obs_n["state"], obs_c["state"])
        np.testing.assert_array_equal(noisy.render()[..., :16, :], rgb_c)   # render_sensors: the clean picture
        np.testing.assert_array_equal(noisy.get_sensor_images()["base_camera"]["rgb"], rgb_c)
        asked = noisy.get_sensor_images(image_noise=True)["base_camera"]["rgb"].double() - rgb_c.double()
        assert 0.04 * 255 < asked.std() < 0.07 * 255
        again, _ = noisy.reset(seed=[3, 4])
        np.testing.assert_array_equal(again["sensor_data"]["base_camera"]["rgb"], rgb_n)
        # brightness alone is an exact shift: +0.2 of the range is +51 levels, clipped
        camera = noisy.sensor_cameras["base_camera"]
        camera.set_image_noise(brightness=0.2, noise_std=0.0, env_ids=[1])
        shifted = noisy.get_obs()["sensor_data"]["base_camera"]["rgb"]
        expected = torch.clamp(rgb_c[1].to(torch.int32) + 51, 0, 255).to(torch.uint8)
        np.testing.assert_array_equal(shifted[1], expected)
    finally:
        noisy.close()
        clean.close()


@pytest.mark.parametrize("write, match", [
    (lambda cam: cam.set_fov(0.0), r"field of view\[0\] = 0 rad is outside \(0, 3.1\]"),
    (lambda cam: cam.set_fov([1.0, math.nan]), "finite|NaN"),
    (lambda cam: cam.set_image_noise(noise_std=1.5), r"noise_std\[0\] = 1.5 is outside \[0, 1\]"),
    (lambda cam: cam.set_image_noise(brightness=0.1, contrast=-1), r"contrast\[0\] = -1 is outside \[0, inf\)"),
])
def test_bad_camera_values_raise_and_change_nothing(write, match):
    env = _make("FrankaLift-v1", 2, obs_mode="rgb")
    try:
        env.reset(seed=0)
        camera = env.sensor_cameras["base_camera"]
        fov, noise = camera.fov, camera.image_noise
        with pytest.raises(ValueError, match=match):
            write(camera)
        assert torch.equal(camera.fov, fov)
        assert all(torch.equal(camera.image_noise[k], noise[k]) for k in noise)
    finally:
        env.close()


@pytest.mark.parametrize("entry, match", [
    (Randomize("sensor_cameras.base_camera.fov", Uniform(-2.0, 0.0), operation="add"), "below the valid > 0"),
    (Randomize("sensor_cameras.base_camera.noise_std", Uniform(0.0, 2.0)), "above the valid <= 1"),
    (Randomize("sensor_cameras.base_camera.gain", Uniform(0.0, 1.0)),
     r"no randomizable parameter 'gain'; it has \['brightness', 'contrast', 'fov', 'noise_std', 'pose_jitter'\]"),
])
def test_bad_camera_entries_are_refused_before_any_draw(entry, match):
    with pytest.raises(ValueError, match=match):
        _make("FrankaLift-v1", 1, (entry,), obs_mode="rgb")


def test_image_noise_of_an_env_ignores_the_other_envs_resets():
    """Env k's noisy pictures depend on its seed and its steps alone: a partial reset of another
    env (which captures every env again) and asking for the noisy pictures change none of them."""
    table = (Randomize("sensor_cameras.base_camera.noise_std", Uniform(0.05, 0.06)),)
    two, one = _make("SO100Lift-v1", 2, table, obs_mode="rgb"), _make("SO100Lift-v1", 1, table, obs_mode="rgb")
    try:
        obs2, _ = two.reset(seed=[5, 9])
        obs1, _ = one.reset(seed=9)
        for _ in range(2):
            two.reset(options={"env_idx": [0]})
            two.get_sensor_images(image_noise=True)
            obs2, *_ = two.step(torch.zeros((2, *one.single_action_space.shape)))
            obs1, *_ = one.step(torch.zeros((1, *one.single_action_space.shape)))
            np.testing.assert_array_equal(obs2["sensor_data"]["base_camera"]["rgb"][1],
                                          obs1["sensor_data"]["base_camera"]["rgb"][0])
        again = one.get_sensor_images(image_noise=True)["base_camera"]["rgb"]
        np.testing.assert_array_equal(again, obs1["sensor_data"]["base_camera"]["rgb"])  # the same step's picture
        assert not torch.equal(obs1["sensor_data"]["base_camera"]["rgb"], one.get_sensor_images()["base_camera"]["rgb"])
    finally:
        two.close()
        one.close()
