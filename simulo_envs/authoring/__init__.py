"""Authoring types: plain data describing what to simulate. Nothing here touches SAPIEN."""

from simulo_envs.authoring.articulation import Articulation, Joint, Link
from simulo_envs.authoring.physics import DEFAULT_DENSITY, Material, Physics
from simulo_envs.authoring.pose import Pose
from simulo_envs.authoring.shapes import Capsule, Cuboid, Cylinder, PrimitiveShape, Sphere, bounding_radius

__all__ = ["Articulation", "Joint", "Link", "Pose", "Physics", "Material", "Cuboid", "Sphere", "Cylinder", "Capsule", "PrimitiveShape", "DEFAULT_DENSITY", "bounding_radius"]
