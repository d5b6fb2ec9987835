"""Open containers a robot drops things into: a round bowl and a rectangular bin (plain data).

``Container`` describes one: its kind (``"bowl"``: a round floor ringed by ``segments`` flat
wall panels, leaning outward by ``flare``; ``"bin"``: a rectangular floor and four upright
walls), inner size, wall height and thickness, colour. ``articulation(name, pose)`` gives the
``Articulation`` to put in a scene (``ArticulatedProp``): one fixed link ``"body"`` built from
``Cuboid`` panels (and a ``Cylinder`` floor for the bowl), nothing loaded from a file.
``contains(points)`` is the test a task's success predicate uses.

Container frame: origin on the floor (the ground) under the container's centre, +z up; a bin's
``inner_size`` is along its x then y. All sizes in metres. The floor is ``floor`` thick, so
something resting inside sits ``floor`` above the ground.

Why fixed: a fixed root holds still when a 10 g cube lands in it or a jaw brushes its rim, as a
bowl weighted on a table does, so "the cube is in the bowl" is the cube's pose alone. A task
moves it between episodes with ``ArticulatedProp.set_pose`` (the drawer task does the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from simulo_envs.authoring.articulation import Articulation, Link
from simulo_envs.authoring.physics import Material, Physics
from simulo_envs.authoring.pose import Pose
from simulo_envs.authoring.shapes import Cuboid, Cylinder

PLASTIC_DENSITY = 1000.0
"""Density of the panels [kg/m^3]; a fixed link's mass plays no part, PhysX needs one."""


