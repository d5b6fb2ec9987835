"""``Joint``, ``Link``, ``Articulation``: an articulated object (a cabinet with a drawer, a door)
as plain data, built from primitive shapes. No simulator here; ``ArticulatedProp`` wraps it.

Frames: each link has its own frame. A link's shapes are placed by their ``pose`` in that frame.
A non-root link hangs from its parent by a ``Joint`` whose ``origin`` is the child link's frame
in the parent link's frame at joint position 0, and whose ``axis`` (in the child link's frame)
is the direction of travel (prismatic, metres) or of rotation (revolute, radians, right-hand
rule). The same conventions as URDF's ``<joint>`` (``origin``, ``axis``, ``limit``), without a file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence

from simulo_envs.authoring.physics import _non_negative
from simulo_envs.authoring.pose import Pose, _finite_floats
from simulo_envs.authoring.shapes import Capsule, Cuboid, Cylinder, PrimitiveShape, Sphere

JointKind = Literal["prismatic", "revolute", "fixed"]
_SHAPES = (Cuboid, Sphere, Cylinder, Capsule)


@dataclass(frozen=True)
class Joint:
    """How a link moves relative to its parent. Build it with the class methods.

    Attributes:
        kind: ``"prismatic"`` (slides, m), ``"revolute"`` (turns, rad) or ``"fixed"`` (no dof).
        origin: the child link's frame in the parent link's frame at joint position 0.
        axis: unit direction of motion in the child link's frame (normalised at construction).
        limits: ``(lower, upper)`` joint position range [m or rad], finite, lower <= upper.
        friction: PhysX's articulation joint friction coefficient (dimensionless, >= 0): the
            friction force opposing motion is this times the joint's constraint force.
        damping: viscous damping [N s/m or N m s/rad], >= 0 (a PhysX drive of zero stiffness).
        default_position: position at spawn and after ``reset`` [m or rad]; within ``limits``.
            None: the value in ``limits`` closest to 0.
        name: joint name; None: ``"<child link>_joint"``.

    Raises:
        ValueError: an unknown kind, a zero or non-finite axis, limits not finite or reversed,
            negative friction or damping, a default position outside the limits.
    """

    kind: JointKind = "fixed"
    origin: Pose = field(default_factory=Pose)
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    limits: tuple[float, float] = (0.0, 0.0)
    friction: float = 0.0
    damping: float = 0.0
    default_position: Optional[float] = None
    name: Optional[str] = None

    def __post_init__(self) -> None:
        if self.kind not in ("prismatic", "revolute", "fixed"):
            raise ValueError(f"Joint.kind must be 'prismatic', 'revolute' or 'fixed', got {self.kind!r}")
        if not isinstance(self.origin, Pose):
            raise ValueError(f"Joint.origin must be a Pose, got {self.origin!r}")
        axis = _finite_floats("Joint.axis", self.axis, 3)
        norm = math.sqrt(sum(a * a for a in axis))
        if norm < 1e-9:
            raise ValueError(f"Joint.axis must be non-zero, got {self.axis!r}")
        lower, upper = _finite_floats("Joint.limits (lower, upper)", self.limits, 2)
        if lower > upper:
            raise ValueError(f"Joint.limits must have lower <= upper, got {self.limits!r}")
        default = min(max(0.0, lower), upper) if self.default_position is None else float(self.default_position)
        if not lower <= default <= upper:
            raise ValueError(f"Joint.default_position {default} lies outside the limits [{lower}, {upper}]")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"Joint.name must be a non-empty string or None, got {self.name!r}")
        object.__setattr__(self, "axis", tuple(a / norm for a in axis))
        object.__setattr__(self, "limits", (lower, upper))
        object.__setattr__(self, "friction", _non_negative("Joint.friction", self.friction))
        object.__setattr__(self, "damping", _non_negative("Joint.damping [N s/m or N m s/rad]", self.damping))
        object.__setattr__(self, "default_position", default)

    @property
    def dof(self) -> int:
        """Degrees of freedom: 1 for prismatic and revolute joints, 0 for fixed ones."""
        return 0 if self.kind == "fixed" else 1

    @classmethod
    def prismatic(cls, axis: Sequence[float], limits: Sequence[float], origin: Optional[Pose] = None,
                  friction: float = 0.0, damping: float = 0.0, default_position: Optional[float] = None,
                  name: Optional[str] = None) -> "Joint":
        """A sliding joint along ``axis`` (child frame) with ``limits`` [m] (a drawer)."""
        return cls("prismatic", origin or Pose(), tuple(axis), tuple(limits), friction, damping, default_position, name)

    @classmethod
    def revolute(cls, axis: Sequence[float], limits: Sequence[float], origin: Optional[Pose] = None,
                 friction: float = 0.0, damping: float = 0.0, default_position: Optional[float] = None,
                 name: Optional[str] = None) -> "Joint":
        """A hinge about ``axis`` (child frame, through the child frame's origin) with ``limits``
        [rad] (a door)."""
        return cls("revolute", origin or Pose(), tuple(axis), tuple(limits), friction, damping, default_position, name)

    @classmethod
    def fixed(cls, origin: Optional[Pose] = None, name: Optional[str] = None) -> "Joint":
        """A rigid connection at ``origin`` (no dof)."""
        return cls("fixed", origin or Pose(), name=name)


@dataclass(frozen=True)
class Link:
    """A rigid link: one or more primitive shapes, posed in the link's frame.

    Attributes:
        name: unique within the articulation, non-empty, no ``/``.
        shapes: the link's geometry; each shape's ``pose`` is in the link frame, its physics
            must be ``Physics.rigid`` (mass or density; the link's mass is the sum) and at least
            one shape must collide (a visual-only shape adds no mass).
        parent: the parent link's name; None for the root link.
        joint: how the link hangs from ``parent``; required for a child, None for the root.

    Raises:
        ValueError: a bad name, no shapes, a non-rigid or non-colliding set of shapes, a joint
            without a parent or a parent without a joint.
    """

    name: str
    shapes: tuple[PrimitiveShape, ...]
    parent: Optional[str] = None
    joint: Optional[Joint] = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise ValueError(f"Link.name must be a non-empty string without '/', got {self.name!r}")
        shapes = tuple(self.shapes) if isinstance(self.shapes, (list, tuple)) else None
        if not shapes:
            raise ValueError(f"link {self.name!r} needs a list of at least one primitive shape, got {self.shapes!r}")
        for shape in shapes:
            if not isinstance(shape, _SHAPES):
                raise ValueError(f"link {self.name!r}: shapes must be Cuboid, Sphere, Cylinder or Capsule, "
                                 f"got {type(shape).__name__}")
            if shape.physics.kind != "rigid":
                raise ValueError(f"link {self.name!r}: shape {shape.name!r} has {shape.physics.kind} physics; "
                                 "link shapes must be Physics.rigid (the joints move them)")
        if not any(s.collision for s in shapes):
            raise ValueError(f"link {self.name!r} needs at least one colliding shape (it gives the link its mass)")
        if (self.parent is None) != (self.joint is None):
            raise ValueError(f"link {self.name!r}: a child link needs both parent and joint; the root has neither")
        if self.joint is not None and not isinstance(self.joint, Joint):
            raise ValueError(f"link {self.name!r}: joint must be a Joint, got {self.joint!r}")
        object.__setattr__(self, "shapes", shapes)

    @property
    def joint_name(self) -> Optional[str]:
        """The joint's name (``"<link>_joint"`` unless given); None for the root."""
        if self.joint is None:
            return None
        return self.joint.name or f"{self.name}_joint"


@dataclass(frozen=True)
class Articulation:
    """An articulated object: a tree of links, spawned at ``pose`` in every env.

    Attributes:
        name: the object's name (the scene path's last segment by default).
        links: root link first; every parent listed before its children.
        pose: the root link's spawn pose in the env-local frame.
        fix_base: True (default) fixes the root link in the world (a cabinet); False lets the
            whole object move freely (its root velocity is then part of its state).

    Raises:
        ValueError: no links, duplicate link or joint names, a root that is not first, or a
            parent that is unknown or listed after its child.
    """

    name: str
    links: tuple[Link, ...]
    pose: Pose = field(default_factory=Pose)
    fix_base: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise ValueError(f"Articulation.name must be a non-empty string without '/', got {self.name!r}")
        links = tuple(self.links) if isinstance(self.links, (list, tuple)) else ()
        if not links or not all(isinstance(link, Link) for link in links):
            raise ValueError(f"articulation {self.name!r} needs a list of Links, root first, got {self.links!r}")
        if not isinstance(self.pose, Pose):
            raise ValueError(f"Articulation.pose must be a Pose, got {self.pose!r}")
        if links[0].parent is not None:
            raise ValueError(f"articulation {self.name!r}: the first link must be the root (parent=None)")
        seen: set[str] = set()
        for link in links:
            if link.name in seen:
                raise ValueError(f"articulation {self.name!r}: duplicate link name {link.name!r}")
            if link is not links[0] and link.parent not in seen:
                if link.parent is None:
                    raise ValueError(f"articulation {self.name!r}: link {link.name!r} is a second root; "
                                     "only the first link may have parent=None")
                raise ValueError(f"articulation {self.name!r}: link {link.name!r} names parent {link.parent!r}, "
                                 "which is not listed before it")
            seen.add(link.name)
        joint_names = [link.joint_name for link in links[1:]]
        if len(set(joint_names)) != len(joint_names):
            raise ValueError(f"articulation {self.name!r}: duplicate joint names {joint_names}")
        object.__setattr__(self, "links", links)
        object.__setattr__(self, "fix_base", bool(self.fix_base))

    @property
    def active_links(self) -> tuple[Link, ...]:
        """The links whose joints move (prismatic or revolute), in ``links`` order."""
        return tuple(link for link in self.links if link.joint is not None and link.joint.dof)

    @property
    def dof(self) -> int:
        """Number of moving joints."""
        return len(self.active_links)
