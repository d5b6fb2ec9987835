"""Flattening observation dicts and deriving Gymnasium spaces from a sample observation."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces

from simulo_envs.envs.hook_checks import observation_error


def flatten_obs(obs: dict) -> torch.Tensor:
    """Concatenate every leaf tensor of a nested dict along dim 1, depth first in key order.

    Leaves of shape ``(N,)`` count as one column; ``(N, a, b)`` leaves are flattened. Bool and
    integer leaves become float32. Returns float32 ``(N, D)``.

    Called on every step: it allocates no reference cycle (no recursive closure), so the tensors
    it touches are freed by reference counting, never left to the garbage collector.
    """
    leaves: list[torch.Tensor] = []
    _collect_leaves(obs, leaves)
    # torch.cat promotes bool and integer columns to the float32 of the others (one cast, not one
    # per leaf); a dict of integer leaves only is cast at the end.
    try:
        flat = torch.cat(leaves, dim=1)
    except RuntimeError as error:  # an entry without the env dimension: name it (hook_checks.py)
        raise (observation_error(obs) or error) from error
    return flat if flat.dtype == torch.float32 else flat.to(torch.float32)


def _collect_leaves(node, leaves: list) -> None:
    """Append ``node``'s leaves to ``leaves`` as ``(N, k)`` tensors, depth first."""
    if isinstance(node, dict):
        for value in node.values():
            _collect_leaves(value, leaves)
        return
    leaves.append(node if node.ndim == 2 else node.reshape(node.shape[0], -1))


def space_from_obs(obs, batched: bool) -> spaces.Space:
    """A Box (or Dict of Boxes) matching a batched observation; ``batched=False`` drops dim 0."""
    if isinstance(obs, dict):
        return spaces.Dict({k: space_from_obs(v, batched) for k, v in obs.items()})
    shape = tuple(obs.shape) if batched else tuple(obs.shape[1:])
    if obs.dtype == torch.bool:
        return spaces.Box(0, 1, shape=shape, dtype=np.bool_)
    if obs.dtype in (torch.uint8,):
        return spaces.Box(0, 255, shape=shape, dtype=np.uint8)
    if not torch.is_floating_point(obs):
        return spaces.Box(np.iinfo(np.int32).min, np.iinfo(np.int32).max, shape=shape, dtype=np.int32)
    return spaces.Box(-np.inf, np.inf, shape=shape, dtype=np.float32)
