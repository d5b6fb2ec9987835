"""What a ``Robot`` and an ``ArticulatedProp`` share: an articulation group in the backend.

Both hold a group id into the backend's articulation buffers (no SAPIEN object). This module
owns the reads (``ArticulationState``: qpos, qvel, root pose and velocity, link poses) and the
joint-space writes (``set_qpos`` with the joint-limit check, ``set_qvel``), so the two classes
add only what differs: drive targets and the TCP for a robot; spawn pose, default qpos and
root writes for an articulated prop.
"""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.physical_params import JointParamsMixin
from simulo_envs.scene_object import SceneObject
from simulo_envs.tensors import as_float_array, to_device, to_xp


def _direct_read(what: str, doc: str) -> property:
    """A read-only property of ``ArticulationState`` that reads the backend's ``what`` for the
    object's group, as ``ArticulationState._read(what)`` does, without the extra call."""

    def read(self):
        obj = self._obj
        backend = obj._backend
        if backend is None:
            obj._require_attached()  # raises
        value = getattr(backend, what)(obj._gid)
        if self._xp is np and type(value) is np.ndarray:  # the CPU fast path: the backend's fresh array
            return value
        return to_xp(value, self._xp, obj._device)

    return property(read, doc=doc)


class ArticulationState:
    """Live articulation state, batched over envs, world frame; every member is a fresh float32
    tensor on the object's device (fresh numpy arrays from ``state_in(numpy)``). Raises
    RuntimeError until the object is attached."""

    __slots__ = ("_obj", "_xp")

    def __init__(self, obj: "ArticulationObject", xp=torch):
        self._obj = obj
        self._xp = xp

    def _read(self, what: str, *args):
        obj = self._obj
        backend = obj._backend
        if backend is None:
            obj._require_attached()  # raises
        value = getattr(backend, what)(obj._gid, *args)
        if self._xp is np and type(value) is np.ndarray:  # the CPU fast path: the backend's fresh array
            return value
        return to_xp(value, self._xp, obj._device)

    # Read every step by the observation: a property of its own, _read's body with its name bound
    # (one Python frame less than calling _read).
    qpos = _direct_read("qpos", """(num_envs, dof) joint positions, rad (revolute) or m (prismatic); fresh.""")
    qvel = _direct_read("qvel", """(num_envs, dof) joint velocities, rad/s or m/s; fresh.""")

    @property
    def root_pose(self) -> torch.Tensor:
        """(num_envs, 7) root link pose ``[x, y, z, qw, qx, qy, qz]``, world frame; fresh."""
        return self._read("root_pose")

    @property
    def root_linear_velocity(self) -> torch.Tensor:
        """(num_envs, 3) root link ``[vx, vy, vz]``, world frame, m/s (zero for a fixed base); fresh."""
        return self._read("root_velocity")[:, :3]

    @property
    def root_angular_velocity(self) -> torch.Tensor:
        """(num_envs, 3) root link ``[wx, wy, wz]``, world frame, rad/s (zero for a fixed base); fresh."""
        return self._read("root_velocity")[:, 3:]

    def link_pose(self, link_name: str) -> torch.Tensor:
        """(num_envs, 7) pose of link ``link_name`` ``[x, y, z, qw, qx, qy, qz]``, world frame; fresh.

        Raises:
            KeyError: no such link (the message lists the link names).
        """
        return self._read("link_pose", self._obj.link_index(link_name))


class ArticulationObject(JointParamsMixin, SceneObject):
    """Base of ``Robot`` and ``ArticulatedProp``: joint and link names, limits, joint writes.

    Subclasses attach by registering a group with the backend and calling ``_bind_group``.
    """

    _kind = "articulation"

    @property
    def dof(self) -> int:
        """Number of active (moving) joints."""
        return self._info().dof

    @property
    def joint_names(self) -> list[str]:
        """Active joint names in qpos order."""
        return list(self._info().joint_names)

    @property
    def link_names(self) -> list[str]:
        """Link names in the backend's link order (the order ``link_index`` counts in)."""
        return list(self._info().link_names)

    @property
    def qlimits(self) -> torch.Tensor:
        """(dof, 2) joint limits ``[lower, upper]`` [m or rad]; fresh.

        Raises:
            RuntimeError: not attached.
        """
        self._require_attached()
        return self._qlimits.clone()

    def link_index(self, link_name: str) -> int:
        """Index of ``link_name`` in ``link_names``.

        Raises:
            KeyError: no such link (the message lists the link names).
        """
        names = self._info().link_names
        if link_name not in names:
            raise KeyError(f"{self._kind} {self._name!r} has no link {link_name!r}; links: {names}")
        return names.index(link_name)

    def set_qpos(self, qpos, env_ids: EnvIds = None) -> None:
        """Teleport joint positions ``(k, dof)`` [m or rad] for ``env_ids`` (None: all envs); link
        poses follow without a step.

        Raises:
            RuntimeError: not attached. TypeError/IndexError/ValueError: bad ``env_ids``.
            ValueError: wrong shape, NaN/inf, or a value outside the joint limits (``qlimits``,
                1e-4 tolerance); nothing is written.
        """
        backend = self._require_attached()
        ids = normalize_env_ids(env_ids, self._num_envs)
        values = as_float_array(qpos, (len(ids), self.dof), "qpos")
        limits = self._qlimits.cpu().numpy()
        outside = (values < limits[:, 0] - 1e-4) | (values > limits[:, 1] + 1e-4)
        if outside.any():
            row, joint = np.argwhere(outside)[0]
            raise ValueError(f"qpos[{row}, {joint}] = {values[row, joint]:.4g} is outside the limits of joint "
                             f"{self.joint_names[joint]!r} [{limits[joint, 0]:.4g}, {limits[joint, 1]:.4g}]; nothing was written")
        if len(ids):
            backend.set_qpos(self._gid, ids, values)
            self._after_qpos_write(ids)

    def _after_qpos_write(self, ids: np.ndarray) -> None:
        """Hook run after a ``set_qpos`` of ``ids`` (int64 numpy): nothing here; a Robot
        re-anchors the controllers that follow its arm."""

    def set_qvel(self, qvel, env_ids: EnvIds = None) -> None:
        """Set joint velocities ``(k, dof)`` [m/s or rad/s] for ``env_ids`` (None: all envs).

        Raises:
            RuntimeError: not attached. ValueError: wrong shape or NaN/inf; nothing is written.
        """
        self._write("set_qvel", qvel, env_ids, "qvel")

    def _write(self, method: str, value, env_ids, what: str) -> None:
        self._write_rows(method, value, env_ids, what, self.dof)

    def _bind_group(self, backend, gid: int, device) -> None:
        """Record the backend group ``gid`` this object now lives in."""
        self._gid = gid
        self._backend = backend
        self._num_envs = backend.num_envs
        self._device = torch.device(device)
        self._qlimits = to_device(backend.qlimits(gid), self._device)

    def _info(self):
        return self._require_attached().articulation_info(self._gid)
