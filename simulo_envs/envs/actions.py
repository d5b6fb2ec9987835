"""Validating and clipping batched actions, once for every env flavour (in-process or sharded)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from simulo_envs.tensors import all_finite

_FLOAT32 = np.dtype(np.float32)


def clip_action(action, num_envs: int, low: np.ndarray, high: np.ndarray,
                out: Optional[np.ndarray] = None) -> np.ndarray:
    """Check a batched action and clip it to ``[low, high]``.

    Args:
        action: ``(num_envs, dim)`` (or ``(dim,)`` when ``num_envs == 1``): a torch tensor
            (a non-CPU one is copied to the CPU), a numpy array or nested sequences, of a real
            number type.
        low / high: float32 ``(dim,)`` bounds (the action space's).
        out: optional float32 ``(num_envs, dim)`` array to write the clipped action into
            (the sharded env's shared action buffer); written only once everything is checked.

    Returns:
        float32 ``(num_envs, dim)``: ``out`` when given, else a fresh array.

    Raises:
        ValueError: a non-numeric dtype, a wrong shape, or a NaN/inf entry (or one beyond the
            float32 range); the message says no env was stepped.

    On CPU the checks run in numpy: a tenth of the per-call cost of torch on tiny arrays.
    """
    dim = low.shape[0]
    if isinstance(action, torch.Tensor):
        # Every step's first test: each torch call here costs a microsecond or two on a CPU, so
        # the common case (a float32 CPU tensor without autograd) makes none it does not need
        # (``is_cpu``, not ``device.type``, which builds a device object; no ``detach`` without grad).
        dtype = action.dtype
        if dtype is not torch.float32:
            if action.is_complex() or dtype == torch.bool:
                raise ValueError(f"action must be real-valued, got dtype {dtype}")
            if dtype is not torch.float64:
                action = action.to(torch.float32)
        if action.requires_grad:
            action = action.detach()
        if not action.is_cpu:
            action = action.cpu()
    try:
        array = action.numpy() if isinstance(action, torch.Tensor) else np.asarray(action)
        if array.dtype != _FLOAT32:  # float32 (the common case) needs no cast (a dtype, not np.float32: no conversion)
            if array.dtype.kind not in "fiu":
                raise TypeError(f"dtype {array.dtype} is not a real number type")
            with np.errstate(over="ignore", invalid="ignore"):
                array = array.astype(np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"action must be numeric with shape ({num_envs}, {dim}): {exc}") from None
    if array.shape == (dim,) and num_envs == 1:
        array = array[None]
    if array.shape != (num_envs, dim):
        raise ValueError(f"action must have shape ({num_envs}, {dim}), got {tuple(array.shape)}")
    if not all_finite(array):
        raise ValueError("action contains NaN or inf (or a value beyond float32 range); no env was stepped")
    # np.maximum/np.minimum: np.clip's Python wrapper costs more than the clipping on small arrays.
    return np.minimum(np.maximum(array, low), high, out=out)


def dict_action_bounds(space) -> Optional[dict]:
    """``{key: (low, high)}`` float32 bounds of a ``spaces.Dict`` of Boxes (several robots), or
    None for any other space."""
    from gymnasium import spaces

    if not isinstance(space, spaces.Dict):
        return None
    return {key: (box.low.astype(np.float32), box.high.astype(np.float32)) for key, box in space.spaces.items()}


def clip_dict_action(action, num_envs: int, bounds: dict, device) -> dict:
    """A dict action (``{key: (num_envs, dim_key)}``, the keys of ``bounds``), each part checked
    and clipped as ``clip_action`` does; returns float32 tensors on ``device``.

    Raises:
        ValueError: not a dict, other keys, or a bad part (the key is named).
    """
    if not isinstance(action, dict) or set(action) != set(bounds):
        got = sorted(action) if isinstance(action, dict) else type(action).__name__
        raise ValueError(f"action must be a dict with keys {sorted(bounds)} (one per robot), got {got}")
    out = {}
    for key, (low, high) in bounds.items():
        try:
            out[key] = torch.from_numpy(clip_action(action[key], num_envs, low, high)).to(device)
        except ValueError as exc:
            raise ValueError(f"action[{key!r}]: {exc}") from None
    return out
