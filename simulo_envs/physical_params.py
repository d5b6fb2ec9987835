"""Per-env physical parameters of props and articulations: read, validate, write (mixins of
``Prop`` and of ``ArticulationObject``, the base of ``Robot`` and ``ArticulatedProp``).

What domain randomization changes, on the objects a task already holds: a prop's mass (its
inertia follows), contact material, damping, colour and build scale; a robot's (or an
articulated prop's) joint drive gains, joint friction and armature. Each writer takes ``env_ids`` (any ``normalize_env_ids``
form; None: every env) and values for those envs only, validates everything first (wrong shape,
NaN/inf or out of range: ValueError, nothing written) and touches no other env. Reads return
fresh float32 tensors on the env's device, read back from the simulation.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from simulo_envs.authoring.scaling import scaled_shape
from simulo_envs.authoring.textures import texture, texture_indices
from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.params_common import check_range, per_env_values
from simulo_envs.tensors import to_device


class PropParamsMixin:
    """Parameters of a ``Prop`` (see the module docstring). Contact material: PhysX combines two
    touching shapes' coefficients by their average (its default combine mode)."""

    # ------------------------------------------------------------------ reads
    def _rigid_param(self, name: str) -> torch.Tensor:
        backend = self._require_attached()
        return to_device(backend.rigid_param(self._gid, name), self._device)

    @property
    def mass(self) -> torch.Tensor:
        """(num_envs,) mass [kg] per env; 0 where the env's body is static or kinematic. Fresh."""
        return self._rigid_param("mass")

    @property
    def inertia(self) -> torch.Tensor:
        """(num_envs, 3) principal moments of inertia [kg m^2] in the body's mass frame; 0 for
        static and kinematic bodies. Fresh."""
        return self._rigid_param("inertia")

    @property
    def static_friction(self) -> torch.Tensor:
        """(num_envs,) static friction coefficient [-] of the prop's contact material. Fresh."""
        return self._rigid_param("static_friction")

    @property
    def dynamic_friction(self) -> torch.Tensor:
        """(num_envs,) dynamic (sliding) friction coefficient [-]. Fresh."""
        return self._rigid_param("dynamic_friction")

    @property
    def restitution(self) -> torch.Tensor:
        """(num_envs,) restitution (bounciness) in [0, 1]. Fresh."""
        return self._rigid_param("restitution")

    @property
    def linear_damping(self) -> torch.Tensor:
        """(num_envs,) linear velocity damping [1/s] (PhysX: dv/dt = -damping * v); 0 for static
        and kinematic bodies. Fresh."""
        return self._rigid_param("linear_damping")

    @property
    def angular_damping(self) -> torch.Tensor:
        """(num_envs,) angular velocity damping [1/s]; 0 for static and kinematic bodies. Fresh."""
        return self._rigid_param("angular_damping")

    @property
    def color(self) -> torch.Tensor:
        """(num_envs, 4) RGBA in [0, 1] of the prop's visual. Fresh.

        Raises:
            RuntimeError: the env does not render (no visuals exist)."""
        return self._rigid_param("color")

    @property
    def scale(self) -> torch.Tensor:
        """(num_envs,) factor each env's shape was built at (``set_scale``; 1 when unscaled). Fresh."""
        self._require_attached()
        return self._built_scale.clone().to(self._device)

    # ------------------------------------------------------------------ writes
    def _write_rigid(self, name: str, values: np.ndarray, ids: np.ndarray) -> None:
        if len(ids):
            self._backend.set_rigid_param(self._gid, name, ids, values)

    def _ids(self, env_ids: EnvIds) -> np.ndarray:
        self._require_attached()
        return normalize_env_ids(env_ids, self._num_envs)

    def _require_dynamic(self, ids: np.ndarray, what: str) -> None:
        static = [int(i) for i in ids if not self._dynamic[i]]
        if static:
            raise ValueError(f"{what} applies to dynamic bodies; env {static[0]}'s {self._name!r} is static or "
                             "kinematic (PhysX gives those no mass); nothing was written")

    def set_mass(self, mass, env_ids: EnvIds = None) -> None:
        """Set the mass [kg] of the prop in ``env_ids``; the inertia becomes the built inertia x
        new mass / built mass (same shape of mass distribution: a uniform cube stays uniform;
        writing a mass again gives the same body bit for bit, whatever was written between).

        Args:
            mass: (k,) kg, > 0, for ``k = len(env_ids)``; a float applies to every listed env.
            env_ids: envs to write (None: all).

        Raises:
            ValueError: wrong shape, NaN/inf, mass <= 0, or a static/kinematic body in a listed
                env; nothing is written. RuntimeError: not attached.
        """
        ids = self._ids(env_ids)
        values = per_env_values(mass, len(ids), (), "mass")
        check_range(values, "mass", "kg", low=0.0, low_open=True)
        self._require_dynamic(ids, "mass")
        self._write_rigid("mass", values, ids)

    def set_material(self, static_friction=None, dynamic_friction=None, restitution=None,
                     env_ids: EnvIds = None) -> None:
        """Set the contact material of the prop in ``env_ids``; None leaves a coefficient as it is.

        Args:
            static_friction: (k,) coefficient >= 0 [-] (a float: every listed env).
            dynamic_friction: (k,) coefficient >= 0 [-].
            restitution: (k,) in [0, 1] [-].
            env_ids: envs to write (None: all).

        Each env's body has its own PhysX material: no other env changes. Takes effect at the
        next physics step.

        Raises:
            ValueError: wrong shape, NaN/inf, a negative friction or a restitution outside
                [0, 1]; nothing is written (no coefficient, no env).
        """
        ids = self._ids(env_ids)
        writes = []
        for name, value, high in (("static_friction", static_friction, None),
                                  ("dynamic_friction", dynamic_friction, None), ("restitution", restitution, 1.0)):
            if value is not None:
                values = per_env_values(value, len(ids), (), name)
                check_range(values, name, "", low=0.0, high=high)
                writes.append((name, values))
        for name, values in writes:
            self._write_rigid(name, values, ids)

    def set_damping(self, linear=None, angular=None, env_ids: EnvIds = None) -> None:
        """Set velocity damping [1/s] of the prop in ``env_ids``; None leaves one as it is.

        Args:
            linear: (k,) linear damping >= 0 [1/s] (PhysX: dv/dt = -linear * v).
            angular: (k,) angular damping >= 0 [1/s].

        Raises:
            ValueError: wrong shape, NaN/inf, a negative value, or a static/kinematic body in a
                listed env; nothing is written.
        """
        ids = self._ids(env_ids)
        writes = []
        for name, value in (("linear_damping", linear), ("angular_damping", angular)):
            if value is not None:
                values = per_env_values(value, len(ids), (), name)
                check_range(values, name, "1/s", low=0.0)
                writes.append((name, values))
        if writes:
            self._require_dynamic(ids, "damping")
        for name, values in writes:
            self._write_rigid(name, values, ids)

    def set_color(self, color, env_ids: EnvIds = None) -> None:
        """Set the visual colour of the prop in ``env_ids``.

        Args:
            color: (k, 4) RGBA or (k, 3) RGB (alpha kept) in [0, 1]; one row applies to every
                listed env.

        Raises:
            ValueError: wrong shape, NaN/inf or a channel outside [0, 1]; nothing is written.
            RuntimeError: the env does not render (no visuals exist).
        """
        ids = self._ids(env_ids)
        channels = 3 if np.shape(color.detach().cpu() if isinstance(color, torch.Tensor) else color)[-1:] == (3,) else 4
        values = per_env_values(color, len(ids), (channels,), "color")
        check_range(values, "color", "", low=0.0, high=1.0)
        if channels == 3 and len(ids):
            current = self._backend.rigid_param(self._gid, "color", ids)
            values = np.concatenate([values, current[:, 3:4]], axis=1)
        self._write_rigid("color", values, ids)

    def set_texture(self, index, env_ids: EnvIds = None) -> None:
        """Put a texture of the procedural set on the prop in ``env_ids``: ``index`` (k,) or one
        int, into ``TEXTURE_NAMES`` of ``simulo_envs/authoring/textures.py`` (0: ``"plain"``, the
        colour alone); the prop shows the pattern times its colour.

        Raises:
            ValueError: wrong shape, or an index that is not a whole number in range (the message
                lists the set); nothing is written. RuntimeError: the env does not render.
        """
        ids = self._ids(env_ids)
        indices = texture_indices(per_env_values(index, len(ids), (), "texture"))
        if len(ids):
            self._backend.set_rigid_texture(self._gid, ids, [texture(i) for i in indices])

    def set_scale(self, scale, env_ids: EnvIds = None) -> None:
        """Scale the prop's shape per env. Shape dimensions are multiplied by the factor, about
        the bottom of the shape at its spawn pose: a prop that rests on a surface at spawn still
        does. An explicit ``Physics.rigid(mass=...)`` keeps its mass; a density gives the scaled
        volume's mass.

        Before the scene is built (in ``_load_scene`` or a startup randomization term) it sets the
        factors the bodies are built at, for every env (``env_ids`` must be None). Once built, it
        rebuilds the bodies of ``env_ids`` (None: every env) at the new factors and leaves the
        other envs' bodies alone: each rebuilt body starts at its spawn pose, at rest, and keeps
        its friction, restitution, damping, colour and any mass written to it (the backend's
        ``rebuild_rigid``). Factors are absolute (relative to the authored shape), not relative
        to the current build.

        Args:
            scale: a float (every listed env) or one factor > 0 per env, shape (num_envs,) before
                the build, (len(env_ids),) after it.
            env_ids: after the build, the envs to rebuild (any ``normalize_env_ids`` form).

        Raises:
            ValueError: NaN/inf or a factor <= 0, or a length other than the envs' (checked now
                after the build, when the scene is built before it); ``env_ids`` before the build.
            RuntimeError: a backend that cannot rebuild one env's bodies (``physx_cuda``: the
                whole scene must be rebuilt). Nothing changes when it raises.
        """
        raw = scale.detach().cpu().numpy() if isinstance(scale, torch.Tensor) else scale
        ndim = np.ndim(raw)
        if ndim > 1:
            raise ValueError(f"scale must be a float or a 1-D sequence (num_envs,), got shape {np.shape(raw)}")
        if self._backend is not None:
            ids = self._ids(env_ids)
            values = per_env_values(raw, len(ids), (), "scale")
            check_range(values, "scale", "", low=0.0, low_open=True)
            if len(ids):
                self._rebuild_scaled(ids, values.astype(np.float32))
            return
        if env_ids is not None:
            raise ValueError(f"prop {self._name!r}: set_scale(env_ids=...) rebuilds envs of a built scene; before the "
                             "build, give one factor per env (or one for all) without env_ids")
        values = per_env_values(raw, 1 if ndim == 0 else len(raw), (), "scale")
        check_range(values, "scale", "", low=0.0, low_open=True)
        self._pending_scale = values if ndim else float(values[0])

    def _built_shapes(self, shapes: list) -> list:
        """Per env, the shape to build (``shapes[i]`` at its ``set_scale`` factor); records the
        factors and which envs' bodies are dynamic."""
        n = len(shapes)
        pending = getattr(self, "_pending_scale", None)
        factors = np.ones(n, dtype=np.float32) if pending is None else np.broadcast_to(
            np.asarray(pending, dtype=np.float32), np.shape(pending) or (n,)).copy()
        if factors.shape != (n,):
            raise ValueError(f"prop {self._name!r}: set_scale got {factors.shape[0]} factors for {n} envs")
        shapes = [s if f == 1.0 else scaled_shape(s, float(f)) for s, f in zip(shapes, factors)]
        self._built_scale = torch.from_numpy(factors)
        self._dynamic = np.array([s.collision and s.physics.kind == "rigid" for s in shapes])
        return shapes


