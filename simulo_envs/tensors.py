"""Validation of user tensors before they reach the simulator (one helper, used by every writer),
and the small conversions between the backends' arrays, torch tensors and numpy arrays that the
hot paths share."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from types import SimpleNamespace
from typing import Any

import math

import numpy as np
import torch


MAX_ABS_VALUE = 1e30
"""Largest magnitude a write may carry. Finite but absurd values (a 1e6 m/s velocity) are
accepted and left to the per-step fault checks (``simulo_envs/envs/faults.py``); beyond this
one, PhysX's float32 arithmetic overflows: measured, a body placed at x = 2e38 m turned every
env of a shared PhysX system NaN within one step (1e38 m did not). 1e30 keeps eight orders of
magnitude of margin and is still far beyond any physical quantity in SI units."""


def as_float_array(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Return ``value`` as a finite float32 numpy array of exactly ``shape`` (a fresh copy).

    Accepts torch tensors (any device), numpy arrays and nested sequences; where ``shape`` is
    ``(1, D)`` (one env) a single row ``(D,)`` is accepted too.

    Raises:
        TypeError: ``value`` is not numeric.
        ValueError: the shape differs from ``shape``, an entry is NaN or inf, or its magnitude
            exceeds ``MAX_ABS_VALUE`` (1e30).
    """
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            raise TypeError(f"{name} must be real-valued, got dtype {value.dtype}")
        arr = value.detach().to("cpu", torch.float32).numpy()
    else:
        try:
            raw = np.asarray(value)
            if raw.dtype.kind not in "fiub":
                raise TypeError(f"dtype {raw.dtype} is not a real number type")
            arr = raw.astype(np.float32)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a numeric array of shape {shape}: {exc}") from None
    if len(shape) == 2 and shape[0] == 1 and arr.shape == shape[1:]:
        arr = arr.reshape(shape)  # one env: a single row is accepted
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(arr.shape)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf; nothing was written")
    if arr.size and np.abs(arr).max() > MAX_ABS_VALUE:
        raise ValueError(f"{name} holds {float(arr.flat[np.abs(arr).argmax()]):.3g}, beyond +-{MAX_ABS_VALUE:g} "
                         "(PhysX's float32 arithmetic overflows near 3.4e38); nothing was written")
    return np.array(arr, dtype=np.float32, copy=True)


MAX_STEP_COUNT = 2**31 - 2
"""Largest step count a writer accepts: the counters are int32 and the next step adds one."""


def as_step_counts(value: Any, rows: int, name: str) -> np.ndarray:
    """Return ``value`` as int32 step counts ``(rows,)`` in ``[0, MAX_STEP_COUNT]`` (a fresh copy).

    Accepts torch tensors (any device), numpy arrays and sequences of integers; floats are
    accepted when every entry is a whole number (``3.0``), as ``torch.randint_like`` on a float
    tensor gives them.

    Raises:
        TypeError: ``value`` is not an integer or float array (bool, complex, strings, None).
        ValueError: the shape is not ``(rows,)``, an entry is NaN, inf, not a whole number,
            negative or above ``MAX_STEP_COUNT``.
    """
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        value = (value.double() if value.is_floating_point() else value).numpy()  # bfloat16 has no numpy twin
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged input and the like
        raise TypeError(f"{name} must be integer step counts of shape ({rows},): {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be integer step counts of shape ({rows},), got dtype {arr.dtype}")
    if arr.shape != (rows,):
        raise ValueError(f"{name} must have shape ({rows},), got {tuple(arr.shape)}")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or inf; nothing was written")
        fractional = arr[arr != np.round(arr)]
        if fractional.size:
            raise ValueError(f"{name} must be whole numbers of steps, got {float(fractional[0])}; nothing was written")
    if arr.size and (arr.min() < 0 or arr.max() > MAX_STEP_COUNT):
        bad = arr[(arr < 0) | (arr > MAX_STEP_COUNT)][0]
        raise ValueError(f"{name} must be step counts in [0, {MAX_STEP_COUNT}], got {bad.item()}; "
                         "nothing was written")
    return arr.astype(np.int32)


def normalized_poses(pose: np.ndarray, name: str) -> np.ndarray:
    """Normalise the quaternions of poses ``(k, 7)`` ``[x, y, z, qw, qx, qy, qz]`` in place.

    Raises:
        ValueError: a quaternion with norm below 1e-6.
    """
    norms = np.linalg.norm(pose[:, 3:7], axis=1)
    if pose.shape[0] and norms.min() < 1e-6:
        raise ValueError(f"{name}: quaternion [qw, qx, qy, qz] of row {int(norms.argmin())} is zero; nothing was written")
    pose[:, 3:7] /= norms[:, None]
    return pose


def to_device(array, device: torch.device) -> torch.Tensor:
    """``array`` (a backend's numpy array or torch tensor) as a tensor on ``device``: the same
    memory where it already is there (no copy), else a copy."""
    tensor = array if isinstance(array, torch.Tensor) else torch.from_numpy(array)
    return tensor if tensor.device == device or (device.type == "cpu" and tensor.device.type == "cpu") else tensor.to(device)


