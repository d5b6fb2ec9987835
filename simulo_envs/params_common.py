"""Validation shared by the per-env parameter writers (props, robots, lights, cameras).

Every writer takes ``env_ids`` (any ``normalize_env_ids`` form) and values for those envs, checks
them all with these helpers, and only then calls the backend: a NaN, an inf or a value out of the
parameter's range raises ValueError and nothing is written, in any env.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import torch

from simulo_envs.tensors import as_float_array


def per_env_values(value: Any, k: int, trailing: tuple[int, ...], name: str) -> np.ndarray:
    """``value`` as a fresh finite float32 array ``(k, *trailing)``.

    A scalar, or one row of shape ``trailing``, applies to every listed env; otherwise the shape
    must be exactly ``(k, *trailing)``.

    Raises:
        TypeError: not numeric (bools too: ``True`` is no mass). ValueError: another shape, or NaN/inf.
    """
    if _is_bool(value):
        raise TypeError(f"{name} must be numbers, got booleans; nothing was written")
    if isinstance(value, torch.Tensor):
        raw = value.detach().cpu()
        shape = tuple(raw.shape)
    else:
        raw = value
        try:
            shape = np.shape(value)
        except Exception:  # ragged input
            shape = None
    if shape is not None and k > 0 and (shape == () or (trailing and shape == trailing)):
        array = as_float_array(raw, shape, name)
        return np.ascontiguousarray(np.broadcast_to(array, (k, *trailing)), dtype=np.float32)
    return as_float_array(raw, (k, *trailing), name)


def _is_bool(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.dtype == torch.bool
    try:
        return np.asarray(value).dtype == np.bool_
    except Exception:  # ragged input: as_float_array reports it
        return False


def check_range(values: np.ndarray, name: str, unit: str, low: Optional[float] = None,
                high: Optional[float] = None, low_open: bool = False) -> None:
    """Raise ValueError naming the first entry of ``values`` outside ``[low, high]`` (``(low, high]``
    with ``low_open``); None means unbounded on that side."""
    bad = np.zeros(values.shape, dtype=bool)
    if low is not None:
        bad |= values <= low if low_open else values < low
    if high is not None:
        bad |= values > high
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{']' if high is not None else ')'}"
        raise ValueError(f"{name}{list(where)} = {float(values[where]):.6g}{' ' + unit if unit else ''} is outside "
                         f"{interval}; nothing was written")


def finite_float(value: Any, name: str) -> float:
    """``value`` as a finite float, or ValueError."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out