class JointParamsMixin:
    """Joint parameters of a ``Robot`` or ``ArticulatedProp`` (see the module docstring).
    ``joints`` selects columns by joint name (``joint_names``); None means every active joint."""

    def _joint_param(self, name: str) -> torch.Tensor:
        backend = self._require_attached()
        return to_device(backend.joint_param(self._gid, name), self._device)

    @property
    def joint_stiffness(self) -> torch.Tensor:
        """(num_envs, dof) PD drive stiffness [N/m prismatic, Nm/rad revolute]. Fresh."""
        return self._joint_param("stiffness")

    @property
    def joint_damping(self) -> torch.Tensor:
        """(num_envs, dof) PD drive damping [Ns/m prismatic, Nms/rad revolute]. Fresh."""
        return self._joint_param("damping")

    @property
    def joint_force_limit(self) -> torch.Tensor:
        """(num_envs, dof) drive force limit [N prismatic, Nm revolute]. Fresh."""
        return self._joint_param("force_limit")

    @property
    def joint_friction(self) -> torch.Tensor:
        """(num_envs, dof) joint friction coefficient [-] (PhysX 5's articulation joint friction:
        the friction force or torque is this coefficient times the force the joint transmits,
        so only large values, 10-1000, slow a driven joint visibly). Fresh."""
        return self._joint_param("friction")

    @property
    def joint_armature(self) -> torch.Tensor:
        """(num_envs, dof) armature: inertia added to each joint [kg prismatic, kg m^2 revolute]
        (a motor's reflected rotor inertia). Fresh."""
        return self._joint_param("armature")

    def _joint_columns(self, joints: Optional[Sequence[str]]) -> list[int]:
        names = self.joint_names
        if joints is None:
            return list(range(len(names)))
        if isinstance(joints, str):
            joints = [joints]
        unknown = [j for j in joints if j not in names]
        if unknown:
            raise KeyError(f"robot {self._name!r} has no joint {unknown[0]!r}; joints: {names}")
        if len(set(joints)) != len(joints):
            raise ValueError(f"joints contains duplicates: {list(joints)}")
        return [names.index(j) for j in joints]

    def _write_joints(self, items, env_ids: EnvIds, joints) -> None:
        """Validate every ``(name, value, unit)`` of ``items`` for the selected rows/columns, then write."""
        backend = self._require_attached()
        ids = normalize_env_ids(env_ids, self._num_envs)
        cols = self._joint_columns(joints)
        checked = []
        for name, value, unit in items:
            if value is None:
                continue
            values = per_env_values(value, len(ids), (len(cols),), f"joint {name}")
            check_range(values, f"joint {name}", unit, low=0.0)
            checked.append((name, values))
        if not len(ids):
            return
        for name, values in checked:
            if len(cols) == self.dof:  # every joint given: nothing to read back
                full = np.empty_like(values)
                full[:, cols] = values
            else:
                full = backend.joint_param(self._gid, name, ids)
                full[:, cols] = values
            backend.set_joint_param(self._gid, name, ids, full)

    def set_joint_drive(self, stiffness=None, damping=None, env_ids: EnvIds = None,
                        joints: Optional[Sequence[str]] = None) -> None:
        """Set PD drive gains of ``joints`` in ``env_ids``; None leaves a gain as it is. Drive
        targets and force limits are kept.

        Args:
            stiffness: (k, J) >= 0 [N/m or Nm/rad] for ``J = len(joints)`` (all: dof); a float
                or one row (J,) applies to every listed env.
            damping: (k, J) >= 0 [Ns/m or Nms/rad].
            env_ids: envs to write (None: all). joints: joint names (None: every active joint).

        Raises:
            ValueError: wrong shape, NaN/inf or a negative value; nothing is written.
            KeyError: an unknown joint name.
        """
        self._write_joints((("stiffness", stiffness, "N/m or Nm/rad"), ("damping", damping, "Ns/m or Nms/rad")),
                           env_ids, joints)

    def set_joint_friction(self, friction, env_ids: EnvIds = None, joints: Optional[Sequence[str]] = None) -> None:
        """Set the joint friction coefficient (k, J) >= 0 [-] of ``joints`` in ``env_ids`` (see
        ``joint_friction``; arguments and errors as ``set_joint_drive``)."""
        self._write_joints((("friction", friction, ""),), env_ids, joints)

    def set_joint_armature(self, armature, env_ids: EnvIds = None, joints: Optional[Sequence[str]] = None) -> None:
        """Set joint armature (k, J) >= 0 [kg or kg m^2] of ``joints`` in ``env_ids`` (as ``set_joint_drive``)."""
        self._write_joints((("armature", armature, "kg or kg m^2"),), env_ids, joints)
