"""The procedural texture set of visual domain randomization: small grey patterns made here from
fixed formulas (numpy only: nothing is read from disk or downloaded), for props and the floor.

A texture is an RGBA uint8 picture of grey levels in [0.45, 1] (alpha 255); a surface shows it
times its colour (``simulo_envs/sim/render.py``, ``tinted_texture``), so every colour of a
randomization table combines with every pattern. Index 0 of ``TEXTURE_NAMES`` is ``"plain"``:
no texture, the base colour alone.

SAPIEN's primitives map a texture once over each surface: a box in a cross layout (each face a
quarter x a third of the picture), the floor (a 10 m square) once over all of it. So a prop's
texture is a small picture with a few cells (``PROP_SIZE``, ``PROP_CELLS``) and the floor's a
larger one with many (``FLOOR_SIZE``, ``FLOOR_CELLS``: cells of about 16 cm on a 10 m floor, 8
pixels each).

>>> [name for name in TEXTURE_NAMES]
['plain', 'checker', 'stripes', 'grid', 'dots', 'noise', 'rings']
>>> texture_image("checker", 8, 2)[:, :, 0].tolist()[0]
[255, 255, 255, 255, 115, 115, 115, 115]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

TEXTURE_NAMES = ("plain", "checker", "stripes", "grid", "dots", "noise", "rings")
"""The set, in index order (a randomization table draws an index: ``Choice(range(len(TEXTURE_NAMES)))``)."""
DARK, LIGHT = 0.45, 1.0
"""Grey levels of a pattern's two tones (fractions of full scale)."""
PROP_SIZE, PROP_CELLS = 64, 4
"""A prop's texture: pixels per side, pattern periods per side."""
FLOOR_SIZE, FLOOR_CELLS = 512, 64
"""The floor's texture: pixels per side, pattern periods per side (over its 10 m)."""
NOISE_SEED = 20261206
"""Seed of the ``"noise"`` pattern's fixed random field (the same picture in every process)."""


@dataclass(frozen=True)
class Texture:
    """One picture of the set: ``name`` (``TEXTURE_NAMES``, plus its size), ``image`` uint8
    (H, W, 4) RGBA. Backends cache their copy by ``key``."""

    name: str
    image: np.ndarray = field(compare=False, repr=False)

    @property
    def key(self) -> str:
        """``"<name>@<height>x<width>"``: the same pattern and size is the same texture."""
        return f"{self.name}@{self.image.shape[0]}x{self.image.shape[1]}"


def texture_image(name: str, size: int, cells: int) -> np.ndarray:
    """uint8 (size, size, 4) RGBA picture of pattern ``name`` with ``cells`` periods per side.

    Raises:
        ValueError: an unknown name (the message lists ``TEXTURE_NAMES``), or ``"plain"`` (no picture).
    """
    if name not in TEXTURE_NAMES or name == "plain":
        raise ValueError(f"texture {name!r}: one of {list(TEXTURE_NAMES[1:])} ('plain' is no texture)")
    u = (np.arange(size) + 0.5) / size * cells          # pattern coordinates, one period per unit
    x, y = np.meshgrid(u, u, indexing="xy")
    fx, fy = x % 1.0, y % 1.0
    if name == "checker":
        tone = ((np.floor(x) + np.floor(y)) % 2 == 0).astype(np.float64)
    elif name == "stripes":
        tone = (fx < 0.5).astype(np.float64)
    elif name == "grid":
        tone = ((fx > 0.15) & (fy > 0.15)).astype(np.float64)
    elif name == "dots":
        tone = (np.hypot(fx - 0.5, fy - 0.5) > 0.3).astype(np.float64)
    elif name == "noise":
        coarse = np.random.default_rng(NOISE_SEED).random((cells + 1, cells + 1))
        i, j = np.minimum(np.floor(y).astype(int), cells - 1), np.minimum(np.floor(x).astype(int), cells - 1)
        tone = (coarse[i, j] * (1 - fx) * (1 - fy) + coarse[i, j + 1] * fx * (1 - fy)
                + coarse[i + 1, j] * (1 - fx) * fy + coarse[i + 1, j + 1] * fx * fy)  # bilinear value noise
    else:  # rings
        tone = 0.5 + 0.5 * np.cos(2 * np.pi * np.hypot(x - cells / 2, y - cells / 2))
    grey = np.rint(255 * (DARK + (LIGHT - DARK) * tone)).astype(np.uint8)
    out = np.full((size, size, 4), 255, dtype=np.uint8)
    out[..., :3] = grey[..., None]
    return out


@functools.lru_cache(maxsize=None)
def texture(index: int, floor: bool = False):
    """The ``Texture`` of ``TEXTURE_NAMES[index]`` at the prop's or the floor's size, or None for
    index 0 (``"plain"``); made once per process.

    Raises:
        ValueError: an index outside [0, len(TEXTURE_NAMES)).
    """
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < len(TEXTURE_NAMES):
        raise ValueError(f"texture index must be an int in [0, {len(TEXTURE_NAMES)}) ({list(TEXTURE_NAMES)}), "
                         f"got {index!r}")
    if index == 0:
        return None
    size, cells = (FLOOR_SIZE, FLOOR_CELLS) if floor else (PROP_SIZE, PROP_CELLS)
    image = texture_image(TEXTURE_NAMES[index], size, cells)
    image.setflags(write=False)
    return Texture(TEXTURE_NAMES[index], image)


def texture_indices(values: np.ndarray, name: str = "texture") -> list[int]:
    """``values`` (any shape of floats) as a list of indices into ``TEXTURE_NAMES``.

    Raises:
        ValueError: a value that is not a whole number in [0, len(TEXTURE_NAMES)); the message
            names the valid indices and their patterns.
    """
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = ~np.isfinite(flat) | (flat != np.round(flat)) | (flat < 0) | (flat >= len(TEXTURE_NAMES))
    if bad.any():
        valid = ", ".join(f"{i} {n}" for i, n in enumerate(TEXTURE_NAMES))
        raise ValueError(f"{name}[{int(np.argmax(bad))}] = {float(flat[bad][0]):g}: a texture is an index in "
                         f"[0, {len(TEXTURE_NAMES)}) ({valid}); nothing was written")
    return [int(v) for v in flat]
