"""Our BRDF lookup table (``simulo_envs/sim/brdf_lut.py``): its values against a direct
integration of the GGX BRDF, and pictures that do not depend on it (our scenes have no
environment map, so SAPIEN's own table would give the same pictures)."""

import numpy as np
import pytest

from simulo_envs.envs.registration import REGISTERED
from simulo_envs.sim import render
from simulo_envs.sim.brdf_lut import LUT_SIZE, brdf_lut


def _direct(n_dot_v: float, roughness: float, steps: int = 600) -> tuple:
    """(scale, bias) by midpoint quadrature over the hemisphere of directions L: the integral of
    D G F / (4 N.L N.V) * N.L with F = 1 - Fc (scale) and F = Fc (bias), Fc = (1 - V.H)^5, D the
    GGX distribution (alpha = roughness^2), G Smith-Schlick with k = alpha / 2."""
    alpha = roughness ** 2
    theta = (np.arange(steps) + 0.5) * (np.pi / 2) / steps
    phi = (np.arange(2 * steps) + 0.5) * (2 * np.pi) / (2 * steps)
    theta, phi = np.meshgrid(theta, phi, indexing="ij")
    light = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)], axis=-1)
    view = np.array([np.sqrt(1 - n_dot_v ** 2), 0.0, n_dot_v])
    half = light + view
    half /= np.linalg.norm(half, axis=-1, keepdims=True)
    n_dot_l, n_dot_h, v_dot_h = light[..., 2], half[..., 2], half @ view
    d = alpha ** 2 / (np.pi * (n_dot_h ** 2 * (alpha ** 2 - 1) + 1) ** 2)
    k = alpha / 2
    g = n_dot_l / (n_dot_l * (1 - k) + k) * n_dot_v / (n_dot_v * (1 - k) + k)
    weight = d * g / (4 * n_dot_v) * np.sin(theta) * (np.pi / 2 / steps) * (np.pi / steps)
    fc = (1 - v_dot_h) ** 5
    return float(np.sum(weight * (1 - fc))), float(np.sum(weight * fc))


@pytest.mark.parametrize("row,column", [(4, 12), (16, 16), (16, 28), (28, 20), (31, 31)])
def test_the_table_matches_a_direct_integration_of_the_ggx_brdf(row, column):
    table = brdf_lut()
    assert table.shape == (LUT_SIZE, LUT_SIZE, 4) and table.dtype == np.float32
    n_dot_v, roughness = (row + 0.5) / LUT_SIZE, (column + 0.5) / LUT_SIZE
    scale, bias = _direct(n_dot_v, roughness)
    assert table[row, column, 0] == pytest.approx(scale, abs=0.005)
    assert table[row, column, 1] == pytest.approx(bias, abs=0.003)


def test_the_tables_limits():
    table = brdf_lut()
    assert np.all(np.isfinite(table)) and np.all(table >= 0) and np.all(table[..., 2:] == 0)
    assert np.all(table[..., 0] + table[..., 1] <= 1.0 + 1e-3)  # F0 = 1 reflects at most all the light
    assert table[-1, 0, 0] == pytest.approx(1.0, abs=0.01) and table[-1, 0, 1] == pytest.approx(0.0, abs=0.01)


def _pictures(lut_texture, monkeypatch):
    """SO100Lift-v1's front and wrist (link-mounted) cameras and ``render()``, 1 env, seed 2, its
    cameras given ``lut_texture()``."""
    monkeypatch.setattr(render, "brdf_lut_texture", lut_texture)
    env = REGISTERED["SO100Lift-v1"](num_envs=1, obs_mode="rgbd", render_mode="rgb_array",
                                     sensor_configs={"width": 48, "height": 40},
                                     human_render_camera_configs={"width": 48, "height": 40})
    try:
        obs, _ = env.reset(seed=2)
        pictures = {f"{name}/{kind}": np.asarray(value) for name, data in obs["sensor_data"].items()
                    for kind, value in data.items()}
        pictures["render"] = np.asarray(env.render())
    finally:
        env.close()
    return pictures


def test_pictures_do_not_depend_on_the_table(monkeypatch):
    ours = _pictures(render.brdf_lut_texture, monkeypatch)
    ones = np.ones((4, 4, 4), dtype=np.float32)  # far from any real table
    other = _pictures(lambda: render.sapien.render.RenderTexture(ones, 2, "R32G32B32A32Sfloat"), monkeypatch)
    assert len(ours) >= 5 and set(ours) == set(other)  # two cameras' rgb and depth, and render()
    for name in ours:
        assert ours[name].std() > 0, name  # a picture of the scene, not a blank
        np.testing.assert_array_equal(ours[name], other[name], err_msg=name)
