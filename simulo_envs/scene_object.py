"""``SceneObject``: what a Prop and a Robot share as things the Scene registers and attaches.

A scene object is authored (plain data), registered at a prototype path (``_bind``), built by
the backend (``_attach``, in the subclass) and, when its env closes or rebuilds its scene,
detached (``_detach``). Until attached and after detached, every simulation access raises
RuntimeError through ``_require_attached``.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.tensors import as_float_array, check_array_module, normalized_poses


class SceneObject:
    """Base of ``Prop`` and ``Robot``: name, prototype path, attach/detach bookkeeping."""

    _kind = "object"

    def __init__(self, name: Optional[str]):
        self._name = name
        self._path: Optional[str] = None
        self._backend = None
        self._detached: Optional[str] = None
        self._gid: Optional[int] = None
        self._num_envs = 0
        self._device = torch.device("cpu")

    @property
    def name(self) -> Optional[str]:
        """The object's name: as authored, or the last segment of the path the scene gave it."""
        return self._name

    @property
    def path(self) -> Optional[str]:
        """Scene path of the prototype (e.g. ``"/World/Block"``); None until added to a scene.
        The clone in env ``i`` lives at ``/World/envs/env_{i}/Block``."""
        return self._path

    @property
    def num_envs(self) -> int:
        """Number of envs (0 until attached)."""
        return self._num_envs

    def state_in(self, xp):
        """The live state accessor whose reads are arrays of the module ``xp``: ``torch`` ->
        ``state`` itself (fresh tensors on the env's device); ``numpy`` -> fresh float32 numpy
        arrays, the same layouts (what a task's step hooks read on the CPU fast path,
        ``BaseEnv.xp``; a GPU backend's tensors are copied to the host).

        Raises:
            ValueError: ``xp`` is neither ``torch`` nor ``numpy``.
        """
        if xp is torch:
            return self._state
        if xp is not np:
            check_array_module(xp)
        return self._numpy_state

    @property
    def is_attached(self) -> bool:
        """True while the object is built in a live simulation."""
        return self._backend is not None

    def _bind(self, path: str, name: str) -> None:
        self._path = path
        if self._name is None:
            self._name = name

    def _detach(self, reason: str) -> None:
        self._backend = None
        self._detached = reason

    def _require_attached(self):
        if self._backend is None:
            if self._detached:
                raise RuntimeError(f"{self._kind} {self._name!r} is no longer simulated: {self._detached}")
            raise RuntimeError(
                f"{self._kind} {self._name!r} is not attached to a simulation yet: add it to a scene and "
                "create the env (read state from _initialize_episode onward)"
            )
        return self._backend

    def _write_rows(self, method: str, value, env_ids, what: str, width: int, pose: bool = False) -> None:
        """Validate ``value`` as ``(len(env_ids), width)`` rows (poses: quaternions normalised)
        and hand them to ``backend.<method>(gid, ids, rows)``; nothing is written on bad input.

        Raises:
            RuntimeError: not attached. TypeError/IndexError/ValueError: bad ``env_ids``.
            ValueError: wrong shape, NaN/inf or (poses) a zero quaternion.
        """
        backend = self._require_attached()
        ids = normalize_env_ids(env_ids, self._num_envs)
        values = as_float_array(value, (len(ids), width), what)
        if pose:
            normalized_poses(values, what)
        if len(ids):
            getattr(backend, method)(self._gid, ids, values)
