"""Batched rigid-transform helpers on torch tensors; quaternions scalar-first ``[qw, qx, qy, qz]``."""

from __future__ import annotations

import torch


def quat_axis(quat: torch.Tensor, axis: int) -> torch.Tensor:
    """Column ``axis`` (0 = x, 1 = y, 2 = z) of the rotation matrix of unit quaternions ``(N, 4)``:
    the body's local axis expressed in the world frame, ``(N, 3)``.

    Formula: the standard quaternion-to-matrix conversion (e.g. Shoemake, "Animating rotation
    with quaternion curves", SIGGRAPH 1985).
    """
    w, x, y, z = quat.unbind(-1)
    if axis == 0:
        cols = (1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y))
    elif axis == 1:
        cols = (2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x))
    elif axis == 2:
        cols = (2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y))
    else:
        raise ValueError(f"axis must be 0, 1 or 2, got {axis!r}")
    return torch.stack(cols, dim=-1)


def cos_angle(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-9) -> torch.Tensor:
    """Cosine of the angle between row vectors ``a`` and ``b`` ``(N, 3)``; 0 where either is ~zero."""
    dot = (a * b).sum(-1)
    norms = a.norm(dim=-1) * b.norm(dim=-1)
    return torch.where(norms > eps, dot / norms.clamp_min(eps), torch.zeros_like(dot))
