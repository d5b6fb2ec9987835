"""Scaled copies of primitive shapes (per-env size randomization builds one per env)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from simulo_envs.authoring.pose import Pose
from simulo_envs.authoring.shapes import Capsule, Cuboid, Cylinder, PrimitiveShape, Sphere


def vertical_half_extent(shape: PrimitiveShape) -> float:
    """Half height [m] of the world-axis-aligned bounding box of ``shape`` at its spawn
    orientation: how far its lowest point lies below its centre."""
    qw, qx, qy, qz = shape.pose.quaternion
    # Third row of the rotation matrix: the world z components of the shape's local axes.
    row = np.array([2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)])
    if isinstance(shape, Cuboid):
        return float(np.abs(row) @ (np.asarray(shape.size) / 2))
    if isinstance(shape, Sphere):
        return shape.radius
    axis = min(abs(row[2]), 1.0)  # cosine between the shape's z axis and the world z axis
    radial = shape.radius * math.sqrt(1.0 - axis * axis)
    if isinstance(shape, Cylinder):
        return axis * shape.height / 2 + radial
    if isinstance(shape, Capsule):
        return axis * shape.height / 2 + shape.radius
    raise TypeError(f"not a primitive shape: {type(shape).__name__}")


def scaled_shape(shape: PrimitiveShape, factor: float) -> PrimitiveShape:
    """A copy of ``shape`` with every dimension multiplied by ``factor`` (> 0), scaled about the
    bottom of its spawn pose: the centre moves up or down so the lowest point keeps its height
    (a prop resting on a surface still rests on it). Orientation, physics and material are kept:
    an explicit mass stays, a density yields the scaled volume's mass.

    Raises:
        ValueError: ``factor`` is not a finite number > 0.
    """
    if not (isinstance(factor, (int, float)) and math.isfinite(factor) and factor > 0):
        raise ValueError(f"scale factor must be a finite number > 0, got {factor!r}")
    drop = (factor - 1.0) * vertical_half_extent(shape)
    x, y, z = shape.pose.position
    pose = Pose([x, y, z + drop], shape.pose.quaternion)
    if isinstance(shape, Cuboid):
        dims = {"size": tuple(s * factor for s in shape.size)}
    elif isinstance(shape, Sphere):
        dims = {"radius": shape.radius * factor}
    else:
        dims = {"radius": shape.radius * factor, "height": shape.height * factor}
    fields = {f.name: getattr(shape, f.name) for f in dataclasses.fields(shape)}
    fields.update(dims, pose=pose)
    return type(shape)(**fields)
