"""Building SAPIEN entities from authoring shapes (used by the backends only)."""

from __future__ import annotations

import math

import sapien
import sapien.physx as physx

from simulo_envs.authoring import Capsule, Cuboid, Cylinder, PrimitiveShape, Sphere
from simulo_envs.authoring.articulation import Articulation

# SAPIEN's cylinder and capsule axes are along local x; authoring uses local z.
_X_TO_Z = sapien.Pose(q=[0.7071067811865476, 0.0, -0.7071067811865476, 0.0])


def build_shape(scene: sapien.Scene, shape: PrimitiveShape, name: str, groups: list[int], visual: bool = False) -> sapien.Entity:
    """One entity for ``shape`` in ``scene`` with collision groups ``groups``; with ``visual``,
    also its render geometry in the shape's colour. Not yet placed (pose identity)."""
    builder, kind = _shape_builder(scene, shape, visual)
    if kind == "static":
        entity = builder.build_static(name=name)
    elif kind == "kinematic":
        entity = builder.build_kinematic(name=name)
    else:
        entity = builder.build(name=name)
    _finish_body(entity.components, shape, kind, groups)
    return entity


def rebuild_shape(entity: sapien.Entity, shape: PrimitiveShape, groups: list[int], visual: bool = False):
    """Replace the physics (and, with ``visual``, the render) component of ``entity``, an entity
    ``build_shape`` made and still in its scene, by those ``build_shape`` would make for
    ``shape``: new geometry and mass, the same entity (hence the same name and segmentation id,
    ``per_scene_id``). The new body is at the entity's pose, at rest. Returns the new physics
    component. The body kind (dynamic, kinematic, static) must be the old one's."""
    builder, kind = _shape_builder(entity.scene, shape, visual)
    components = [builder.build_physx_component()]
    if visual and builder.visual_records:
        components.append(builder.build_render_component())
    for old in list(entity.components):
        if isinstance(old, physx.PhysxRigidBaseComponent) or (visual and isinstance(old, sapien.render.RenderBodyComponent)):
            entity.remove_component(old)
    for component in components:
        entity.add_component(component)
    _finish_body(components, shape, kind, groups)
    return components[0]


def _shape_builder(scene: sapien.Scene, shape: PrimitiveShape, visual: bool) -> tuple:
    """``(actor builder holding shape's geometry, body kind)`` for ``build_shape``/``rebuild_shape``."""
    builder = scene.create_actor_builder()
    physics = shape.physics
    # A visual-only marker has no collision shape, so it cannot be a dynamic body: make it kinematic.
    kind = physics.kind if shape.collision else "kinematic"
    builder.set_physx_body_type({"rigid": "dynamic", "kinematic": "kinematic", "static": "static"}[kind])
    add_shape(builder, shape, sapien.Pose(), visual)
    return builder, kind


def _finish_body(components, shape: PrimitiveShape, kind: str, groups: list[int]) -> None:
    """Collision groups on every collision shape, and an explicit mass where the shape gives one."""
    for comp in components:
        if isinstance(comp, physx.PhysxRigidBaseComponent):
            for cs in comp.collision_shapes:
                cs.set_collision_groups(groups)
            if kind == "rigid" and shape.physics.mass is not None:
                comp.mass = shape.physics.mass


def add_shape(builder, shape: PrimitiveShape, pose: sapien.Pose, visual: bool) -> None:
    """Add ``shape``'s collision geometry (if it collides) and, with ``visual``, its render
    geometry to an actor or link builder, at ``pose`` in the builder's frame (identity for a
    one-shape actor, whose entity is placed instead; the shape's pose for a link)."""
    mat = shape.material
    physics = shape.physics
    density = physics.density if physics.density is not None else physics.mass / shape.volume
    if shape.collision:
        material = physx.PhysxMaterial(mat.static_friction, mat.dynamic_friction, mat.restitution)
        if isinstance(shape, Cuboid):
            builder.add_box_collision(pose, half_size=[s / 2 for s in shape.size], material=material, density=density)
        elif isinstance(shape, Sphere):
            builder.add_sphere_collision(pose, radius=shape.radius, material=material, density=density)
        elif isinstance(shape, Cylinder):
            builder.add_cylinder_collision(pose * _X_TO_Z, radius=shape.radius, half_length=shape.height / 2,
                                           material=material, density=density)
        elif isinstance(shape, Capsule):
            builder.add_capsule_collision(pose * _X_TO_Z, radius=shape.radius, half_length=shape.height / 2,
                                          material=material, density=density)
        else:
            raise TypeError(f"unsupported shape type {type(shape).__name__}")
    if visual:
        _add_visual(builder, shape, pose)


