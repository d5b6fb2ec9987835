"""Per-env physical and visual parameters of built bodies, joints, lights and cameras.

A mixin of ``PhysxCpuBackend`` (``physx_cuda`` inherits it): eight ``SimBackend`` methods that
read and write the parameters domain randomization changes, one env row at a time, on the SAPIEN
objects of the listed envs only. Callers (``Prop``, ``Robot``, ``Lights``, ``SensorCamera``)
validate values first; these methods trust their input. Reads are fresh float32 numpy arrays.

Contract for every backend (``sim/backend.py``):

- ``rigid_param(gid, name)`` -> (N,) or (N, 3) / ``set_rigid_param(gid, name, env_ids, values)``:
  ``mass`` [kg] (0 for static and kinematic bodies, which have none; a write sets the
  principal inertia to the built inertia x new mass / built mass, so the mass distribution
  keeps its shape and repeated writes never drift),
  ``inertia`` (read only, (N, 3) principal moments [kg m^2] in the body's mass frame),
  ``static_friction``, ``dynamic_friction`` [-], ``restitution`` [-],
  ``linear_damping`` [1/s], ``angular_damping`` [1/s], ``color`` ((N, 4) RGBA in [0, 1];
  needs rendering).
- ``joint_param(gid, name)`` -> (N, dof) / ``set_joint_param(gid, name, env_ids, values)``:
  ``stiffness`` [N/m or Nm/rad], ``damping`` [Ns/m or Nms/rad], ``force_limit`` [N or Nm]
  (the PD drive), ``friction`` (PhysX 5's joint friction coefficient [-]), ``armature`` [kg or kg m^2]; ``values`` (k, dof).
- ``light_param(name)`` / ``set_light_param(name, env_ids, values)``: ``ambient`` (N, 3) RGB,
  ``color`` (N, L, 3) RGB and ``intensity`` (N, L) of the L directional lights (the renderer
  gets ``color * intensity``), ``direction`` (N, L, 3) unit vectors, world frame (the way the
  light travels). Needs rendering.
- ``camera_pose(name)`` -> (N, 7) / ``set_camera_pose(name, env_ids, pose)``: world pose
  ``[x, y, z, qw, qx, qy, qz]`` of camera ``name`` in each env (SAPIEN's camera axes: +x
  forward, +z up); for a camera riding on a link, its pose in the link's frame. Needs
  rendering (cameras exist only then).
- ``set_rigid_texture(gid, env_ids, textures)``: a ``Texture`` (``authoring/textures.py``) or None
  (the base colour alone) per listed env on every render shape of rigid group ``gid``; the
  surface shows it times its colour. Needs rendering.
- ``ground_color()`` -> (N, 4) / ``set_ground_color(env_ids, rgba)``, ``set_ground_texture(env_ids,
  textures)``: the floor's RGBA in [0, 1] and texture in each env (one render scene per env).
  Needs rendering.
- ``camera_fovy(name)`` -> (N,) / ``set_camera_fovy(name, env_ids, fovy)``: vertical field of
  view [rad] of camera ``name`` in each env; the horizontal one follows from the aspect ratio
  (SAPIEN's ``set_fovy(..., compute_x=True)``), and so do the intrinsics. Needs rendering.

Writes touch the envs in ``env_ids`` and nothing else, take effect at the next PhysX step or
rendered frame, and never change the simulation state (poses, velocities, contacts). Methods
marked "needs rendering" raise RuntimeError on a backend made with ``render=False``. A backend
that cannot change a parameter after its simulation is initialised raises NotImplementedError
naming the parameter. On PhysX's GPU system this is unverified here (no GPU library on our
machines; ``physx_cuda`` inherits these methods, and its emulator, a CPU system, accepts every
write): ManiSkill 3.0.1 allows body ``mass``, ``linear_damping`` and ``angular_damping`` only
before ``gpu_init`` (``@before_gpu_init`` in ``mani_skill/utils/structs/base.py``) and drive
gains at any time, and leaves joint friction open (``articulation_joint.py``).

Measured on SAPIEN 3.0.3 (CPU): ``PhysxRigidBodyComponent.mass = m`` leaves the inertia as it
was, hence the explicit scaling; every prop body here gets its own ``PhysxMaterial`` at build
time (``sim/builders.py``), and both mutating that material and replacing it with
``set_physical_material`` change the sliding of that env's body at the next step (a cube at
1 m/s slid 0.165 m with friction 0.3 and 0.074 m with 1.0, the other envs unchanged). Writes
here replace the material (a new ``PhysxMaterial`` per written shape), so no env can reach
another env's material even if one were shared.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import sapien
import sapien.physx as physx

from simulo_envs.sim.render import tinted_texture

RIGID_PARAMS = ("mass", "inertia", "static_friction", "dynamic_friction", "restitution",
                "linear_damping", "angular_damping", "color")
JOINT_PARAMS = ("stiffness", "damping", "force_limit", "friction", "armature")
LIGHT_PARAMS = ("ambient", "color", "intensity", "direction")

_MATERIAL = {"static_friction": 0, "dynamic_friction": 1, "restitution": 2}


def _check(name: str, known: tuple, what: str) -> None:
    if name not in known:
        raise KeyError(f"unknown {what} parameter {name!r}; known: {list(known)}")


class BackendParamsMixin:
    """Per-env parameter reads and writes (see the module docstring). Expects ``_rigid``,
    ``_arts``, ``scenes``, ``cameras``, ``origins``, ``render``, ``num_envs`` and
    ``_texture_patterns`` (a dict) of the backend."""

    # ------------------------------------------------------------------ rigid bodies
    def rigid_param(self, gid: int, name: str, env_ids: Optional[np.ndarray] = None) -> np.ndarray:
        """float32 (N,) value of parameter ``name`` of rigid group ``gid`` per env ((N, 3) for
        ``inertia``, (N, 4) for ``color``); see the module docstring for names and units. With
        ``env_ids``, only those rows (k, ...), in that order."""
        _check(name, RIGID_PARAMS, "rigid body")
        group = self._rigid[gid]
        ids = _rows(env_ids, self.num_envs)
        if name == "color":
            self._require_render()
            return np.array([render_color(group.entities[i]) for i in ids], dtype=np.float32).reshape(len(ids), 4)
        if name in _MATERIAL:
            col = _MATERIAL[name]
            return np.array([material_of(group.components[i])[col] for i in ids], dtype=np.float32)
        out = np.zeros((len(ids), 3) if name == "inertia" else len(ids), dtype=np.float32)
        for row, i in enumerate(ids):
            if group.kinds[i] == "rigid":
                out[row] = getattr(group.components[i], name)
        return out

    def set_rigid_param(self, gid: int, name: str, env_ids: np.ndarray, values: np.ndarray) -> None:
        """Write parameter ``name`` of rigid group ``gid`` in ``env_ids``: ``values`` (k,) ((k, 4)
        RGBA for ``color``). ``mass`` scales the inertia with it; static and kinematic bodies
        ignore ``mass`` and damping (callers refuse them). Not ``inertia`` (read only)."""
        _check(name, RIGID_PARAMS, "rigid body")
        if name == "inertia":
            raise KeyError("inertia is read only: it follows the mass (set 'mass')")
        group = self._rigid[gid]
        if name == "color":
            self._require_render()
            for row, i in enumerate(np.asarray(env_ids).tolist()):
                for shape in _render_shapes(group.entities[i]):
                    shape.material.base_color = [float(v) for v in values[row]]
                    _show_texture(shape.material, self._patterns.get(("rigid", gid, i)))
            return
        for row, i in enumerate(np.asarray(env_ids).tolist()):
            comp, value = group.components[i], float(values[row])
            if name in _MATERIAL:
                coeffs = list(material_of(comp))
                coeffs[_MATERIAL[name]] = value
                for shape in comp.collision_shapes:
                    shape.set_physical_material(physx.PhysxMaterial(*coeffs))
            elif group.kinds[i] != "rigid":
                continue
            elif name == "mass":
                built_mass, built_inertia = self._built_mass(gid)
                comp.inertia = built_inertia[i] * (value / built_mass[i])
                comp.mass = value
            else:
                setattr(comp, name, value)

    def _built_mass(self, gid: int) -> tuple:
        """Mass (N,) and principal inertia (N, 3) of group ``gid`` as built, recorded at the first
        mass write: inertia is always rescaled from these, so a sequence of mass writes never
        accumulates rounding (two writes of the same mass give bit-identical bodies)."""
        built = self.__dict__.setdefault("_built_masses", {})
        if gid not in built:
            comps = self._rigid[gid].components
            built[gid] = (np.array([getattr(c, "mass", 0.0) for c in comps], dtype=np.float64),
                          np.array([getattr(c, "inertia", np.zeros(3)) for c in comps], dtype=np.float64))
        return built[gid]

    # ------------------------------------------------------------------ joints
    def joint_param(self, gid: int, name: str, env_ids: Optional[np.ndarray] = None) -> np.ndarray:
        """float32 (N, dof) value of joint parameter ``name`` of articulation group ``gid``; with
        ``env_ids``, only those rows (k, dof)."""
        _check(name, JOINT_PARAMS, "joint")
        group = self._arts[gid]
        ids = _rows(env_ids, self.num_envs)
        out = np.empty((len(ids), group.dof), dtype=np.float32)
        for row, i in enumerate(ids):
            out[row] = [float(np.asarray(getattr(j, name)).reshape(-1)[0]) for j in group.joints[i]]
        return out

    def set_joint_param(self, gid: int, name: str, env_ids: np.ndarray, values: np.ndarray) -> None:
        """Write joint parameter ``name`` (k, dof) of articulation group ``gid`` in ``env_ids``.
        The drive keeps its target and mode ("force") when its gains change."""
        _check(name, JOINT_PARAMS, "joint")
        group = self._arts[gid]
        for row, i in enumerate(np.asarray(env_ids).tolist()):
            for joint, value in zip(group.joints[i], values[row].tolist()):
                if name in ("stiffness", "damping", "force_limit"):
                    drive = {"stiffness": joint.stiffness, "damping": joint.damping, "force_limit": joint.force_limit}
                    drive[name] = value
                    joint.set_drive_properties(drive["stiffness"], drive["damping"], drive["force_limit"], "force")
                elif name == "friction":
                    joint.friction = value
                else:
                    joint.set_armature(np.full(joint.dof, value, dtype=np.float32))

    # ------------------------------------------------------------------ textures and the floor
    def set_rigid_texture(self, gid: int, env_ids: np.ndarray, textures: list) -> None:
        """Put ``textures[row]`` (a ``Texture`` or None) on rigid group ``gid``'s render shapes in
        env ``env_ids[row]``, tinted by their colour (``tinted_texture``)."""
        self._require_render()
        group = self._rigid[gid]
        for i, texture in zip(np.asarray(env_ids).tolist(), textures):
            self._patterns[("rigid", gid, i)] = texture
            for shape in _render_shapes(group.entities[i]):
                _show_texture(shape.material, texture)

    def ground_color(self) -> np.ndarray:
        """float32 (N, 4) RGBA of the floor in each env (render scene per env)."""
        return np.stack([render_color(g) for g in self._ground_entities()]).astype(np.float32)

    def set_ground_color(self, env_ids: np.ndarray, values: np.ndarray) -> None:
        """Write the floor's RGBA ``values`` (k, 4) in ``env_ids`` (its texture, if any, re-tinted)."""
        grounds = self._ground_entities()
        for row, i in enumerate(np.asarray(env_ids).tolist()):
            for shape in _render_shapes(grounds[i]):
                shape.material.base_color = [float(v) for v in values[row]]
                _show_texture(shape.material, self._patterns.get(("ground", i)))

    def set_ground_texture(self, env_ids: np.ndarray, textures: list) -> None:
        """Put ``textures[row]`` (a ``Texture`` or None) on the floor of env ``env_ids[row]``, tinted
        by its colour."""
        grounds = self._ground_entities()
        for i, texture in zip(np.asarray(env_ids).tolist(), textures):
            self._patterns[("ground", i)] = texture
            for shape in _render_shapes(grounds[i]):
                _show_texture(shape.material, texture)

    def _ground_entities(self) -> list:
        self._require_render()
        grounds = getattr(self, "_grounds", [])
        if len(grounds) != self.num_envs:
            raise RuntimeError("the floor's colour and texture need a ground and one render scene per env")
        return grounds

    @property
    def _patterns(self) -> dict:
        """``("rigid", gid, env)`` or ``("ground", env)`` -> the ``Texture`` shown there (None: none);
        the backend's ``_texture_patterns``."""
        return self._texture_patterns

    # ------------------------------------------------------------------ lights
    def _light_state(self):
        self._require_render()
        state = getattr(self, "_light_params", None)
        if state is None:
            raise RuntimeError("no lights yet: add_lights has not run")
        return state

    def light_param(self, name: str, env_ids: Optional[np.ndarray] = None) -> np.ndarray:
        """float32 light parameter ``name`` of every env: ``ambient`` (N, 3), ``color`` (N, L, 3),
        ``intensity`` (N, L), ``direction`` (N, L, 3) (read from the light poses); with
        ``env_ids``, only those rows."""
        _check(name, LIGHT_PARAMS, "light")
        state = self._light_state()
        ids = _rows(env_ids, self.num_envs)
        if name == "ambient":
            return np.array([self.scenes[i].ambient_light for i in ids], dtype=np.float32).reshape(len(ids), 3)
        if name == "direction":
            out = np.zeros((len(ids), state["color"].shape[1], 3), dtype=np.float32)
            for row, i in enumerate(ids):
                for j, light in enumerate(state["lights"][i]):
                    out[row, j] = light.pose.to_transformation_matrix()[:3, 0]
            return out
        return state[name][ids]

    def set_light_param(self, name: str, env_ids: np.ndarray, values: np.ndarray) -> None:
        """Write light parameter ``name`` in ``env_ids``: ``values`` (k, 3), (k, L, 3) or (k, L)
        as ``light_param`` returns them; directions are normalised (non-zero, checked by callers)."""
        _check(name, LIGHT_PARAMS, "light")
        state = self._light_state()
        ids = np.asarray(env_ids).tolist()
        if name == "ambient":
            for row, i in enumerate(ids):
                self.scenes[i].ambient_light = [float(v) for v in values[row]]
            return
        for row, i in enumerate(ids):
            if name in ("color", "intensity"):
                state[name][i] = values[row]
            for j, light in enumerate(state["lights"][i]):
                if name == "direction":
                    d = np.asarray(values[row, j], dtype=np.float64)
                    light.pose = sapien.Pose(light.pose.p, sapien.math.shortest_rotation([1, 0, 0], d / np.linalg.norm(d)))
                else:
                    light.color = [float(c) for c in state["color"][i, j] * state["intensity"][i, j]]

    def _record_lights(self, lights_per_env: list, colors) -> None:
        """Keep the light components ``add_lights`` made (per env, a list of L) and their RGB."""
        colors = np.asarray(colors, dtype=np.float32).reshape(-1, 3)
        self._light_params = {
            "lights": lights_per_env,
            "color": np.repeat(colors[None], self.num_envs, axis=0),
            "intensity": np.ones((self.num_envs, len(colors)), dtype=np.float32),
        }

    # ------------------------------------------------------------------ cameras
    def camera_pose(self, name: str) -> np.ndarray:
        """float32 (N, 7) world pose ``[x, y, z, qw, qx, qy, qz]`` of camera ``name`` per env.

        Raises:
            KeyError: no camera ``name``."""
        self._require_render()
        rig = self._camera_rig(name)
        out = np.empty((self.num_envs, 7), dtype=np.float32)
        for i, camera in enumerate(rig.cameras):
            pose = camera.get_local_pose() if rig.mounted else camera.entity.pose
            out[i, :3], out[i, 3:] = pose.p, pose.q
        return out

    def set_camera_pose(self, name: str, env_ids: np.ndarray, pose: np.ndarray) -> None:
        """Move camera ``name`` of ``env_ids`` to world poses ``pose`` (k, 7), unit quaternions; a
        camera riding on a link to poses in the link's frame (the link itself never moves)."""
        self._require_render()
        rig = self._camera_rig(name)
        for row, i in enumerate(np.asarray(env_ids).tolist()):
            p = np.asarray(pose[row], dtype=np.float64)
            if rig.mounted:
                rig.cameras[i].set_local_pose(sapien.Pose(p=p[:3], q=p[3:7]))
            else:
                rig.cameras[i].entity.set_pose(sapien.Pose(p=p[:3], q=p[3:7]))

    def camera_fovy(self, name: str) -> np.ndarray:
        """float32 (N,) vertical field of view [rad] of camera ``name`` per env.

        Raises:
            KeyError: no camera ``name``."""
        self._require_render()
        return np.array([camera.fovy for camera in self._camera_rig(name).cameras], dtype=np.float32)

    def set_camera_fovy(self, name: str, env_ids: np.ndarray, fovy: np.ndarray) -> None:
        """Set the vertical field of view [rad] (k,) of camera ``name`` in ``env_ids``, each in
        (0, pi); the horizontal one follows the aspect ratio."""
        self._require_render()
        cameras = self._camera_rig(name).cameras
        for row, i in enumerate(np.asarray(env_ids).tolist()):
            cameras[i].set_fovy(float(fovy[row]), compute_x=True)

    def _camera_rig(self, name: str):
        rig = self.cameras.get(name)
        if rig is None:
            raise KeyError(f"no camera {name!r}; cameras: {sorted(self.cameras)}")
        return rig


