"""Batched rigid-transform helpers on torch tensors or numpy arrays; quaternions scalar-first
``[qw, qx, qy, qz]``."""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.tensors import concatenate


def quat_axis(quat, axis: int):
    """Column ``axis`` (0 = x, 1 = y, 2 = z) of the rotation matrix of unit quaternions ``(N, 4)``:
    the body's local axis expressed in the world frame, ``(N, 3)`` (numpy or torch).

    Formula: the standard quaternion-to-matrix conversion (e.g. Shoemake, "Animating rotation
    with quaternion curves", SIGGRAPH 1985).
    """
    w, x, y, z = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    if axis == 0:
        cols = (1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y))
    elif axis == 1:
        cols = (2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x))
    elif axis == 2:
        cols = (2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y))
    else:
        raise ValueError(f"axis must be 0, 1 or 2, got {axis!r}")
    return _stack_last(cols)


def cos_angle(a, b, eps: float = 1e-9):
    """Cosine of the angle between row vectors ``a`` and ``b`` ``(N, 3)``; 0 where either is ~zero
    (numpy or torch)."""
    xp = _xp(a)
    dot = (a * b).sum(-1)
    norms = xp.sqrt((a * a).sum(-1) * (b * b).sum(-1))
    return xp.where(norms > eps, dot / xp.clip(norms, eps, None), 0.0)


def _xp(x):
    """The array module of ``x``: numpy for numpy arrays, torch for tensors. The quaternion
    helpers below are written once against the operations both share, so the CPU hot paths can
    run them on numpy arrays (a few times cheaper per call on small batches) and other devices on
    tensors."""
    return np if isinstance(x, np.ndarray) else torch


def _stack_last(columns: tuple):
    """``xp.stack(columns, -1)`` of same-shaped arrays (numpy or torch, as the first). On numpy it
    is the C ``concatenate`` of the columns with a new last axis, which is what ``np.stack`` does
    (the same values and dtype) without its Python layers (dispatcher, axis checks, list
    comprehensions): these helpers run every step on the CPU fast path (an SO-100's TCP pose)."""
    if isinstance(columns[0], np.ndarray):
        return concatenate([column[..., None] for column in columns], axis=-1)
    return torch.stack(columns, -1)


def _zeros_like(x):
    """Zeros of ``x``'s shape and dtype (numpy or torch); ``np.zeros`` itself on numpy (C, where
    ``np.zeros_like`` runs three Python functions)."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype)
    return torch.zeros_like(x)


def quat_mul(a, b):
    """Hamilton product ``a * b`` of quaternions ``(..., 4)`` ``[qw, qx, qy, qz]`` (numpy or torch)."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return _stack_last((
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ))


def quat_conj(q):
    """Conjugate (the inverse of a unit quaternion), ``(..., 4)`` (numpy or torch)."""
    out = -q
    out[..., 0] = q[..., 0]
    return out


def quat_to_rotvec(q, eps: float = 1e-8):
    """Rotation vector (axis * angle [rad], angle in [0, pi]) of unit quaternions ``(..., 4)``
    (numpy or torch)."""
    xp = _xp(q)
    q = xp.where(q[..., :1] < 0, -q, q)  # same rotation, w >= 0: angle <= pi
    v = q[..., 1:]
    s = xp.sqrt((v * v).sum(-1))[..., None]
    angle = 2.0 * xp.arctan2(s, q[..., :1])
    # angle / s -> 2 as s -> 0 (small-angle limit of 2 atan2(s, w) / s with w -> 1).
    small = s <= eps
    scale = xp.where(small, 2.0, angle / xp.where(small, 1.0, s))
    return v * scale


