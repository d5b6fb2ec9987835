"""Centered grid of environment origins (the isaaclab-cloner seed's ``grid_transforms``).

The layout is Isaac Lab's ``TerrainImporter`` grid (``_compute_env_origins_grid`` in
``isaaclab/terrains/terrain_importer.py``), as the cloner seed specifies:

- ``num_rows = ceil(N / floor(sqrt(N)))`` and ``num_cols = ceil(N / num_rows)``;
- env ``k`` sits in row ``k // num_cols`` and column ``k % num_cols`` (row-major fill);
- its in-plane coordinates are ``a = -(row - (num_rows - 1) / 2) * spacing`` and
  ``b = (col - (num_cols - 1) / 2) * spacing``, so the grid is centred on the world origin.

With ``up_axis="z"`` (the default) the position is ``(a, b, 0)``; ``"y"`` gives ``(a, 0, b)`` and
``"x"`` gives ``(0, a, b)``, as the seed's ``grid_transforms`` places them. Quaternions are
returned **scalar-first** ``[qw, qx, qy, qz]`` (the framework's one convention),
not the seed's ``(x, y, z, w)``.
"""

from __future__ import annotations

import math

import torch

_UP_AXES = ("x", "y", "z")


def grid_shape(N: int) -> tuple[int, int]:
    """``(num_rows, num_cols)`` of the grid holding ``N >= 1`` envs (Isaac Lab's TerrainImporter rule).

    >>> [grid_shape(n) for n in (1, 2, 3, 4, 5, 7, 10)]
    [(1, 1), (2, 1), (3, 1), (2, 2), (3, 2), (4, 2), (4, 3)]
    """
    num_rows = -(-N // math.isqrt(N))
    return num_rows, -(-N // num_rows)


def grid_transforms(
    N: int, spacing: float = 1.0, up_axis: str = "z", device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Create a centered grid of ``N`` transforms, laid out as Isaac Lab's TerrainImporter grid.

    Args:
        N: number of instances, ``>= 1``.
        spacing: distance between neighbouring grid positions [m], ``>= 0``.
        up_axis: ``"z"`` (default), ``"y"`` or ``"x"``; the grid spans the two other axes and
            the up coordinate is 0 (see the module docstring for the placement).
        device: torch device of the returned tensors.

    Returns:
        ``(pos, quat)``: ``pos`` float32 ``(N, 3)`` [m], env ``k`` in row ``k // num_cols``,
        column ``k % num_cols`` of :func:`grid_shape`; ``quat`` float32 ``(N, 4)`` identity
        rotations, scalar-first ``[qw, qx, qy, qz]``.

    Raises:
        ValueError: ``N < 1``, a negative or non-finite ``spacing``, or an unknown ``up_axis``.

    >>> pos, quat = grid_transforms(2, spacing=2.0)
    >>> pos.tolist()
    [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]
    >>> grid_transforms(4, spacing=2.0, up_axis="y")[0].tolist()
    [[1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, -1.0], [-1.0, 0.0, 1.0]]
    >>> quat[0].tolist()
    [1.0, 0.0, 0.0, 0.0]
    """
    if isinstance(N, bool) or not isinstance(N, int) or N < 1:
        raise ValueError(f"grid_transforms: N must be an int >= 1, got {N!r}")
    if not math.isfinite(spacing) or spacing < 0:
        raise ValueError(f"grid_transforms: spacing must be a finite number >= 0 [m], got {spacing!r}")
    if up_axis not in _UP_AXES:
        raise ValueError(f"grid_transforms: up_axis must be one of {_UP_AXES}, got {up_axis!r}")
    num_rows, num_cols = grid_shape(N)
    idx = torch.arange(N, dtype=torch.float64)
    row = torch.div(idx, num_cols, rounding_mode="floor")
    col = idx - row * num_cols
    a = -(row - (num_rows - 1) / 2.0) * spacing + 0.0  # + 0.0 turns -0.0 into 0.0
    b = (col - (num_cols - 1) / 2.0) * spacing
    zero = torch.zeros_like(a)
    axes = {"z": (a, b, zero), "y": (a, zero, b), "x": (zero, a, b)}[up_axis]
    pos = torch.stack(axes, dim=1).to(dtype=torch.float32, device=device)
    quat = torch.zeros(N, 4, dtype=torch.float32, device=device)
    quat[:, 0] = 1.0
    return pos, quat
