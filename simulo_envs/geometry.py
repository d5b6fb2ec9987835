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


def quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton product ``a * b`` of quaternions ``(..., 4)`` ``[qw, qx, qy, qz]``."""
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack((
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ), dim=-1)


def quat_conj(q: torch.Tensor) -> torch.Tensor:
    """Conjugate (the inverse of a unit quaternion), ``(..., 4)``."""
    return q * q.new_tensor([1.0, -1.0, -1.0, -1.0])


def quat_to_rotvec(q: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Rotation vector (axis * angle [rad], angle in [0, pi]) of unit quaternions ``(..., 4)``."""
    q = torch.where(q[..., :1] < 0, -q, q)  # same rotation, w >= 0: angle <= pi
    v = q[..., 1:]
    s = v.norm(dim=-1, keepdim=True)
    angle = 2.0 * torch.atan2(s, q[..., :1])
    # angle / s -> 2 as s -> 0 (small-angle limit of 2 atan2(s, w) / s with w -> 1).
    scale = torch.where(s > eps, angle / s.clamp_min(eps), torch.full_like(s, 2.0))
    return v * scale


def rotvec_to_quat(r: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Unit quaternions ``(..., 4)`` of rotation vectors ``(..., 3)`` (axis * angle [rad])."""
    angle = r.norm(dim=-1, keepdim=True)
    half = 0.5 * angle
    # sin(half) / angle -> 0.5 as angle -> 0.
    k = torch.where(angle > eps, torch.sin(half) / angle.clamp_min(eps), torch.full_like(angle, 0.5))
    return torch.cat([torch.cos(half), r * k], dim=-1)
