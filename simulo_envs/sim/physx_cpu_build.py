"""Building the PhysX CPU backend's bodies: ground, rigid props, articulations (URDF or spec).

The building half of ``PhysxCpuBackend`` (``physx_cpu.py``): every ``add_*`` method makes one
entity (or articulation) per env in that env's ``sapien.Scene``, at the env's origin, with the
env's collision bits, and returns the integer id of the group; ``finalize`` (in ``physx_cpu.py``)
then freezes the layout.

Isolation: shapes of env ``i`` get collision groups ``g0 = g1 = 1 << (i % 32)``; PhysX lets
two shapes collide iff ``(A.g0 & B.g1) or (B.g0 & A.g1)`` and not ``(A.g2 & B.g2)``
(observed on SAPIEN 3.0.3). So up to 32 envs never touch each other even at
``env_spacing = 0``; beyond 32, env ``i`` shares its bit with env ``i + 32`` and the two are
kept apart only by ``env_spacing``. The ground plane has all bits set. Robot links also
share ``g2 = 1 << 31`` (no self-collision); each articulated prop built from a spec gets a
``g2`` bit of its own below it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import sapien
import sapien.physx as physx

from simulo_envs.authoring import PrimitiveShape
from simulo_envs.authoring.articulation import Articulation
from simulo_envs.sim.builders import build_articulation, build_shape, rebuild_shape
from simulo_envs.sim.params import material_of, render_color
from simulo_envs.sim.render import ground_visual_builders

_ALL_BITS = 0xFFFFFFFF
_ROBOT_SELF_BIT = 1 << 31


def env_bits(env: int) -> list[int]:
    """Collision groups ``[g0, g1, g2, g3]`` of a shape owned by env ``env``."""
    bit = 1 << (env % 32)
    return [bit, bit, 0, 0]


@dataclass
class _RigidGroup:
    entities: list
    components: list
    kinds: list


@dataclass
class _ArticulationGroup:
    articulations: list
    joints: list  # per env: list of active joints
    dof: int
    joint_names: list
    link_names: list
    links: list = field(default_factory=list)  # per env: list of link components
    pinocchio: object = None  # kinematics model, made on first use


def replace_collisions(builder, collision_boxes: dict) -> None:
    """Replace the collision shapes of the links named in ``collision_boxes`` (link name ->
    ``((half_size, pose), ...)``, link frame) by those boxes, each with the material of the
    link's first URDF shape.

    Raises:
        KeyError: a link the articulation builder does not have (the message lists its links).
    """
    links = {lb.name: lb for lb in builder.link_builders}
    for link, boxes in collision_boxes.items():
        if link not in links:
            raise KeyError(f"collision_boxes: no link {link!r} in the URDF; its links are {sorted(links)}")
        lb = links[link]
        material = lb.collision_records[0].material if lb.collision_records else None
        lb.collision_records = []
        for half_size, pose in boxes:
            pose = np.asarray(pose, dtype=np.float64)
            lb.add_box_collision(sapien.Pose(p=pose[:3], q=pose[3:7]), half_size=list(half_size), material=material)


class PhysxCpuBuildMixin:
    """The building methods of ``PhysxCpuBackend``; expects its ``num_envs``, ``origins``,
    ``render``, ``scenes``, ``systems``, ``_rigid``, ``_arts``, ``_spec_articulations`` and
    ``_finalized``."""

    def add_ground(self, altitude: float = 0.0, color: Optional[tuple] = None) -> None:
        """A static infinite plane at ``z = altitude`` [m] touching every env, drawn in RGB
        ``color`` (None: ``GROUND_COLOR``).

        Physics: one plane per PhysX system, in env 0's scene when the system is shared. Rendering: a ground
        visual in every env's scene, env 0's on the same entity as the plane, so every scene holds
        one ground entity and entity (segmentation) ids agree across envs."""
        if self.render:
            builders = ground_visual_builders(self.scenes, color=color)
        else:
            builders = [self.scenes[i].create_actor_builder() for i in range(len(self.systems))]
        planes = range(len(self.systems))  # env i's scene is in system i (or all share system 0)
        for i in planes:
            builders[i].add_plane_collision(sapien.Pose(q=[0.7071068, 0, -0.7071068, 0]))
        self._grounds = []
        for i, builder in enumerate(builders):
            ground = builder.build_static(name="ground")
            self._grounds.append(ground)
            ground.set_pose(sapien.Pose(p=[self.origins[i][0], self.origins[i][1], altitude]))
            if i in planes:
                for shape in ground.find_component_by_type(physx.PhysxRigidStaticComponent).collision_shapes:
                    shape.set_collision_groups([_ALL_BITS, _ALL_BITS, 0, 0])

    def add_rigid(self, shapes: Sequence[PrimitiveShape], name: str) -> int:
        """Build one body per env from ``shapes[i]`` at env origin ``i`` plus the shape's pose.

        Returns the group id. Raises RuntimeError after ``finalize()``.
        """
        self._check_building()
        if len(shapes) != self.num_envs:
            raise ValueError(f"add_rigid: need one shape per env ({self.num_envs}), got {len(shapes)}")
        entities, comps, kinds = [], [], []
        for i, shape in enumerate(shapes):
            entity = build_shape(self.scenes[i], shape, f"{name}_{i}", env_bits(i), visual=self.render)
            entity.set_pose(sapien.Pose(p=np.asarray(shape.pose.position) + self.origins[i], q=shape.pose.quaternion))
            entities.append(entity)
            comp = entity.find_component_by_type(physx.PhysxRigidBaseComponent)
            comps.append(comp)
            kinds.append(shape.physics.kind if shape.collision else "kinematic")
        self._rigid.append(_RigidGroup(entities, comps, kinds))
        return len(self._rigid) - 1

    rebuilds_env_bodies = True
    """Whether ``rebuild_rigid`` works after the scene is finalised (False on the GPU backend)."""

    def rebuild_rigid(self, gid: int, env_ids: np.ndarray, shapes: Sequence[PrimitiveShape]) -> None:
        """Rebuild the bodies of rigid group ``gid`` in ``env_ids`` (int64 (k,)) from ``shapes``
        (k shapes, e.g. the authored shape at another scale), leaving every other env's body alone.

        Each body keeps its entity (name, segmentation id) and the friction, restitution,
        damping and colour written to it; it gets the new geometry, the mass a build of the new
        shape gives (an explicit ``Physics.rigid(mass=...)``, or its density times the new
        volume; a mass written to the old body is not kept: it followed the old geometry), and
        it starts at the shape's spawn pose (plus the env origin) at rest. The envs' state counts as written
        (contacts read zero until the next step, as after any teleport).

        In a shared PhysX system the other envs' bodies are untouched, but PhysX orders its
        solver work by body, so their next steps can differ at float-rounding level (the
        bound of ``SimConfig.isolate_envs``); with one system per env they are bit-identical.

        Raises:
            ValueError: not one shape per env id, or a shape of another body kind (dynamic,
                kinematic, static) than the body it replaces; nothing is rebuilt.
            RuntimeError: a backend that cannot rebuild one env's bodies (``physx_cuda``).
        """
        self._check_rebuild()
        env_ids = np.asarray(env_ids, dtype=np.int64)
        group = self._rigid[gid]
        if len(shapes) != len(env_ids):
            raise ValueError(f"rebuild_rigid: need one shape per env id ({len(env_ids)}), got {len(shapes)}")
        kinds = [shape.physics.kind if shape.collision else "kinematic" for shape in shapes]
        for i, kind in zip(env_ids.tolist(), kinds):
            if kind != group.kinds[i]:
                raise ValueError(f"rebuild_rigid: env {i}'s body is {group.kinds[i]}, the new shape {kind}")
        built_mass, built_inertia = self._built_mass(gid)
        for i, shape in zip(env_ids.tolist(), shapes):
            entity, old = group.entities[i], group.components[i]
            material = material_of(old) if old.collision_shapes else None
            dynamic = group.kinds[i] == "rigid"
            damping = (old.linear_damping, old.angular_damping) if dynamic else None
            color = render_color(entity) if self.render else None
            # SAPIEN's contact list of the last step points at the old component: keep it alive
            # until the next step replaces that list (a freed one would crash a contact read).
            self._retired.append(old)
            comp = rebuild_shape(entity, shape, env_bits(i), visual=self.render)
            entity.set_pose(sapien.Pose(p=np.asarray(shape.pose.position) + self.origins[i], q=shape.pose.quaternion))
            group.components[i] = comp
            if material is not None:
                for cs in comp.collision_shapes:
                    cs.set_physical_material(physx.PhysxMaterial(*material))
            if dynamic:
                comp.linear_damping, comp.angular_damping = damping
                built_mass[i], built_inertia[i] = comp.mass, comp.inertia
            if color is not None:
                self.set_rigid_param(gid, "color", np.array([i]), color[None])
        self._relayout()
        self._wrote(env_ids)

    def _check_rebuild(self) -> None:
        """Raise RuntimeError where bodies cannot be rebuilt env by env (the GPU backend overrides it)."""
        if not self._finalized:
            raise RuntimeError("physx_cpu: rebuild_rigid rebuilds bodies of a finalised scene; before, add them anew")

    def add_articulation(self, urdf_path: str, name: str, link_materials: dict, root_poses: np.ndarray,
                         drive: Sequence[tuple[float, float, float]], disable_gravity: bool = False,
                         collision_boxes: Optional[dict] = None, solver_iterations: Optional[tuple] = None) -> int:
        """Load ``urdf_path`` once per env, fixed base at ``root_poses[i]`` (world, (N, 7)).

        Args:
            link_materials: link name -> dict(static_friction, dynamic_friction, restitution,
                patch_radius, min_patch_radius) overriding the URDF's collision material.
            drive: per active joint ``(stiffness [N/m or Nm/rad], damping, force_limit)``, optionally
                with a fourth entry, the joint's speed limit [m/s or rad/s] (None: PhysX's default),
                and a fifth, the joint's armature [kg m^2 or kg] (0: none).
            disable_gravity: the links feel no gravity (ideal gravity compensation).
            collision_boxes: link name -> sequence of ``(half_size (3,) [m], pose [x, y, z, qw, qx,
                qy, qz] in the link frame)``: boxes that replace the link's URDF collision shapes
                (keeping the link's material override); the link's mass and inertia stay the URDF's.
            solver_iterations: ``(position, velocity)`` PhysX solver iterations of this
                articulation (None: the scene's ``SimConfig`` values).

        Returns the group id.

        Raises:
            KeyError: a ``collision_boxes`` link the URDF does not have.
        """
        from sapien.wrapper.urdf_loader import URDFLoader

        self._check_building()
        arts, joints, links = [], [], []
        for i in range(self.num_envs):
            loader = URDFLoader()
            loader.set_scene(self.scenes[i])
            loader.fix_root_link = True
            builder = loader.load_file_as_articulation_builder(urdf_path)
            replace_collisions(builder, collision_boxes or {})
            for lb in builder.link_builders:
                if not self.render:
                    lb.visual_records = []
                for record in lb.visual_records:  # simplified copies where visual_detail="fast"
                    if record.type == "file":
                        record.filename = self.render_config.visual_mesh(record.filename)
                g = env_bits(i)
                lb.collision_groups = [g[0], g[1], _ROBOT_SELF_BIT, 0]
                override = link_materials.get(lb.name)
                if override:
                    mat = physx.PhysxMaterial(override["static_friction"], override["dynamic_friction"],
                                              override["restitution"])
                    for record in lb.collision_records:
                        record.material = mat
                        record.patch_radius = override.get("patch_radius", record.patch_radius)
                        record.min_patch_radius = override.get("min_patch_radius", record.min_patch_radius)
            art = builder.build()
            art.name = f"{name}_{i}"
            p = root_poses[i]
            art.set_root_pose(sapien.Pose(p=p[:3], q=p[3:7]))
            active = art.get_active_joints()
            if len(drive) != len(active):
                raise ValueError(f"add_articulation: {len(active)} active joints, {len(drive)} drive settings")
            for joint, (stiffness, damping, force_limit, *extra) in zip(active, drive):
                joint.set_drive_properties(stiffness, damping, force_limit, "force")
                if len(extra) > 0 and extra[0] is not None:
                    joint.set_max_velocity(extra[0])
                if len(extra) > 1 and extra[1]:
                    joint.set_armature([float(extra[1])])
            if disable_gravity:
                for link in art.links:
                    link.disable_gravity = True
            if solver_iterations is not None:
                art.set_solver_position_iterations(int(solver_iterations[0]))
                art.set_solver_velocity_iterations(int(solver_iterations[1]))
            arts.append(art)
            joints.append(active)
            links.append(list(art.links))
        group = _ArticulationGroup(arts, joints, arts[0].dof, [j.name for j in joints[0]],
                                   [l.name for l in links[0]], links)
        self._arts.append(group)
        return len(self._arts) - 1

    def add_articulation_from_spec(self, specs: Sequence[Articulation], name: str) -> int:
        """Build one articulation per env from an authoring ``Articulation`` (primitive-shape
        links and ``Joint`` specs; no file), root link at env origin ``i`` plus ``specs[i].pose``.

        Contract (every backend implements it the same way):
            - ``specs``: one per env, all with the same links and joints (the same spec repeated
              for a homogeneous scene). Link shapes are placed at their link-frame poses with
              their materials and densities (mass = sum over colliding shapes); a joint moves
              along / about its ``axis`` (child frame) from ``origin`` (child frame in the
              parent frame at position 0) within ``limits``, with the joint's friction
              coefficient and viscous damping (a zero-stiffness drive; no drive target).
            - the root link is fixed in the world iff ``spec.fix_base``.
            - every link collides with the ground, with the props and robots of its own env, and
              not with other links of the same articulation (nor with other envs).
            - qpos starts at each joint's ``default_position``, velocities at zero.
            - the returned id addresses an articulation group like ``add_articulation``'s:
              ``qpos``/``qvel``/``root_pose``/``root_velocity``/``link_pose``/``qlimits``/
              ``articulation_info``/``link_segmentation_ids`` read it, ``set_qpos``/``set_qvel``/
              ``set_root_pose``/``set_root_velocity`` write it; active joints and links are in
              ``specs[0].links`` order.

        Raises:
            ValueError: not one spec per env, or specs of different structure.
            RuntimeError: after ``finalize()``, or more than 30 such articulation groups.
        """
        self._check_building()
        if len(specs) != self.num_envs:
            raise ValueError(f"add_articulation_from_spec: need one spec per env ({self.num_envs}), got {len(specs)}")
        structure = [(l.name, l.parent, l.joint and (l.joint.kind, l.joint_name)) for l in specs[0].links]
        if any([(l.name, l.parent, l.joint and (l.joint.kind, l.joint_name)) for l in s.links] != structure for s in specs):
            raise ValueError("add_articulation_from_spec: every env's articulation needs the same links and joints")
        if self._spec_articulations >= 30:
            raise RuntimeError("physx_cpu: at most 30 articulated props per scene (one self-collision bit each)")
        self_bit = 1 << (30 - self._spec_articulations)  # bit 31 is the robots'
        self._spec_articulations += 1
        arts, joints, links = [], [], []
        for i, spec in enumerate(specs):
            g = env_bits(i)
            art = build_articulation(self.scenes[i], spec, f"{name}_{i}", [g[0], g[1], self_bit, 0], visual=self.render)
            pose = spec.pose
            art.set_root_pose(sapien.Pose(p=np.asarray(pose.position) + self.origins[i], q=pose.quaternion))
            art.set_qpos(np.array([l.joint.default_position for l in spec.active_links], dtype=np.float32))
            arts.append(art)
            joints.append(art.get_active_joints())
            links.append(list(art.links))
        group = _ArticulationGroup(arts, joints, arts[0].dof, [j.name for j in joints[0]],
                                   [l.name for l in links[0]], links)
        self._arts.append(group)
        return len(self._arts) - 1

    def env_collision_groups(self) -> list[list[int]]:
        """Collision groups ``[g0, g1, g2, g3]`` of each env's prop shapes (robot links add g2 = bit 31)."""
        return [env_bits(i) for i in range(self.num_envs)]

    def _check_building(self) -> None:
        if self._finalized:
            raise RuntimeError("physx_cpu: cannot add bodies after the scene is finalised")
