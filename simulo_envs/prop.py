"""``Prop``: a rigid body whose batched pose and velocity you read and write per ``env_ids``.

Implements the ``simulo-prop.txt`` contract. A Prop never holds a SAPIEN object: once the
scene attaches it, it holds a group id in the backend's state buffers, and every read and
write goes through the backend (docs/architecture.md).
"""

from __future__ import annotations

import inspect
from typing import Optional, Protocol, Sequence, runtime_checkable

import numpy as np
import torch

from simulo_envs.authoring import Capsule, Cuboid, Cylinder, PrimitiveShape, Sphere
from simulo_envs.authoring.scaling import scaled_shape
from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.physical_params import PropParamsMixin
from simulo_envs.scene_object import SceneObject
from simulo_envs.tensors import to_xp

_SHAPE_TYPES = (Cuboid, Sphere, Cylinder, Capsule)


class _StaticProtocolMeta(type(Protocol)):
    """``isinstance`` against a runtime-checkable protocol without running properties.

    Before Python 3.12, ``isinstance(x, P)`` evaluates each protocol member with ``hasattr``,
    which runs properties; ``Prop.default_pose`` raises RuntimeError before attach, so an
    unattached Prop would make ``isinstance`` raise. Members are looked up statically instead,
    as Python 3.12 does.
    """

    def __instancecheck__(cls, instance) -> bool:
        if cls.__dict__.get("_is_protocol", False):
            members = [m for m in cls.__dict__ if not m.startswith("_")]
            return all(_has_static(instance, m) for m in members)
        return super().__instancecheck__(instance)


def _has_static(obj, name: str) -> bool:
    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return False
    return True


@runtime_checkable
class PropStateProtocol(Protocol, metaclass=_StaticProtocolMeta):
    """The live state of a prop: batched over envs, world frame, fresh tensors."""

    @property
    def pose(self) -> torch.Tensor:
        """(num_envs, 7) ``[x, y, z, qw, qx, qy, qz]``, world frame, m."""

    @property
    def linear_velocity(self) -> torch.Tensor:
        """(num_envs, 3) centre-of-mass velocity, world frame, m/s."""

    @property
    def angular_velocity(self) -> torch.Tensor:
        """(num_envs, 3) angular velocity, world frame, rad/s."""


@runtime_checkable
class PropProtocol(Protocol, metaclass=_StaticProtocolMeta):
    """The prop authoring contract (``simulo-prop.txt``).

    ``isinstance(obj, PropProtocol)`` checks member names only (statically: no property runs).
    """

    @property
    def shape(self) -> PrimitiveShape:
        """The primitive shape the prop spawns (its pose: the env-local spawn pose)."""

    @property
    def name(self) -> Optional[str]:
        """The prop's name: as authored, or the last segment of its path."""

    @property
    def path(self) -> Optional[str]:
        """The prototype's prim path (``"/World/Block"``; env ``i``'s clone: ``/World/envs/env_{i}/Block``); None
        before it is added."""

    @property
    def state(self) -> PropStateProtocol:
        """The live state (``PropStateProtocol``). Raises RuntimeError before the prop is attached."""

    @property
    def default_pose(self) -> torch.Tensor:
        """(num_envs, 7) spawn pose per env, world frame (the shape's pose plus the env's origin)."""

    def set_pose(self, pose, env_ids=None) -> None:
        """Teleport ``env_ids`` (None: all) to ``pose`` ((N, 7), world frame). Raises ValueError on a bad shape or
        id."""

    def set_velocity(self, velocity, env_ids=None) -> None:
        """Set ``[vx, vy, vz, wx, wy, wz]`` ((N, 6), world frame, m/s and rad/s) of ``env_ids`` (None: all)."""

    def reset(self, env_ids=None) -> None:
        """Back to ``default_pose`` at rest in ``env_ids`` (None: all)."""