def to_xp(array, xp, device: torch.device):
    """``array`` (a backend's numpy array or torch tensor) as an array of the module ``xp``:
    ``torch`` -> a tensor on ``device`` (``to_device``); ``numpy`` -> a numpy array (the same
    memory for a numpy array or a CPU tensor, a host copy of a GPU tensor).

    This is how state reads serve the task hooks of both step paths (``BaseEnv.xp``): torch
    everywhere, numpy on the CPU fast path.

    Raises:
        ValueError: ``xp`` is neither ``torch`` nor ``numpy``.
    """
    if xp is torch:
        return to_device(array, device)
    if xp is np:
        return array if isinstance(array, np.ndarray) else array.numpy(force=True)
    check_array_module(xp)


def check_array_module(xp) -> None:
    """Raise ValueError unless ``xp`` is the ``torch`` or the ``numpy`` module."""
    if xp is not torch and xp is not np:
        raise ValueError(f"xp must be the torch or the numpy module, got {xp!r}")


def as_float32(mask):
    """``mask`` (bool or numeric; numpy or torch) as a float32 array of the same kind: 1.0 where
    True. A new array."""
    return mask.to(torch.float32) if isinstance(mask, torch.Tensor) else mask.astype(np.float32)


def any_true(mask: torch.Tensor) -> bool:
    """``bool(mask.any())`` without the device round trip machinery on CPU (about 8x cheaper
    there, which matters on the per-step path of small batches)."""
    if mask.device.type == "cpu":
        return bool(mask.numpy().any())
    return bool(mask.any())


def all_finite(array: np.ndarray) -> bool:
    """True when every entry of the numpy ``array`` is finite (no NaN, no inf).

    Small arrays (up to ``_DOT_MAX`` entries, single-threaded in BLAS) take one dot product
    first: the sum of squares is finite only when every entry is (NaN and inf propagate, and
    squares never cancel), and unlike a numpy ufunc reduction it raises no floating-point warning
    or error when finite values overflow it, whatever ``np.errstate`` says. A non-finite result
    (which may be such an overflow) and large arrays get the exact ``np.isfinite`` test.
    """
    if array.size <= _DOT_MAX and math.isfinite(_vdot(array, array)):
        return True
    return bool(np.isfinite(array).all())


_DOT_MAX = 4096

# numpy's C functions under the public ``np.vdot``, ``np.count_nonzero``, ``np.einsum`` and
# ``np.concatenate``, which first run Python code (an ``__array_function__`` dispatcher, argument handling) that costs
# several times the C call on a few entries; the public functions where a numpy release moves them.
try:
    from numpy._core._multiarray_umath import (c_einsum as _c_einsum, concatenate as _concatenate,
                                               count_nonzero as _count_nonzero, vdot as _vdot)
except ImportError:  # numpy < 2
    try:
        from numpy.core._multiarray_umath import (c_einsum as _c_einsum, concatenate as _concatenate,
                                                  count_nonzero as _count_nonzero, vdot as _vdot)
    except ImportError:
        _c_einsum, _concatenate, _count_nonzero, _vdot = np.einsum, np.concatenate, np.count_nonzero, np.vdot


count_true = _count_nonzero
"""``count_true(array)``: ``np.count_nonzero(array)`` (every axis) of a numpy array, numpy's C
function itself (no Python frame on the per-step path)."""

einsum = _c_einsum
"""``einsum(subscripts, *operands)``: ``np.einsum`` without ``optimize``, numpy's C function
itself: the same computation and bits without the Python wrapper."""

concatenate = _concatenate
"""``concatenate(arrays, axis=..., dtype=...)``: ``np.concatenate``, numpy's C function itself."""


def tensor_constants(config: Any, device: torch.device) -> SimpleNamespace:
    """The float fields of a dataclass ``config`` as 0-dim float32 tensors on ``device``.

    Arithmetic between a tensor and a 0-dim tensor costs about half of the same arithmetic with
    a Python float, which has to be wrapped into a tensor on every call. Tasks use these
    constants in per-step math; the config itself stays the one source of the numbers.
    """
    if not is_dataclass(config):
        raise TypeError(f"tensor_constants needs a dataclass instance, got {type(config).__name__}")
    values = {f.name: getattr(config, f.name) for f in fields(config)}
    return SimpleNamespace(**{k: torch.tensor(float(v), dtype=torch.float32, device=device)
                              for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})


def numpy_constants(config: Any) -> SimpleNamespace:
    """The float fields of a dataclass ``config`` as float32 numpy scalars: ``tensor_constants``'
    twin for the numpy fast paths of tasks on CPU (the same numbers, the same float32 arithmetic)."""
    if not is_dataclass(config):
        raise TypeError(f"numpy_constants needs a dataclass instance, got {type(config).__name__}")
    values = {f.name: getattr(config, f.name) for f in fields(config)}
    return SimpleNamespace(**{k: np.float32(v) for k, v in values.items()
                              if isinstance(v, (int, float)) and not isinstance(v, bool)})