def build_articulation(scene: sapien.Scene, spec: Articulation, name: str, groups: list[int],
                       visual: bool = False) -> physx.PhysxArticulation:
    """Build ``spec`` (an authoring ``Articulation``) in ``scene`` with SAPIEN's
    ``ArticulationBuilder``: one link per ``Link`` (its shapes at their link-frame poses),
    joints from each ``Joint`` (SAPIEN moves a joint along the x axis of its joint frame, so the
    joint frame is the child frame turned to carry x onto ``axis``), joint friction and damping
    (a zero-stiffness drive) set, collision groups ``groups`` on every shape. Not yet placed:
    the caller sets the root pose."""
    builder = scene.create_articulation_builder()
    link_builders = {}
    for link in spec.links:
        lb = builder.create_link_builder(link_builders.get(link.parent))
        lb.set_name(link.name)
        lb.collision_groups = list(groups)
        for shape in link.shapes:
            add_shape(lb, shape, sapien.Pose(p=shape.pose.position, q=shape.pose.quaternion), visual)
        joint = link.joint
        if joint is not None:
            lb.set_joint_name(link.joint_name)
            to_axis = sapien.Pose(q=_quat_x_to(joint.axis))
            origin = sapien.Pose(p=joint.origin.position, q=joint.origin.quaternion)
            lb.set_joint_properties(joint.kind, limits=[list(joint.limits)] if joint.dof else [],
                                    pose_in_parent=origin * to_axis, pose_in_child=to_axis,
                                    friction=joint.friction, damping=joint.damping)
        link_builders[link.name] = lb
    art = builder.build(fix_root_link=spec.fix_base)
    art.name = name
    components = {component.name: component for component in art.links}
    for link in spec.active_links:  # the builder sets the damping drive, not the friction
        components[link.name].joint.set_friction(link.joint.friction)
    return art


def _quat_x_to(axis) -> list[float]:
    """Unit quaternion ``[qw, qx, qy, qz]`` of the shortest rotation carrying +x onto the unit ``axis``."""
    x, y, z = axis
    if x > 1.0 - 1e-12:
        return [1.0, 0.0, 0.0, 0.0]
    if x < -1.0 + 1e-12:
        return [0.0, 0.0, 0.0, 1.0]  # half a turn about z
    # Half-angle form: q = [1 + x, (e_x cross axis)] normalised, e_x cross axis = (0, -z, y).
    w, qy, qz = 1.0 + x, -z, y
    norm = math.sqrt(w * w + qy * qy + qz * qz)
    return [w / norm, 0.0, qy / norm, qz / norm]


def _add_visual(builder, shape: PrimitiveShape, pose: sapien.Pose) -> None:
    material = sapien.render.RenderMaterial(base_color=list(shape.material.color))
    if isinstance(shape, Cuboid):
        builder.add_box_visual(pose, half_size=[s / 2 for s in shape.size], material=material)
    elif isinstance(shape, Sphere):
        builder.add_sphere_visual(pose, radius=shape.radius, material=material)
    elif isinstance(shape, Cylinder):
        builder.add_cylinder_visual(pose * _X_TO_Z, radius=shape.radius, half_length=shape.height / 2, material=material)
    elif isinstance(shape, Capsule):
        builder.add_capsule_visual(pose * _X_TO_Z, radius=shape.radius, half_length=shape.height / 2, material=material)
