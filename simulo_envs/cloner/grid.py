"""Centered grid of environment origins (the isaaclab-cloner seed's ``grid_transforms``).

The layout follows Isaac Lab's ``TerrainImporter`` grid, as the cloner seed specifies:
``num_rows = ceil(N / ceil(sqrt(N)))`` rows and ``num_cols = ceil(sqrt(N))`` columns,
filled row by row, centered at the world origin. Quaternions are returned
**scalar-first** ``[qw, qx, qy, qz]`` (the framework's one convention, see DESIGN.md),
not the seed's ``(x, y, z, w)``.
"""

from __future__ import annotations

import math

import torch

_UP_AXES = ("x", "y", "z")


def grid_transforms(
    N: int, spacing: float = 1.0, up_axis: str = "z", device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Create a centered grid of ``N`` transforms.

    Args:
        N: number of instances, ``>= 1``.
        spacing: distance between neighbouring grid positions [m], ``>= 0``.
        up_axis: ``"z"`` (default), ``"y"`` or ``"x"``; the grid spans the two other axes and
            the up coordinate is 0.
        device: torch device of the returned tensors.

    Returns:
        ``(pos, quat)``: ``pos`` float32 ``(N, 3)`` [m]; ``quat`` float32 ``(N, 4)`` identity
        rotations, scalar-first ``[qw, qx, qy, qz]``.

    Raises:
        ValueError: ``N < 1``, a negative or non-finite ``spacing``, or an unknown ``up_axis``.

    >>> pos, quat = grid_transforms(4, spacing=2.0)
    >>> pos.tolist()
    [[1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, -1.0, 0.0], [-1.0, 1.0, 0.0]]
    >>> quat[0].tolist()
    [1.0, 0.0, 0.0, 0.0]
    """
    if isinstance(N, bool) or not isinstance(N, int) or N < 1:
        raise ValueError(f"grid_transforms: N must be an int >= 1, got {N!r}")
    if not math.isfinite(spacing) or spacing < 0:
        raise ValueError(f"grid_transforms: spacing must be a finite number >= 0 [m], got {spacing!r}")
    if up_axis not in _UP_AXES:
        raise ValueError(f"grid_transforms: up_axis must be one of {_UP_AXES}, got {up_axis!r}")
    num_cols = math.ceil(math.sqrt(N))
    num_rows = math.ceil(N / num_cols)
    idx = torch.arange(N, dtype=torch.float64)
    row = torch.div(idx, num_cols, rounding_mode="floor")
    col = idx - row * num_cols
    # Row index runs along -first axis, column along +second axis, both centred on 0.
    a = -(row - (num_rows - 1) / 2.0) * spacing
    b = (col - (num_cols - 1) / 2.0) * spacing
    zero = torch.zeros_like(a)
    axes = {"z": (a, b, zero), "y": (b, zero, a), "x": (zero, a, b)}[up_axis]
    pos = torch.stack(axes, dim=1).to(dtype=torch.float32, device=device)
    quat = torch.zeros(N, 4, dtype=torch.float32, device=device)
    quat[:, 0] = 1.0
    return pos, quat
