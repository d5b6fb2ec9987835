"""The split-sum BRDF lookup table our cameras hand to SAPIEN's rasterising shader packs.

SAPIEN's ``default`` and ``minimal`` packs shade image-based lighting (an environment map's
specular reflection) with a lookup table of the GGX specular BRDF integrated over the hemisphere
(the split-sum approximation: Karis, "Real Shading in Unreal Engine 4", SIGGRAPH 2013 course
notes). Where a camera brings no table of its own (a custom texture named ``BRDFLUT``), SAPIEN
3.0.3 computes a 512x512 one on the render device before the process's first picture: about
10 s of CPU on a software Vulkan device (lavapipe; measured on FrankaLift-v1, the first picture
of a process 11 s of CPU, the next ones milliseconds), paid again by every process that renders
(test workers, worker processes, every script).

``brdf_lut`` computes the same table, smaller (``LUT_SIZE`` x ``LUT_SIZE``, linearly filtered
between texels), in a few milliseconds of numpy. The scenes we build have no environment map:
SAPIEN then samples its default cube map, which is black, and the table's values multiply
zero, so pictures are bitwise the same with either table (checked: rgb, depth and ``render()``
of FrankaLift-v1 with both packs, ``tests/test_brdf_lut.py``). A scene given an environment map
is shaded with this table, within its sampling error of SAPIEN's.

Layout: float32 (``LUT_SIZE``, ``LUT_SIZE``, 4); row = N.V (cosine between the normal and the
view direction), column = roughness, both sampled at texel centres ((i + 0.5) / ``LUT_SIZE``);
channel 0 the scale and channel 1 the bias applied to the Fresnel reflectance F0 (the specular
colour is ``F0 * scale + bias``); channels 2 and 3 are 0. The shaders read it as
``texture(samplerBRDFLUT, vec2(roughness, dotNV)).xy``.
"""

from __future__ import annotations

import functools

import numpy as np
import sapien

LUT_SIZE = 32
"""Texels per side of the table (N.V rows, roughness columns)."""
LUT_SAMPLES = 256
"""Importance samples of the GGX distribution per texel (a Hammersley point set)."""
LUT_NAME = "BRDFLUT"
"""The custom texture name SAPIEN's packs read the table from (``samplerBRDFLUT``)."""


def _hammersley(count: int) -> np.ndarray:
    """(count, 2) points in [0, 1)^2: i / count and the base-2 radical inverse of i."""
    i = np.arange(count, dtype=np.uint32)
    bits = i.copy()
    bits = ((bits << 16) | (bits >> 16)) & 0xFFFFFFFF
    bits = ((bits & 0x55555555) << 1) | ((bits & 0xAAAAAAAA) >> 1)
    bits = ((bits & 0x33333333) << 2) | ((bits & 0xCCCCCCCC) >> 2)
    bits = ((bits & 0x0F0F0F0F) << 4) | ((bits & 0xF0F0F0F0) >> 4)
    bits = ((bits & 0x00FF00FF) << 8) | ((bits & 0xFF00FF00) >> 8)
    return np.stack([i / count, bits.astype(np.float64) / 2.0 ** 32], axis=1)


@functools.lru_cache(maxsize=1)
def brdf_lut(size: int = LUT_SIZE, samples: int = LUT_SAMPLES) -> np.ndarray:
    """The split-sum table, float32 (size, size, 4), laid out as the module docstring says.

    For N.V and roughness r (alpha = r^2), with half vectors H drawn from the GGX distribution
    and L the view direction V mirrored about H: scale = mean((1 - Fc) * G_vis), bias =
    mean(Fc * G_vis) over samples with N.L > 0, where Fc = (1 - V.H)^5 (Schlick) and G_vis =
    G * V.H / (N.H * N.V), G the Smith-Schlick visibility with k = alpha / 2 (Karis 2013). The
    returned array is shared: do not write to it.
    """
    centres = (np.arange(size) + 0.5) / size
    n_dot_v = centres[:, None, None]                     # rows
    alpha = (centres ** 2)[None, :, None]                # columns: roughness^2
    xi = _hammersley(samples)
    phi = 2.0 * np.pi * xi[None, None, :, 0]
    cos_h = np.sqrt((1.0 - xi[None, None, :, 1]) / (1.0 + (alpha ** 2 - 1.0) * xi[None, None, :, 1]))
    sin_h = np.sqrt(1.0 - cos_h ** 2)
    h = np.stack(np.broadcast_arrays(sin_h * np.cos(phi), sin_h * np.sin(phi), cos_h), axis=-1)
    v = np.stack(np.broadcast_arrays(np.sqrt(1.0 - n_dot_v ** 2), np.zeros_like(n_dot_v), n_dot_v), axis=-1)
    v_dot_h = np.sum(v * h, axis=-1)
    n_dot_l = 2.0 * v_dot_h * h[..., 2] - n_dot_v        # L = 2 (V.H) H - V, its z
    n_dot_h = h[..., 2]
    k = alpha / 2.0
    lit = n_dot_l > 0.0
    n_dot_l = np.where(lit, n_dot_l, 0.0)
    g = (n_dot_l / (n_dot_l * (1.0 - k) + k)) * (n_dot_v / (n_dot_v * (1.0 - k) + k))
    g_vis = np.where(lit, g * np.clip(v_dot_h, 0.0, None) / (n_dot_h * n_dot_v), 0.0)
    fc = (1.0 - np.clip(v_dot_h, 0.0, 1.0)) ** 5
    table = np.zeros((size, size, 4), dtype=np.float32)
    table[..., 0] = np.mean((1.0 - fc) * g_vis, axis=-1)
    table[..., 1] = np.mean(fc * g_vis, axis=-1)
    table.flags.writeable = False
    return table


def brdf_lut_texture():
    """A SAPIEN render texture of ``brdf_lut()`` (linear filtering, clamped to the edge), for a
    camera's ``set_texture(LUT_NAME, ...)`` before its first picture. Needs the process's render
    device (make a render system first)."""
    return sapien.render.RenderTexture(np.ascontiguousarray(brdf_lut()), 2, "R32G32B32A32Sfloat",
                                       filter_mode="linear", address_mode="edge")
