"""``Physics`` and ``Material``: how a shape takes part in the simulation, as plain data."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from simulo_envs.authoring.pose import _finite_floats

BodyKind = Literal["rigid", "kinematic", "static"]

DEFAULT_DENSITY = 1000.0
"""Density [kg/m^3] used when ``Physics.rigid()`` is given neither mass nor density (water)."""


def _non_negative(name: str, value: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return value


@dataclass(frozen=True)
class Physics:
    """The rigid-body behaviour of a shape. Build it with the class methods.

    - ``Physics.rigid(mass=... | density=...)``: a dynamic body moved by PhysX.
    - ``Physics.kinematic()``: moved only by pose writes, pushes dynamic bodies, feels nothing.
    - ``Physics.static()``: never moves (fixtures).

    Attributes:
        kind: ``"rigid"``, ``"kinematic"`` or ``"static"``.
        mass: total mass [kg], or None when the density is given.
        density: [kg/m^3], or None when the mass is given.
    """

    kind: BodyKind = "rigid"
    mass: Optional[float] = None
    density: Optional[float] = DEFAULT_DENSITY

    def __post_init__(self) -> None:
        if self.kind not in ("rigid", "kinematic", "static"):
            raise ValueError(f"Physics.kind must be 'rigid', 'kinematic' or 'static', got {self.kind!r}")
        if self.mass is not None:
            mass = _non_negative("Physics mass [kg]", self.mass)
            if mass == 0:
                raise ValueError("Physics mass [kg] must be > 0 for a rigid body")
            object.__setattr__(self, "mass", mass)
        if self.density is not None:
            density = _non_negative("Physics density [kg/m^3]", self.density)
            if density == 0:
                raise ValueError("Physics density [kg/m^3] must be > 0")
            object.__setattr__(self, "density", density)
        if self.mass is not None and self.density is not None:
            raise ValueError("Physics takes a mass or a density, not both")

    @classmethod
    def rigid(cls, mass: Optional[float] = None, density: Optional[float] = None) -> "Physics":
        """A dynamic rigid body of total ``mass`` [kg] or uniform ``density`` [kg/m^3].

        With neither, the density is ``DEFAULT_DENSITY`` (1000 kg/m^3).

        Raises:
            ValueError: both given, or a value that is not a finite number > 0.
        """
        if mass is not None and density is not None:
            raise ValueError("Physics.rigid takes mass=... or density=..., not both")
        if mass is None and density is None:
            density = DEFAULT_DENSITY
        return cls(kind="rigid", mass=mass, density=density)

    @classmethod
    def kinematic(cls) -> "Physics":
        """A body moved only by pose writes (it pushes dynamic bodies but is never pushed)."""
        return cls(kind="kinematic", mass=None, density=DEFAULT_DENSITY)

    @classmethod
    def static(cls) -> "Physics":
        """A body that never moves after it is placed."""
        return cls(kind="static", mass=None, density=DEFAULT_DENSITY)


@dataclass(frozen=True)
class Material:
    """Surface properties of a shape.

    Attributes:
        static_friction: Coulomb static friction coefficient, >= 0 (PhysX default 0.3).
        dynamic_friction: Coulomb dynamic friction coefficient, >= 0.
        restitution: bounciness in [0, 1].
        color: RGBA in [0, 1], used by the renderer only.

    Raises:
        ValueError: negative or non-finite coefficients, restitution outside [0, 1], a colour
            that is not 3 or 4 numbers in [0, 1].
    """

    static_friction: float = 0.3
    dynamic_friction: float = 0.3
    restitution: float = 0.0
    color: tuple[float, ...] = (0.8, 0.8, 0.8, 1.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "static_friction", _non_negative("Material.static_friction", self.static_friction))
        object.__setattr__(self, "dynamic_friction", _non_negative("Material.dynamic_friction", self.dynamic_friction))
        restitution = _non_negative("Material.restitution", self.restitution)
        if restitution > 1:
            raise ValueError(f"Material.restitution must be in [0, 1], got {restitution}")
        object.__setattr__(self, "restitution", restitution)
        color: Sequence[float] = self.color
        n = len(color) if hasattr(color, "__len__") else -1
        if n == 3:
            color = (*color, 1.0)
        rgba = _finite_floats("Material.color (RGBA)", color, 4)
        if not all(0.0 <= c <= 1.0 for c in rgba):
            raise ValueError(f"Material.color entries must be in [0, 1], got {self.color!r}")
        object.__setattr__(self, "restitution", restitution)
        object.__setattr__(self, "color", rgba)