@dataclass(frozen=True)
class Container:
    """An open container (module docstring).

    Attributes:
        kind: ``"bowl"`` (round) or ``"bin"`` (rectangular).
        inner_size: the bowl's inner radius at the floor (1 number), or the bin's inner x and y
            extents (2 numbers) [m].
        height: wall height above the ground [m] (the rim).
        wall: wall thickness [m].
        floor: floor thickness [m].
        flare: the bowl's walls lean outward by this angle from vertical [rad] (0 for a bin).
        segments: wall panels around the bowl (>= 6).
        color: RGB in [0, 1].

    Raises:
        ValueError: an unknown kind, a non-positive size, walls lower than the floor, a flare
            outside [0, 60 deg), fewer than 6 segments, or a flared bin.
    """

    kind: Literal["bowl", "bin"] = "bowl"
    inner_size: tuple = (0.045,)
    height: float = 0.03
    wall: float = 0.004
    floor: float = 0.004
    flare: float = 0.35
    segments: int = 16
    color: tuple = (0.92, 0.92, 0.88)

    def __post_init__(self) -> None:
        if self.kind not in ("bowl", "bin"):
            raise ValueError(f"Container.kind must be 'bowl' or 'bin', got {self.kind!r}")
        size = tuple(float(s) for s in self.inner_size)
        if len(size) != (1 if self.kind == "bowl" else 2) or min(size) <= 0:
            raise ValueError(f"Container.inner_size: a bowl takes its radius (1 number > 0), a bin its x, y "
                             f"extents (2 numbers > 0) [m]; got {self.inner_size!r} for a {self.kind}")
        if min(self.wall, self.floor) <= 0 or self.height <= self.floor:
            raise ValueError(f"Container: wall and floor must be > 0 and height > floor [m], got wall {self.wall}, "
                             f"floor {self.floor}, height {self.height}")
        if not 0 <= self.flare < math.radians(60) or (self.kind == "bin" and self.flare):
            raise ValueError(f"Container.flare must be in [0, 60 deg) [rad] and 0 for a bin, got {self.flare}")
        if self.segments < 6:
            raise ValueError(f"Container.segments must be >= 6, got {self.segments}")
        object.__setattr__(self, "inner_size", size)

    @property
    def rim_radius(self) -> float:
        """Bowl: the inner radius at the rim [m] (the floor's radius plus the flare's reach)."""
        return self.inner_size[0] + (self.height - self.floor) * math.tan(self.flare)

    @property
    def outer_half_extent(self) -> tuple[float, float]:
        """Half the footprint along x and y, walls included [m]: how far other things must keep."""
        if self.kind == "bowl":
            r = self.rim_radius + self.wall
            return (r, r)
        return (self.inner_size[0] / 2 + self.wall, self.inner_size[1] / 2 + self.wall)

    def articulation(self, name: str, pose: Pose = Pose()) -> Articulation:
        """The container as a fixed one-link ``Articulation`` named ``name`` at env-local ``pose``."""
        material = Material(color=tuple(self.color))
        physics = Physics.rigid(density=PLASTIC_DENSITY)
        shapes = self._bowl(material, physics) if self.kind == "bowl" else self._bin(material, physics)
        return Articulation(name, [Link("body", shapes)], pose=pose, fix_base=True)

    def _bowl(self, material: Material, physics: Physics) -> list:
        r, t, h, f = self.inner_size[0], self.wall, self.height - self.floor, self.flare
        slant = h / math.cos(f)  # the wall panel's length along its lean
        mid = r + t / 2 + (h / 2) * math.tan(f)  # the panel's centre, radially
        chord = 2 * (self.rim_radius + t) * math.tan(math.pi / self.segments)  # wide enough to close at the rim
        shapes = [Cylinder("floor", r + t, self.floor, Pose((0, 0, self.floor / 2)),
                           physics, material)]
        for i in range(self.segments):
            yaw = 2 * math.pi * i / self.segments
            quat = _mul(_about_z(yaw), _about_y(f))  # lean outward: the top goes to +x of the panel's frame
            shapes.append(Cuboid(f"wall_{i}", (t, chord, slant), Pose(
                (mid * math.cos(yaw), mid * math.sin(yaw), self.floor + h / 2), quat), physics, material))
        return shapes

    def _bin(self, material: Material, physics: Physics) -> list:
        (x, y), t, h, f = self.inner_size, self.wall, self.height, self.floor
        return [
            Cuboid("floor", (x + 2 * t, y + 2 * t, f), Pose((0, 0, f / 2)), physics, material),
            Cuboid("wall_x_neg", (t, y + 2 * t, h - f), Pose((-(x + t) / 2, 0, f + (h - f) / 2)), physics, material),
            Cuboid("wall_x_pos", (t, y + 2 * t, h - f), Pose(((x + t) / 2, 0, f + (h - f) / 2)), physics, material),
            Cuboid("wall_y_neg", (x, t, h - f), Pose((0, -(y + t) / 2, f + (h - f) / 2)), physics, material),
            Cuboid("wall_y_pos", (x, t, h - f), Pose((0, (y + t) / 2, f + (h - f) / 2)), physics, material),
        ]

    def contains(self, points, margin: float = 0.0):
        """bool (N,): points (N, 3) given in the container frame (torch or numpy) that lie inside,
        ``margin`` [m] clear of the walls: between the floor's top and the rim, and within the
        bowl's radius at the point's height (the flared wall's inner face) or the bin's half
        extents."""
        x, y, z = points[:, 0], points[:, 1], points[:, 2]
        height_ok = (z >= self.floor) & (z <= self.height)
        if self.kind == "bowl":
            rise = (z - self.floor) * (z >= self.floor)  # 0 below the floor's top (then outside anyway)
            radius = self.inner_size[0] + rise * math.tan(self.flare) - margin
            return height_ok & (x * x + y * y <= radius * radius)
        hx, hy = self.inner_size[0] / 2 - margin, self.inner_size[1] / 2 - margin
        return height_ok & (abs(x) <= hx) & (abs(y) <= hy)


def _about_y(angle: float) -> tuple:
    return (math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0)


def _about_z(angle: float) -> tuple:
    return (math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2))


def _mul(a: tuple, b: tuple) -> tuple:
    """Quaternion product ``a * b`` (scalar first)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


__all__ = ["Container", "PLASTIC_DENSITY"]
