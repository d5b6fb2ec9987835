"""Observation assembly for ``BaseEnv`` (a mixin): the task's hooks' dicts in ``obs_mode``'s
layout; flattening observation dicts; Gymnasium spaces derived from a sample observation.

Layout: ``{"agent": _get_obs_agent(), "extra": _get_obs_extra(info)}`` (state modes), plus
``"sensor_data"`` and ``"sensor_param"`` (visual modes, ``rendering.py``), or ``"pointcloud"``
(``pointcloud.py``); ``"state"`` flattens it depth first in key order (``flatten_obs``).

Image modes observe what a real robot's policy could: the cameras and the robot's own state
(``agent``, and of ``extra`` only the keys the task lists in ``image_obs_extra``: the TCP pose, and
a goal the cameras do not show, which is the task's command). The task's other extras (object
poses, contacts, vectors to objects) are privileged state, as in ManiSkill 3: an image mode carries them only when it names the state too,
``"rgb+state"`` (``agent`` and ``extra`` flattened into ``obs["state"]``, float32 (N, D), as in
ManiSkill) or ``"rgb+state_dict"`` (the ``agent`` and ``extra`` dicts whole). ``info`` carries
``evaluate()``'s values in every mode, for critics and logs.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
from gymnasium import spaces

from simulo_envs.envs.hook_checks import observation_error
from simulo_envs.envs.pointcloud import fuse_pointcloud
from simulo_envs.envs.sensors import is_pointcloud_mode, obs_mode_state
from simulo_envs.tensors import concatenate


class ObservationMixin:
    """``get_obs`` and its parts for ``BaseEnv``; the task supplies ``_get_obs_agent`` and
    ``_get_obs_extra`` (``base_env.py``), the rendering mixin the sensor data."""

    image_obs_extra: tuple[str, ...] = ()
    """Keys of the task's ``_get_obs_extra`` dict that image obs modes keep: the robot's own state
    (the TCP pose, computed from its joint positions) and a command the cameras do not show (a goal
    point hidden from the sensors). Every other extra is privileged state, which image modes carry
    only with ``+state`` / ``+state_dict`` (module docstring). A listed key the task does not
    return is ignored."""

    # ------------------------------------------------------------------ the state ObservationMixin owns
    _last_obs: Any = None
    """The observation ``reset`` or ``step`` last returned (all envs; ``_remember_obs``): a
    quarantined env repeats its rows (``faults.py``), a restore with ``obs`` patches it."""
    _init_raw_obs: Any
    """The observation the observation spaces were derived from (``_set_observation_space``)."""
    observation_space: spaces.Space
    single_observation_space: spaces.Space

    def _remember_obs(self, obs: Any) -> None:
        """Keep ``obs``, the observation ``reset`` or ``step`` returns, as ``_last_obs``."""
        self._last_obs = obs

    def _set_observation_space(self, obs: Any) -> None:
        """Derive ``single_observation_space`` / ``observation_space`` from the batched observation
        ``obs`` (tensors, nested dicts of them), which becomes ``_init_raw_obs``."""
        self._init_raw_obs = obs
        self.single_observation_space = space_from_obs(obs, batched=False)
        self.observation_space = space_from_obs(obs, batched=True)

    def get_obs(self, info: Optional[dict] = None, unflattened: bool = False):
        """The observation of every env in ``obs_mode``.

        Args:
            info: ``get_info()``'s dict (computed when None).
            unflattened: return the raw dict even in ``"state"`` mode (what the reward hooks get).
        """
        if info is None:
            info = self.get_info()
        if self.obs_mode == "none":
            return {}
        if not self._textures:
            obs = self._get_obs_state_dict(info)
        elif is_pointcloud_mode(self.obs_mode):
            obs = self._get_obs_with_sensor_data(info)
            obs["pointcloud"] = fuse_pointcloud(obs["sensor_data"], obs["sensor_param"])
            obs["sensor_data"] = {}  # consumed, as in the seed
        else:
            obs = self._get_obs_with_sensor_data(info)
        return obs if unflattened else self._flatten_raw_obs(obs)

    def _get_obs_state_dict(self, info: dict) -> dict:
        """``{"agent": _get_obs_agent(), "extra": _get_obs_extra(info)}``."""
        return {"agent": self._get_obs_agent(), "extra": self._get_obs_extra(info)}

    def _get_obs_with_sensor_data(self, info: dict, apply_texture_transforms: bool = True) -> dict:
        """The state dict plus ``"sensor_data"`` (images) and ``"sensor_param"`` (camera matrices);
        its ``extra`` keeps only ``image_obs_extra`` unless ``obs_mode`` names the state."""
        obs = self._get_obs_state_dict(info)
        if obs_mode_state(self.obs_mode) is None:
            keep = self.image_obs_extra
            obs["extra"] = {key: value for key, value in obs["extra"].items() if key in keep}
        obs["sensor_data"] = self._get_obs_sensor_data(apply_texture_transforms)
        obs["sensor_param"] = self.get_sensor_params()
        return obs

    def _flatten_raw_obs(self, obs: Any):
        """The raw observation as returned: flat float32 (N, D) in ``"state"`` mode; in an image
        mode with ``+state`` the ``agent`` and ``extra`` dicts replaced by their flat float32
        (N, D) ``obs["state"]`` (ManiSkill's layout); else unchanged."""
        if self.obs_mode == "state":
            return flatten_obs(obs)
        if self._textures and obs_mode_state(self.obs_mode) == "state":
            obs["state"] = flatten_obs({"agent": obs.pop("agent"), "extra": obs.pop("extra")})
        return obs


def flatten_obs(obs: dict):
    """Concatenate every leaf of a nested dict along dim 1, depth first in key order.

    Leaves of shape ``(N,)`` count as one column; ``(N, a, b)`` leaves are flattened. Bool and
    integer leaves become float32. Returns float32 ``(N, D)``: a tensor for tensor leaves, a numpy
    array for numpy leaves (the CPU fast path, ``fast_step.py``).

    Called on every step: it allocates no reference cycle (no recursive closure), so the tensors
    it touches are freed by reference counting, never left to the garbage collector.
    """
    try:  # the usual two levels of arrays ({"agent": {...}, "extra": {...}}) in one comprehension
        leaves = [leaf if leaf.ndim == 2 else leaf.reshape(leaf.shape[0], -1)
                  for group in obs.values() for leaf in dict.values(group)]
    except (TypeError, AttributeError):  # a leaf at the first level (not a dict) or a deeper dict (no .ndim)
        leaves = []
        _collect_leaves(obs, leaves)
    if leaves and isinstance(leaves[0], np.ndarray):
        return concatenate(leaves, axis=1, dtype=np.float32)
    # torch.cat promotes bool and integer columns to the float32 of the others (one cast, not one
    # per leaf); a dict of integer leaves only is cast at the end.
    try:
        flat = torch.cat(leaves, dim=1)
    except RuntimeError as error:  # an entry without the env dimension: name it (hook_checks.py)
        raise (observation_error(obs) or error) from error
    return flat if flat.dtype == torch.float32 else flat.to(torch.float32)


def proprio_columns(state: dict, image_obs_extra) -> np.ndarray:
    """int64 indices of the columns of ``flatten_obs(state)`` that an image mode observes (module
    docstring): every ``agent`` leaf and the ``extra`` keys listed in ``image_obs_extra``, in the
    flattened order.

    Args:
        state: ``{"agent": ..., "extra": ...}`` as observed: nested dicts of ``(N, ...)`` tensors
            or arrays (not a Gymnasium space: a ``Dict`` space may hold its keys sorted, in
            another order than the observation's).
        image_obs_extra: the task's ``image_obs_extra`` keys.
    """
    keep, columns, start = set(image_obs_extra), [], 0
    for part in ("agent", "extra"):
        for path, leaf in _leaf_paths(state[part], ""):
            width = int(np.prod(leaf.shape[1:])) if leaf.ndim > 1 else 1
            if part == "agent" or path.split("/")[0] in keep:
                columns.extend(range(start, start + width))
            start += width
    return np.asarray(columns, dtype=np.int64)


def _leaf_paths(node: dict, prefix: str):
    """``(path, leaf)`` of every leaf of a nested dict, depth first in key order (``flatten_obs``'s)."""
    for key, value in node.items():
        path = f"{prefix}/{key}" if prefix else key
        if isinstance(value, dict):
            yield from _leaf_paths(value, path)
        else:
            yield path, value


def _collect_leaves(node: dict, leaves: list) -> None:
    """Append the leaves of the dict ``node`` to ``leaves`` as ``(N, k)`` arrays, depth first."""
    for value in node.values():
        if isinstance(value, dict):
            _collect_leaves(value, leaves)
        else:
            leaves.append(value if value.ndim == 2 else value.reshape(value.shape[0], -1))


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