def rotvec_to_quat(r, eps: float = 1e-8):
    """Unit quaternions ``(..., 4)`` of rotation vectors ``(..., 3)`` (axis * angle [rad]),
    numpy or torch."""
    xp = _xp(r)
    angle = xp.sqrt((r * r).sum(-1))[..., None]
    half = 0.5 * angle
    small = angle <= eps
    # sin(half) / angle -> 0.5 as angle -> 0.
    k = xp.where(small, 0.5, xp.sin(half) / xp.where(small, 1.0, angle))
    return xp.concatenate([xp.cos(half), r * k], -1)


def quat_apply(q, v):
    """Rotate vectors ``v`` (N, 3) or (3,) by unit quaternions ``q`` (N, 4) ``[qw, qx, qy, qz]``:
    ``R(q) v``, (N, 3) (numpy or torch, as ``q``). Formula: ``v + 2 w (u x v) + 2 u x (u x v)``
    with ``u = (qx, qy, qz)`` (the expanded sandwich product ``q v q*``); numpy arrays go to
    ``quat_rotate`` (the same formula)."""
    if not isinstance(q, torch.Tensor):
        return quat_rotate(q, v)
    u, w = q[:, 1:], q[:, :1]
    v = v.expand_as(u)
    uv = torch.cross(u, v, dim=1)
    return v + 2 * (w * uv + torch.cross(u, uv, dim=1))


def quat_rotate(q, v):
    """Rotate vectors ``v`` ``(..., 3)`` by unit quaternions ``q`` ``(..., 4)`` ``[qw, qx, qy, qz]``
    (numpy or torch; ``v`` may be one vector for every ``q``): ``R(q) v``, the same formula as
    ``quat_apply`` written with the operations numpy and torch share."""
    u, w = q[..., 1:], q[..., :1]
    v = v + _zeros_like(u)
    uv = _cross(u, v)
    return v + 2 * (w * uv + _cross(u, uv))


def _cross(a, b):
    return _stack_last((a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                        a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                        a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]))


def offset_pose(pose, position, quaternion):
    """World poses ``(N, 7)`` of a frame fixed in each body at ``position`` (3,) [m] and
    ``quaternion`` (4,) ``[qw, qx, qy, qz]`` in the body frame, from the bodies' world poses
    ``pose`` ``(N, 7)`` (numpy or torch, the constants the same kind): ``p + R(q) t``,
    ``q * q_offset``."""
    q = pose[:, 3:7]
    parts = [pose[:, :3] + quat_rotate(q, position), quat_mul(q, quaternion + _zeros_like(q))]
    return concatenate(parts, axis=1) if isinstance(pose, np.ndarray) else torch.cat(parts, 1)


def shift_jacobian(jacobian, lever):
    """The Jacobian ``(N, 6, n)`` of a point rigidly attached to a body, from the body origin's
    Jacobian ``jacobian`` ``(N, 6, n)`` (rows 0-2 linear, 3-5 angular velocity, world frame) and
    the lever ``lever`` ``(N, 3)`` from the origin to the point, world frame [m]: the point moves
    at ``v + w x r``, so its linear rows are ``J_v - [r]x J_w``; the angular rows are the body's
    (rigid-body kinematics; e.g. Siciliano et al., "Robotics", 2009, eq. 3.31). Numpy or torch;
    a fresh array."""
    xp = _xp(jacobian)
    jv, jw = jacobian[:, :3], jacobian[:, 3:]
    r = lever[:, :, None]
    rx, ry, rz = r[:, 0], r[:, 1], r[:, 2]
    # [r]x J_w, row by row: (r x w) for each column w of J_w
    cross = xp.stack((ry * jw[:, 2] - rz * jw[:, 1], rz * jw[:, 0] - rx * jw[:, 2], rx * jw[:, 1] - ry * jw[:, 0]), 1)
    return xp.concatenate([jv - cross, jw], 1)


def norm(v):
    """Euclidean norm of each row of ``v`` (N, k), (N,) (numpy or torch, as ``v``)."""
    if isinstance(v, torch.Tensor):
        return v.norm(dim=1)
    return np.sqrt((v * v).sum(1))
