"""``Pose``: a rigid transform as plain data, position [m] plus scalar-first quaternion."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def _finite_floats(name: str, values: Sequence[float], length: int) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of {length} numbers, got {values!r}") from None
    if len(out) != length:
        raise ValueError(f"{name} must have {length} entries, got {len(out)}: {values!r}")
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{name} must be finite (no NaN or inf), got {values!r}")
    return out


@dataclass(frozen=True)
class Pose:
    """A rigid transform: ``position`` [m] and unit ``quaternion`` ``[qw, qx, qy, qz]``.

    The quaternion is normalised at construction, so ``Pose(quaternion=[2, 0, 0, 0])``
    equals the identity. ``to_list()`` gives the framework's 7-vector layout
    ``[x, y, z, qw, qx, qy, qz]``.

    Raises:
        ValueError: a position that is not 3 finite numbers, or a quaternion that is not
            4 finite numbers or has zero norm.
    """

    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quaternion: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        position = _finite_floats("Pose.position", self.position, 3)
        quat = _finite_floats("Pose.quaternion", self.quaternion, 4)
        norm = math.sqrt(sum(q * q for q in quat))
        if norm < 1e-9:
            raise ValueError(f"Pose.quaternion must be non-zero ([qw, qx, qy, qz]), got {self.quaternion!r}")
        object.__setattr__(self, "position", position)
        object.__setattr__(self, "quaternion", tuple(q / norm for q in quat))

    def to_list(self) -> list[float]:
        """The pose as ``[x, y, z, qw, qx, qy, qz]`` (7 floats)."""
        return [*self.position, *self.quaternion]

    @classmethod
    def coerce(cls, pose) -> "Pose":
        """A ``Pose`` from None (identity), a ``Pose``, a ``sapien.Pose`` (``.p``, ``.q``) or a
        7-sequence ``[x, y, z, qw, qx, qy, qz]``.

        Raises:
            ValueError: anything else (a batch of poses included).
        """
        if pose is None:
            return cls()
        if isinstance(pose, cls):
            return pose
        if hasattr(pose, "p") and hasattr(pose, "q"):
            return cls(tuple(pose.p), tuple(pose.q))
        try:
            values = [float(v) for v in pose]
        except (TypeError, ValueError):
            raise ValueError(f"expected a Pose or [x, y, z, qw, qx, qy, qz], got {pose!r}") from None
        if len(values) != 7:
            raise ValueError(f"expected a Pose or [x, y, z, qw, qx, qy, qz] (7 numbers), got {len(values)}: {pose!r}")
        return cls(tuple(values[:3]), tuple(values[3:]))
