"""The one place ``env_ids`` arguments are normalised."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import torch

EnvIds = Any
"""None (all envs), an int, a sequence of ints, a numpy int array, a torch integer tensor
on any device, or a bool mask of length ``num_envs``."""


def normalize_env_ids(env_ids: EnvIds, num_envs: int, name: str = "env_ids") -> np.ndarray:
    """Turn any accepted ``env_ids`` form into a 1-D int64 numpy array, in the given order.

    Args:
        env_ids: None (every env, ``0..num_envs-1``), an int, a sequence of ints, a numpy
            integer array, a torch integer tensor (any device), or a bool mask (numpy, torch or
            list) of shape ``(num_envs,)``.
        num_envs: number of envs.
        name: the argument's name, used in error messages.

    Returns:
        int64 array of shape ``(k,)`` (``k = 0`` for an empty list).

    Raises:
        TypeError: a float, string or other non-integer type, or a bool scalar.
        ValueError: more than one dimension, a bool mask whose length is not ``num_envs``,
            or duplicate ids.
        IndexError: an id outside ``[0, num_envs)``.
    """
    if env_ids is None:
        return np.arange(num_envs, dtype=np.int64)
    if isinstance(env_ids, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int, a sequence of ints or a bool mask of shape ({num_envs},); got a bool")
    if isinstance(env_ids, numbers.Integral):
        ids = np.array([int(env_ids)], dtype=np.int64)
    else:
        if isinstance(env_ids, torch.Tensor):
            arr = env_ids.detach().cpu().numpy()
        elif isinstance(env_ids, (str, bytes)):
            raise TypeError(f"{name} must be integer env indices, got a string {env_ids!r}")
        else:
            try:
                arr = np.asarray(env_ids)
            except Exception as exc:  # ragged input and the like
                raise TypeError(f"{name} could not be read as env indices: {exc}") from None
        if arr.ndim > 1:
            raise ValueError(f"{name} must be 1-D (k,), got shape {tuple(arr.shape)}")
        arr = arr.reshape(-1)
        if arr.dtype == np.bool_:
            if arr.shape[0] != num_envs:
                raise ValueError(f"{name} as a bool mask must have shape ({num_envs},), got ({arr.shape[0]},)")
            ids = np.flatnonzero(arr).astype(np.int64)
        elif arr.size == 0:
            ids = np.zeros(0, dtype=np.int64)
        elif np.issubdtype(arr.dtype, np.integer):
            ids = arr.astype(np.int64)
        else:
            raise TypeError(f"{name} must hold integers (or be a bool mask), got dtype {arr.dtype}")
    if ids.size:
        if ids.min() < 0 or ids.max() >= num_envs:
            bad = ids[(ids < 0) | (ids >= num_envs)][0]
            raise IndexError(f"{name} contains {int(bad)}, outside [0, {num_envs}) for {num_envs} envs")
        if np.unique(ids).size != ids.size:
            raise ValueError(f"{name} contains duplicates: {ids.tolist()}")
    return ids
