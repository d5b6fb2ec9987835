"""Building SAPIEN entities from authoring shapes (used by the backends only)."""

from __future__ import annotations

import sapien
import sapien.physx as physx

from simulo_envs.authoring import Capsule, Cuboid, Cylinder, PrimitiveShape, Sphere

# SAPIEN's cylinder and capsule axes are along local x; authoring uses local z.
_X_TO_Z = sapien.Pose(q=[0.7071067811865476, 0.0, -0.7071067811865476, 0.0])


def build_shape(scene: sapien.Scene, shape: PrimitiveShape, name: str, groups: list[int], visual: bool = False) -> sapien.Entity:
    """One entity for ``shape`` in ``scene`` with collision groups ``groups``; with ``visual``,
    also its render geometry in the shape's colour. Not yet placed (pose identity)."""
    builder = scene.create_actor_builder()
    physics, mat = shape.physics, shape.material
    # A visual-only marker has no collision shape, so it cannot be a dynamic body: make it kinematic.
    kind = physics.kind if shape.collision else "kinematic"
    builder.set_physx_body_type({"rigid": "dynamic", "kinematic": "kinematic", "static": "static"}[kind])
    material = physx.PhysxMaterial(mat.static_friction, mat.dynamic_friction, mat.restitution)
    density = physics.density if physics.density is not None else physics.mass / shape.volume
    if shape.collision:
        if isinstance(shape, Cuboid):
            builder.add_box_collision(half_size=[s / 2 for s in shape.size], material=material, density=density)
        elif isinstance(shape, Sphere):
            builder.add_sphere_collision(radius=shape.radius, material=material, density=density)
        elif isinstance(shape, Cylinder):
            builder.add_cylinder_collision(_X_TO_Z, radius=shape.radius, half_length=shape.height / 2,
                                           material=material, density=density)
        elif isinstance(shape, Capsule):
            builder.add_capsule_collision(_X_TO_Z, radius=shape.radius, half_length=shape.height / 2,
                                          material=material, density=density)
        else:
            raise TypeError(f"unsupported shape type {type(shape).__name__}")
    if visual:
        _add_visual(builder, shape)
    if kind == "static":
        entity = builder.build_static(name=name)
    elif kind == "kinematic":
        entity = builder.build_kinematic(name=name)
    else:
        entity = builder.build(name=name)
    for comp in entity.components:
        if isinstance(comp, physx.PhysxRigidBaseComponent):
            for cs in comp.collision_shapes:
                cs.set_collision_groups(groups)
            if kind == "rigid" and physics.mass is not None:
                comp.mass = physics.mass
    return entity


def _add_visual(builder, shape: PrimitiveShape) -> None:
    material = sapien.render.RenderMaterial(base_color=list(shape.material.color))
    if isinstance(shape, Cuboid):
        builder.add_box_visual(half_size=[s / 2 for s in shape.size], material=material)
    elif isinstance(shape, Sphere):
        builder.add_sphere_visual(radius=shape.radius, material=material)
    elif isinstance(shape, Cylinder):
        builder.add_cylinder_visual(_X_TO_Z, radius=shape.radius, half_length=shape.height / 2, material=material)
    elif isinstance(shape, Capsule):
        builder.add_capsule_visual(_X_TO_Z, radius=shape.radius, half_length=shape.height / 2, material=material)
