"""``Robot``: an articulation cloned into every env, read and written through the backend.

Like ``Prop``, a Robot holds no SAPIEN object: after attach it holds a group id into the
backend's articulation buffers. Controllers (``simulo_envs.controllers``) write its PD drive
targets; tasks and agents read ``robot.state``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import torch

from simulo_envs.articulation import ArticulationObject, ArticulationState
from simulo_envs.authoring import Pose
from simulo_envs.env_ids import EnvIds
from simulo_envs.geometry import offset_pose, shift_jacobian
from simulo_envs.tensors import to_device, to_xp


@dataclass(frozen=True)
class JointDrive:
    """PD drive of one joint: ``stiffness`` [N/m or Nm/rad], ``damping`` [Ns/m or Nms/rad],
    ``force_limit`` [N or Nm], and optionally ``max_velocity`` [m/s or rad/s], the joint's speed
    limit (a servo's rated speed; None: PhysX's default, 100), and ``armature`` [kg m^2 or kg],
    inertia added to the joint's own (a geared servo's reflected rotor inertia; 0: none). A
    light link driven by a stiff drive without armature overshoots its joint limits when
    driven into them (PhysX's solver cannot stop it within one step)."""

    stiffness: float
    damping: float
    force_limit: float
    max_velocity: Optional[float] = None
    armature: float = 0.0


@dataclass(frozen=True)
class LinkMaterial:
    """Contact material overriding a link's URDF collision material."""

    static_friction: float
    dynamic_friction: float
    restitution: float = 0.0
    patch_radius: float = 0.0
    min_patch_radius: float = 0.0


@dataclass(frozen=True)
class RobotSpec:
    """Everything needed to build a robot.

    Attributes:
        urdf_path: URDF file (the root link is fixed at the env origin plus ``base_pose``).
        drives: one ``JointDrive`` per active joint, in URDF order.
        tcp_link: the link the tool centre point (TCP) is fixed to.
        tcp_offset: pose of the TCP in the ``tcp_link`` frame (identity: the link's own origin),
            for a robot whose asset has no link at its TCP (a point between jaws).
        base_pose: env-local pose of the root link.
        link_materials: link name -> ``LinkMaterial``.
        disable_gravity: links feel no gravity, as with a robot's own gravity compensation
            (Isaac Lab's Franka config does the same); PD targets are then tracked without sag.
        collision_boxes: link name -> ``((half_size (3,) [m], Pose in the link frame), ...)``:
            boxes replacing that link's URDF collision shapes (the URDF's mass and inertia stay),
            for links whose meshes' convex hulls would fill a gripper's opening.
        solver_iterations: ``(position, velocity)`` PhysX solver iterations of this robot's
            articulation (None: ``SimConfig.solver_position_iterations`` /
            ``solver_velocity_iterations``).
    """

    urdf_path: str
    drives: Sequence[JointDrive]
    tcp_link: str
    base_pose: Pose = field(default_factory=Pose)
    tcp_offset: Pose = field(default_factory=Pose)
    link_materials: dict = field(default_factory=dict)
    disable_gravity: bool = False
    collision_boxes: dict = field(default_factory=dict)
    solver_iterations: Optional[tuple[int, int]] = None


class RobotState(ArticulationState):
    """Live robot state (``ArticulationState``: qpos, qvel, root pose and velocity, link poses)
    plus the drive targets and the TCP pose; every member is a fresh float32 tensor.

    Raises RuntimeError until the robot is attached.
    """

    __slots__ = ()

    @property
    def drive_targets(self) -> torch.Tensor:
        """(num_envs, dof) PD position targets the controllers last wrote; fresh."""
        return self._read("drive_targets")

    @property
    def tcp_pose(self) -> torch.Tensor:
        """(num_envs, 7) TCP pose ``[x, y, z, qw, qx, qy, qz]``, world frame (``RobotSpec.tcp_link``
        moved by ``tcp_offset``); fresh."""
        robot = self._obj
        backend = robot._backend
        if backend is None:
            robot._require_attached()  # raises
        pose = backend.link_pose(robot._gid, robot._tcp_index)  # _tcp_raw, inline: read every step
        if robot._tcp_offset is not None:
            pose = offset_pose(pose, *robot._tcp_offset[type(pose)])
        if self._xp is np and type(pose) is np.ndarray:  # the CPU fast path: the backend's fresh array
            return pose
        return to_xp(pose, self._xp, robot._device)


class Robot(ArticulationObject):
    """An articulation built from a ``RobotSpec``, one copy per env at its origin.

    After the scene attaches it: ``dof``, ``joint_names``, ``link_names``, ``qlimits`` and the
    ``state`` accessor are available, and ``set_qpos`` / ``set_qvel`` / ``set_drive_targets``
    write the listed envs only.
    """

    _kind = "Robot"

    def __init__(self, spec: RobotSpec, name: str = "robot"):
        super().__init__(name)
        self.spec = spec
        self._state = RobotState(self)
        self._numpy_state = RobotState(self, np)
        self._qpos_listeners: list = []

    @property
    def state(self) -> RobotState:
        """The live state accessor (the same object on every access)."""
        return self._state

    def contact_forces(self, link_names: Sequence[str], prop, xp=torch):
        """(num_envs, len(link_names), 3) net contact force [N], world frame, that ``prop``
        exerts on each named link in each env, over the last physics step; zero where they do
        not touch, and zero in envs whose state was written (reset, ``set_state``, a pose or
        qpos write) since that step: PhysX computes contacts only when it steps. A fresh tensor
        on the env's device, or a numpy array with ``xp=numpy``.

        Raises:
            KeyError: no such link. RuntimeError: robot or prop not attached.
            ValueError: ``xp`` is neither ``torch`` nor ``numpy``.
        """
        backend = self._require_attached()
        prop._require_attached()
        return to_xp(backend.contact_forces(self._gid, self._link_indices(link_names), prop._gid), xp, self._device)

    def _link_indices(self, link_names: Sequence[str]) -> tuple[int, ...]:
        """``link_index`` of each name, remembered per tuple of names (a per-step lookup).

        Raises:
            KeyError: no such link.
        """
        key = tuple(link_names)
        cache = self.__dict__.get("_link_index_cache")
        if cache is None:
            cache = self._link_index_cache = {}
        indices = cache.get(key)
        if indices is None:
            indices = cache[key] = tuple(self.link_index(name) for name in key)
        return indices

    def jacobian(self, link_name: str) -> torch.Tensor:
        """(num_envs, 6, dof) Jacobian of link ``link_name`` at the current qpos, world frame:
        rows 0-2 linear velocity of the link origin [m/s per joint unit], rows 3-5 angular
        velocity [rad/s per joint unit]; fresh.

        Raises:
            KeyError: no such link.
        """
        backend = self._require_attached()
        return to_device(backend.link_jacobian(self._gid, self.link_index(link_name)), self._device)

    def tcp_jacobian(self) -> torch.Tensor:
        """(num_envs, 6, dof) Jacobian of the TCP (``RobotSpec.tcp_link`` moved by ``tcp_offset``)
        at the current qpos, world frame: rows 0-2 the TCP point's linear velocity [m/s per joint
        unit], rows 3-5 the angular velocity [rad/s per joint unit]; fresh.

        Raises:
            RuntimeError: not attached.
        """
        self._require_attached()
        return to_device(self._tcp_jacobian_raw(), self._device)

    def _tcp_raw(self):
        """Hot path: the TCP pose (N, 7) as the backend's own kind (numpy on physx_cpu, fresh)."""
        pose = self._backend.link_pose(self._gid, self._tcp_index)
        if self._tcp_offset is None:
            return pose
        return offset_pose(pose, *self._tcp_offset[type(pose)])

    def _tcp_jacobian_raw(self):
        """Hot path: ``tcp_jacobian`` as the backend's own kind (numpy on physx_cpu, fresh)."""
        jacobian = self._raw("link_jacobian", self._tcp_index)
        if self._tcp_offset is None:
            return jacobian
        link = self._raw("link_pose", self._tcp_index)
        return shift_jacobian(jacobian, self._tcp_raw()[:, :3] - link[:, :3])

    def _after_qpos_write(self, ids: np.ndarray) -> None:
        for ref in self._qpos_listeners:
            listener = ref()
            if listener is not None:
                listener(ids)

    def _add_qpos_listener(self, method) -> None:
        """Call the bound ``method(env_ids)`` (int64 numpy) after every ``set_qpos``: controllers
        whose state follows the arm (end-effector targets) re-anchor on the teleported pose.
        Held by a weak reference (no reference cycle between a robot and its controllers)."""
        self._qpos_listeners.append(weakref.WeakMethod(method))

    def set_drive_targets(self, targets, env_ids: EnvIds = None) -> None:
        """Set PD position targets ``(k, dof)`` for ``env_ids`` (None: all envs)."""
        self._write("set_drive_targets", targets, env_ids, "drive targets")

    def _set_drive_targets_trusted(self, targets: np.ndarray) -> None:
        """Hot path for controllers: all envs, already validated float32 ``(num_envs, dof)`` targets
        (a numpy array, or a tensor on the robot's device)."""
        self._backend.set_drive_targets(self._gid, None, targets)

    def _raw(self, what: str, *args):
        """Hot path: the backend's own result for ``what`` (``contact_forces``, ``link_pose``, ...),
        unconverted: a fresh numpy array on physx_cpu, a tensor on the GPU backends."""
        return getattr(self._backend, what)(self._gid, *args)

    def _array(self, what: str, *args) -> np.ndarray:
        """Hot path for CPU controllers: the backend's fresh numpy result for ``qpos``, ``qvel``,
        ``drive_targets``, ``link_pose(link_index)`` or ``link_jacobian(link_index)`` (a GPU
        backend's CPU tensor, as on the emulator, becomes a numpy view)."""
        value = getattr(self._backend, what)(self._gid, *args)
        return value.numpy() if isinstance(value, torch.Tensor) else value

    # ------------------------------------------------------------------ scene plumbing
    def _attach(self, backend, env_origins: torch.Tensor, device: torch.device) -> None:
        n = backend.num_envs
        base = torch.tensor(self.spec.base_pose.to_list(), dtype=torch.float64).repeat(n, 1)
        base[:, :3] += env_origins.to("cpu", torch.float64)
        materials = {k: vars(v) if not isinstance(v, dict) else v for k, v in self.spec.link_materials.items()}
        drives = [(d.stiffness, d.damping, d.force_limit, d.max_velocity, d.armature) for d in self.spec.drives]
        boxes = {link: [(tuple(half), Pose.coerce(pose).to_list()) for half, pose in shapes]
                 for link, shapes in self.spec.collision_boxes.items()}
        gid = backend.add_articulation(self.spec.urdf_path, self._name, materials, base.numpy(), drives,
                                       disable_gravity=self.spec.disable_gravity, collision_boxes=boxes,
                                       solver_iterations=self.spec.solver_iterations)
        self._bind_group(backend, gid, device)
        self._tcp_index = self.link_index(self.spec.tcp_link)
        offset = self.spec.tcp_offset
        self._tcp_offset = None  # identity: the link's own pose, nothing to compute
        if offset != Pose():
            t = np.asarray(offset.position, np.float32)
            q = np.asarray(offset.quaternion, np.float32)
            self._tcp_offset = {np.ndarray: (t, q), torch.Tensor: (torch.from_numpy(t).to(device), torch.from_numpy(q).to(device))}