def _rows(env_ids: Optional[np.ndarray], num_envs: int) -> list[int]:
    return list(range(num_envs)) if env_ids is None else np.asarray(env_ids).tolist()


def material_of(comp) -> tuple[float, float, float]:
    """``(static friction, dynamic friction, restitution)`` of a body's first collision shape
    (zeros for a body without one)."""
    shapes = comp.collision_shapes
    if not shapes:  # a visual-only marker: no contact material
        return 0.0, 0.0, 0.0
    mat = shapes[0].physical_material
    return mat.static_friction, mat.dynamic_friction, mat.restitution


def _show_texture(material, texture) -> None:
    """Give ``material`` pattern ``texture`` tinted by its base colour, or no texture (None).

    SAPIEN 3.0.3's shaders take a base colour texture instead of the base colour, not times it
    (``vulkan_shader/default/gbuffer.frag``: ``outAlbedo = texture(...)`` else ``baseColor``), so
    the tint is baked into a texture of the material's own (``tinted_texture``). SAPIEN sends a
    texture change to the renderer only with the material's next scalar change (measured: a texture
    set after the first picture showed only once the colour was written too), so the colour is
    written again."""
    if texture is None and material.base_color_texture is None:
        return
    material.base_color_texture = None if texture is None else tinted_texture(texture, material.base_color)
    material.base_color = list(material.base_color)


def _render_shapes(entity) -> list:
    body = entity.find_component_by_type(sapien.render.RenderBodyComponent)
    return [] if body is None else list(body.render_shapes)


def render_color(entity) -> np.ndarray:
    """float32 (4,) RGBA base colour of the entity's first render shape (ones without one)."""
    shapes = _render_shapes(entity)
    return np.asarray(shapes[0].material.base_color, dtype=np.float32) if shapes else np.ones(4, dtype=np.float32)