class PropState:
    """Live prop state, read straight through to the backend's buffers.

    Every member returns a fresh float32 tensor on the env's device (writing to it changes
    nothing in the simulation) and raises RuntimeError until the prop is attached. The accessor
    ``Prop.state_in(numpy)`` returns fresh numpy arrays instead, with the same layouts.
    """

    __slots__ = ("_prop", "_xp")

    def __init__(self, prop: "Prop", xp=torch):
        self._prop = prop
        self._xp = xp

    def _body(self, columns: slice):
        prop = self._prop
        backend = prop._backend
        if backend is None:
            prop._require_attached()  # raises
        rows = backend.rigid_state(prop._gid)[:, columns]
        if self._xp is np and type(rows) is np.ndarray:  # the CPU fast path: the backend's fresh rows
            return rows
        return to_xp(rows, self._xp, prop._device)

    @property
    def pose(self) -> torch.Tensor:
        """(num_envs, 7) ``[x, y, z, qw, qx, qy, qz]``, world frame, m; fresh."""
        prop = self._prop  # _body(slice(0, 7)), inline: tasks read it every step
        backend = prop._backend
        if backend is None:
            prop._require_attached()  # raises
        rows = backend.rigid_state(prop._gid)[:, :7]
        if self._xp is np and type(rows) is np.ndarray:
            return rows
        return to_xp(rows, self._xp, prop._device)

    @property
    def linear_velocity(self) -> torch.Tensor:
        """(num_envs, 3) ``[vx, vy, vz]`` of the centre of mass, world frame, m/s; fresh."""
        return self._body(slice(7, 10))

    @property
    def angular_velocity(self) -> torch.Tensor:
        """(num_envs, 3) ``[wx, wy, wz]``, world frame, rad/s; fresh."""
        return self._body(slice(10, 13))


class Prop(PropParamsMixin, SceneObject):
    """A rigid body built from one primitive shape, cloned into every env.

    Args:
        shape: a ``Cuboid``, ``Sphere``, ``Cylinder`` or ``Capsule``. Its ``pose`` is the spawn
            pose in the env-local frame (relative to each env's origin).

    Raises:
        TypeError: ``shape`` is not one of the primitive shapes.

    Example (the seed's franka_lift)::

        block = Prop(Cuboid(name="Block", size=(0.05, 0.05, 0.05),
                            pose=Pose(position=[0.5, 0.0, 0.025]), physics=Physics.rigid(mass=0.05)))
        scene.add(block, at="/World/Block")
    """

    _kind = "Prop"

    def __init__(self, shape: PrimitiveShape):
        if not isinstance(shape, _SHAPE_TYPES):
            raise TypeError(f"Prop needs a Cuboid, Sphere, Cylinder or Capsule, got {type(shape).__name__}")
        super().__init__(shape.name)
        self._shape = shape
        self._state = PropState(self)
        self._numpy_state = PropState(self, np)
        self._default_pose: Optional[torch.Tensor] = None

    # ------------------------------------------------------------------ identity
    @property
    def shape(self) -> PrimitiveShape:
        """The primitive shape this prop spawns; its pose is the env-local spawn pose."""
        return self._shape

    # ------------------------------------------------------------------ state
    @property
    def state(self) -> PropState:
        """The live state accessor (the same object on every access); see ``PropState``."""
        return self._state

    @property
    def default_pose(self) -> torch.Tensor:
        """(num_envs, 7) spawn pose ``[x, y, z, qw, qx, qy, qz]`` in the world frame: the shape's
        pose offset by each env's origin. A fresh tensor.

        Raises:
            RuntimeError: the prop is not attached yet.
        """
        self._require_attached()
        return self._default_pose.clone()

    def set_pose(self, pose, env_ids: EnvIds = None) -> None:
        """Teleport the prop (not control), world frame.

        Args:
            pose: ``(num_envs, 7)``, or ``(len(env_ids), 7)`` when ``env_ids`` is given, as
                ``[x, y, z, qw, qx, qy, qz]``; quaternions are normalised before writing.
            env_ids: envs to write (any form of ``normalize_env_ids``); None writes all.

        Raises:
            RuntimeError: not attached. TypeError/IndexError/ValueError: bad ``env_ids``.
            ValueError: wrong shape, NaN/inf, or a zero quaternion; nothing is written.
        """
        self._write_rows("set_rigid_pose", pose, env_ids, "pose", 7, pose=True)

    def set_velocity(self, velocity, env_ids: EnvIds = None) -> None:
        """Set the prop's velocity (not control), world frame.

        Args:
            velocity: ``(num_envs, 6)`` or ``(len(env_ids), 6)`` as ``[vx, vy, vz, wx, wy, wz]``
                (m/s, rad/s). Kinematic and static props keep zero velocity.
            env_ids: envs to write; None writes all.

        Raises:
            RuntimeError: not attached. ValueError: wrong shape or NaN/inf; nothing is written.
        """
        self._write_rows("set_rigid_velocity", velocity, env_ids, "velocity", 6)

    def reset(self, env_ids: EnvIds = None) -> None:
        """Return the prop to ``default_pose`` with zero velocity in ``env_ids`` (None: all)."""
        self._require_attached()
        ids = normalize_env_ids(env_ids, self._num_envs)
        self.set_pose(self._default_pose[torch.from_numpy(ids)], ids)
        self.set_velocity(np.zeros((len(ids), 6), dtype=np.float32), ids)

    # ------------------------------------------------------------------ scene plumbing
    @property
    def variants(self) -> tuple[PrimitiveShape, ...]:
        """The shapes this prop may spawn as: ``(shape,)`` for a plain Prop."""
        return (self._shape,)

    def _attach(self, backend, env_origins: torch.Tensor, device: torch.device,
                variant_of_env: Optional[Sequence[int]] = None) -> None:
        """Build the prop in every env; ``variant_of_env[i]`` picks env ``i``'s shape (default 0)."""
        n = backend.num_envs
        variant_of_env = [0] * n if variant_of_env is None else [int(v) for v in variant_of_env]
        shapes = self._built_shapes([self.variants[v] for v in variant_of_env])  # set_scale applied
        self._num_envs = n
        self._device = torch.device(device)
        self._variant_of_env = torch.tensor(variant_of_env, dtype=torch.long)
        self._gid = backend.add_rigid(shapes, self._name or "prop")
        self._origins_cpu = env_origins.to("cpu", torch.float32).clone()
        default = torch.tensor([s.pose.to_list() for s in shapes], dtype=torch.float32)
        default[:, :3] += self._origins_cpu
        self._default_pose = default.to(self._device)
        self._backend = backend

    def _rebuild_scaled(self, ids: np.ndarray, factors: np.ndarray) -> None:
        """Rebuild the bodies of envs ``ids`` (int64 (k,)) at ``factors`` (float32 (k,)) of their
        variant's authored shape (``set_scale`` after the build); updates ``scale`` and
        ``default_pose`` of those rows."""
        variants = self._variant_of_env.tolist()
        shapes = [self.variants[variants[i]] for i in ids.tolist()]
        shapes = [s if f == 1.0 else scaled_shape(s, float(f)) for s, f in zip(shapes, factors.tolist())]
        self._backend.rebuild_rigid(self._gid, ids, shapes)
        rows = torch.from_numpy(ids)
        self._built_scale[rows] = torch.from_numpy(factors)
        self._dynamic[ids] = [s.collision and s.physics.kind == "rigid" for s in shapes]
        default = torch.tensor([s.pose.to_list() for s in shapes], dtype=torch.float32)
        default[:, :3] += self._origins_cpu[rows]
        self._default_pose[rows.to(self._device)] = default.to(self._device)

    def __repr__(self) -> str:
        return f"Prop(name={self._name!r}, path={self._path!r}, shape={type(self._shape).__name__})"


