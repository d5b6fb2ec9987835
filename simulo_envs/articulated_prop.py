"""``ArticulatedProp``: an object with joints (a drawer, a door) whose batched root pose, qpos and
qvel you read and write per ``env_ids``.

The articulated counterpart of ``Prop`` (``simulo-prop.txt``), with the same conventions: built
procedurally from authoring data (an ``Articulation`` of primitive-shape ``Link``s and ``Joint``s;
nothing is loaded from a file or downloaded), world-frame state read straight through to the
backend, ``default_pose`` / ``default_qpos`` with each env's origin applied, and writers that take
``env_ids``, validate everything first and touch only the listed envs.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from simulo_envs.articulation import ArticulationObject, ArticulationState
from simulo_envs.authoring.articulation import Articulation
from simulo_envs.env_ids import EnvIds, normalize_env_ids


class ArticulatedPropState(ArticulationState):
    """Live state of an articulated prop, batched over envs, world frame, fresh tensors:
    ``root_pose`` (N, 7), ``root_linear_velocity`` / ``root_angular_velocity`` (N, 3), ``qpos`` /
    ``qvel`` (N, dof), ``link_pose(name)`` (N, 7). Raises RuntimeError until attached."""

    __slots__ = ()


class ArticulatedProp(ArticulationObject):
    """An articulated object built from an authoring ``Articulation``, cloned into every env.

    Args:
        articulation: the links and joints; its ``pose`` is the root link's env-local spawn pose.

    Raises:
        TypeError: ``articulation`` is not an ``Articulation``.

    Example (a drawer sliding out along -x, 0 to 0.3 m)::

        cabinet = ArticulatedProp(Articulation("Cabinet", links=[
            Link("body", [Cuboid("shell", (0.4, 0.4, 0.4), Pose([0, 0, 0.2]))]),
            Link("drawer", [Cuboid("front", (0.02, 0.36, 0.15))], parent="body",
                 joint=Joint.prismatic(axis=(-1, 0, 0), limits=(0, 0.3), origin=Pose([-0.21, 0, 0.3]))),
        ], pose=Pose([0.8, 0, 0])))
        scene.add(cabinet, at="/World/Cabinet")
        cabinet.state.qpos            # (num_envs, 1) drawer opening [m]
    """

    _kind = "ArticulatedProp"

    def __init__(self, articulation: Articulation):
        if not isinstance(articulation, Articulation):
            raise TypeError(f"ArticulatedProp needs an Articulation, got {type(articulation).__name__}")
        super().__init__(articulation.name)
        self._articulation = articulation
        self._state = ArticulatedPropState(self)
        self._numpy_state = ArticulatedPropState(self, np)
        self._default_pose: Optional[torch.Tensor] = None
        self._default_qpos: Optional[torch.Tensor] = None

    # ------------------------------------------------------------------ identity
    @property
    def articulation(self) -> Articulation:
        """The authoring data this prop spawns (links, joints, env-local spawn pose)."""
        return self._articulation

    # ------------------------------------------------------------------ state
    @property
    def state(self) -> ArticulatedPropState:
        """The live state accessor (the same object on every access); see ``ArticulatedPropState``."""
        return self._state

    @property
    def default_pose(self) -> torch.Tensor:
        """(num_envs, 7) root spawn pose ``[x, y, z, qw, qx, qy, qz]``, world frame: the
        articulation's pose offset by each env's origin. Fresh.

        Raises:
            RuntimeError: not attached yet.
        """
        self._require_attached()
        return self._default_pose.clone()

    @property
    def default_qpos(self) -> torch.Tensor:
        """(num_envs, dof) joint positions at spawn (each joint's ``default_position``) [m or rad]. Fresh.

        Raises:
            RuntimeError: not attached yet.
        """
        self._require_attached()
        return self._default_qpos.clone()

    def set_pose(self, pose, env_ids: EnvIds = None) -> None:
        """Teleport the root link (not control), world frame; the other links follow, qpos unchanged.

        Args:
            pose: ``(num_envs, 7)`` or ``(len(env_ids), 7)`` ``[x, y, z, qw, qx, qy, qz]``;
                quaternions are normalised before writing.
            env_ids: envs to write (any form of ``normalize_env_ids``); None writes all.

        Raises:
            RuntimeError: not attached. TypeError/IndexError/ValueError: bad ``env_ids``.
            ValueError: wrong shape, NaN/inf, or a zero quaternion; nothing is written.
        """
        self._write_rows("set_root_pose", pose, env_ids, "pose", 7, pose=True)

    def set_velocity(self, velocity, env_ids: EnvIds = None) -> None:
        """Set the root link's velocity ``(k, 6)`` ``[vx, vy, vz, wx, wy, wz]`` (m/s, rad/s),
        world frame, for ``env_ids``. A fixed base (``fix_base=True``) keeps zero velocity.

        Raises:
            RuntimeError: not attached. ValueError: wrong shape or NaN/inf; nothing is written.
        """
        self._write_rows("set_root_velocity", velocity, env_ids, "velocity", 6)

    def reset(self, env_ids: EnvIds = None) -> None:
        """Return ``env_ids`` (None: all) to ``default_pose`` and ``default_qpos`` at rest."""
        self._require_attached()
        ids = normalize_env_ids(env_ids, self._num_envs)
        rows = torch.from_numpy(ids)
        self.set_pose(self._default_pose[rows], ids)
        self.set_velocity(np.zeros((len(ids), 6), dtype=np.float32), ids)
        self.set_qpos(self._default_qpos[rows], ids)
        self.set_qvel(np.zeros((len(ids), self.dof), dtype=np.float32), ids)

    # ------------------------------------------------------------------ scene plumbing
    def _attach(self, backend, env_origins: torch.Tensor, device: torch.device) -> None:
        spec = self._articulation
        n = backend.num_envs
        gid = backend.add_articulation_from_spec([spec] * n, self._name or spec.name)
        self._bind_group(backend, gid, device)
        default = torch.tensor(spec.pose.to_list(), dtype=torch.float32).repeat(n, 1)
        default[:, :3] += env_origins.to("cpu", torch.float32)
        self._default_pose = default.to(self._device)
        qpos = [l.joint.default_position for l in spec.active_links]
        self._default_qpos = torch.tensor(qpos, dtype=torch.float32).repeat(n, 1).to(self._device)

    def __repr__(self) -> str:
        return f"ArticulatedProp(name={self._name!r}, path={self._path!r}, dof={self._articulation.dof})"
