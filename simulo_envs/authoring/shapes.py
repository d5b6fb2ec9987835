"""Primitive shapes: the authoring data a ``Prop`` is built from. No simulator here.

Every shape carries its ``name``, its spawn ``pose`` (env-local frame: relative to the env
origin), its ``physics`` and its ``material``. Dimensions are full extents in metres.
Cylinders and capsules have their axis along the shape's local **z** axis (the backend
rotates SAPIEN's x-aligned primitives accordingly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from simulo_envs.authoring.physics import Material, Physics, _non_negative
from simulo_envs.authoring.pose import Pose, _finite_floats


def _positive(name: str, value: float) -> float:
    value = _non_negative(name, value)
    if value == 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


@dataclass(frozen=True)
class _Shape:
    name: str
    pose: Pose = field(default_factory=Pose)
    physics: Physics = field(default_factory=Physics.rigid)
    material: Material = field(default_factory=Material)
    collision: bool = True
    """False makes a visual-only marker: rendered, never touched by physics."""

    def _check_common(self) -> None:
        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise ValueError(f"shape name must be a non-empty string without '/', got {self.name!r}")
        for attr, kind in (("pose", Pose), ("physics", Physics), ("material", Material)):
            if not isinstance(getattr(self, attr), kind):
                raise ValueError(f"{type(self).__name__}.{attr} must be a {kind.__name__}, got {getattr(self, attr)!r}")

    @property
    def volume(self) -> float:  # pragma: no cover - overridden
        """Volume [m^3] (each shape computes its own)."""
        raise NotImplementedError

    @property
    def mass(self) -> float:
        """Total mass [kg]: the physics' mass, or density times ``volume``."""
        if self.physics.mass is not None:
            return self.physics.mass
        return self.physics.density * self.volume


@dataclass(frozen=True)
class Cuboid(_Shape):
    """A box of full extents ``size = (sx, sy, sz)`` [m], centred on its pose.

    Raises:
        ValueError: a size entry that is not a finite number > 0, or a bad name/pose/physics.
    """

    size: tuple[float, float, float] = (0.1, 0.1, 0.1)

    def __init__(self, name, size=(0.1, 0.1, 0.1), pose=None, physics=None, material=None, collision=True):
        _init(self, name, pose, physics, material, collision)
        size = _finite_floats("Cuboid.size", size, 3)
        object.__setattr__(self, "size", tuple(_positive("Cuboid.size entry [m]", s) for s in size))

    @property
    def volume(self) -> float:
        """Volume [m^3]."""
        return self.size[0] * self.size[1] * self.size[2]


@dataclass(frozen=True)
class Sphere(_Shape):
    """A ball of ``radius`` [m] centred on its pose."""

    radius: float = 0.05

    def __init__(self, name, radius=0.05, pose=None, physics=None, material=None, collision=True):
        _init(self, name, pose, physics, material, collision)
        object.__setattr__(self, "radius", _positive("Sphere.radius [m]", radius))

    @property
    def volume(self) -> float:
        """Volume [m^3]."""
        return 4.0 / 3.0 * math.pi * self.radius**3


@dataclass(frozen=True)
class Cylinder(_Shape):
    """A cylinder of ``radius`` [m] and full ``height`` [m] along its local z axis."""

    radius: float = 0.05
    height: float = 0.1

    def __init__(self, name, radius=0.05, height=0.1, pose=None, physics=None, material=None, collision=True):
        _init(self, name, pose, physics, material, collision)
        object.__setattr__(self, "radius", _positive("Cylinder.radius [m]", radius))
        object.__setattr__(self, "height", _positive("Cylinder.height [m]", height))

    @property
    def volume(self) -> float:
        """Volume [m^3]."""
        return math.pi * self.radius**2 * self.height


@dataclass(frozen=True)
class Capsule(_Shape):
    """A capsule of ``radius`` [m]; ``height`` [m] is the distance between the two cap
    centres (the cylinder part), along the local z axis. Total length: ``height + 2 * radius``."""

    radius: float = 0.05
    height: float = 0.1

    def __init__(self, name, radius=0.05, height=0.1, pose=None, physics=None, material=None, collision=True):
        _init(self, name, pose, physics, material, collision)
        object.__setattr__(self, "radius", _positive("Capsule.radius [m]", radius))
        object.__setattr__(self, "height", _positive("Capsule.height [m]", height))

    @property
    def volume(self) -> float:
        """Volume [m^3]."""
        return math.pi * self.radius**2 * self.height + 4.0 / 3.0 * math.pi * self.radius**3


def _init(shape, name, pose, physics, material, collision) -> None:
    object.__setattr__(shape, "name", name)
    object.__setattr__(shape, "pose", Pose() if pose is None else pose)
    object.__setattr__(shape, "physics", Physics.rigid() if physics is None else physics)
    object.__setattr__(shape, "material", Material() if material is None else material)
    object.__setattr__(shape, "collision", bool(collision))
    shape._check_common()


PrimitiveShape = Union[Cuboid, Sphere, Cylinder, Capsule]
"""Any of the four primitive shapes."""


def bounding_radius(shape: PrimitiveShape) -> float:
    """Radius [m] of the smallest ball about the shape's centre that contains the shape."""
    if isinstance(shape, Cuboid):
        return 0.5 * math.sqrt(sum(s * s for s in shape.size))
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, Cylinder):
        return math.hypot(shape.radius, shape.height / 2)
    if isinstance(shape, Capsule):
        return shape.radius + shape.height / 2
    raise TypeError(f"not a primitive shape: {type(shape).__name__}")