class MultiShapeProp(Prop):
    """A prop whose shape varies per env: each env spawns one of ``shapes`` (a heterogeneous scene).

    Which env gets which variant is decided by the scene's clone plan (``CloneCfg`` strategy:
    ``"sequential"`` gives env ``i`` variant ``i % len(shapes)``, ``"random"`` draws per env from a
    seeded generator). Everything else is a ``Prop``: ``state``, ``default_pose`` (each env's own
    variant's spawn pose plus its origin), ``set_pose``, ``reset`` keep one row per env.

    Args:
        name: prop name (the scene path's last segment by default).
        shapes: the variants, each a primitive shape with its own spawn pose and physics.

    Raises:
        ValueError: no shapes. TypeError: a non-primitive shape.
    """

    def __init__(self, name: str, shapes: Sequence[PrimitiveShape]):
        shapes = tuple(shapes)
        if not shapes:
            raise ValueError("MultiShapeProp needs at least one shape")
        super().__init__(shapes[0])
        for shape in shapes:
            if not isinstance(shape, _SHAPE_TYPES):
                raise TypeError(f"MultiShapeProp shapes must be primitive shapes, got {type(shape).__name__}")
        self._shapes = shapes
        self._name = name

    @property
    def variants(self) -> tuple[PrimitiveShape, ...]:
        """The shapes envs choose from, in variant-index order."""
        return self._shapes

    @property
    def variant_of_env(self) -> torch.Tensor:
        """int64 (num_envs,): the variant index each env spawned; fresh.

        Raises:
            RuntimeError: not attached yet.
        """
        self._require_attached()
        return self._variant_of_env.clone()

    def shape_of_env(self, env: int) -> PrimitiveShape:
        """The shape env ``env`` spawned."""
        return self._shapes[int(self.variant_of_env[env])]
