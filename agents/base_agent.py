"""``BaseAgent``: what every robot agent does, driven by the robot's own description.

A robot is one subclass in one file that describes it, as class attributes:

=========================  ===================================================================
attribute                  what
=========================  ===================================================================
``uid``                    the ``robot_uids`` name
``asset``                  the URDF's path inside mani-skill's ``assets/robots`` (loaded from the
                           installed package at run time; nothing is downloaded); an agent whose
                           asset ships in another package overrides ``urdf_path()``
``arm_joints``             the arm's joints (``arm_qvel``, ``is_static``)
``gripper_joints``         the gripper's joints
``drives``                 one ``JointDrive`` per joint of ``arm_joints + gripper_joints``, which
                           must be the URDF's active joints in their URDF order
``rest_qpos``              the rest configuration (``reset``), one value per joint [rad or m]
``tcp_link``/``tcp_offset``  the tool centre point: a link, and the TCP's pose in its frame
``link_materials``         link name -> ``LinkMaterial`` (finger pads)
``collision_boxes``        link name -> ``((half_size, Pose), ...)`` replacing the link's URDF
                           collision shapes (``RobotSpec.collision_boxes``)
``solver_iterations``      ``(position, velocity)`` PhysX solver iterations the robot needs (None:
                           the scene's ``SimConfig``); its source and cost in the agent's docstring
``disable_gravity``        links feel no gravity (ideal gravity compensation)
``controller_configs``     control mode -> ``{"arm": ..., "gripper": ...}`` configs
``default_control_mode``   a key of ``controller_configs``
``grasp``                  ``JawGrasp``: the two jaw links and the directions they open along
``lerobot``                optional ``LeRobotJoints``: the real arm's recorded joint names and
                           units, for datasets in LeRobot's schema
``sensor_configs``         cameras the robot carries (``CameraConfig`` with ``mount`` a link):
                           every task with this robot adds them to its sensor cameras
=========================  ===================================================================

Everything above the agent (tasks, experts, training) reads the robot through the queries
below (``tcp_pose``, ``is_grasping``, ``is_static``, ``arm_qvel``, ``get_proprioception``) and
never names a robot.
"""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np
import torch
from gymnasium import spaces

from simulo_envs.authoring import Pose
from simulo_envs.controllers import CombinedController
from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.geometry import cos_angle, quat_rotate
from simulo_envs.robot import JointDrive, Robot, RobotSpec
from simulo_envs.tensors import count_true, einsum, to_xp


@dataclass(frozen=True)
class JawGrasp:
    """Grasp test from the contacts of two jaws (fingers) with an object.

    Attributes:
        jaw_links: the two jaw links.
        opening_axes: per jaw, the unit direction [link frame] the jaw moves along when the
            gripper opens: an object squeezed between the jaws pushes each jaw along it.
        min_force: minimum contact force [N] on each jaw (ManiSkill's ``is_grasping`` default 0.5).
        max_angle: maximum angle [deg] between a jaw's contact force and its opening direction
            (ManiSkill's Panda default 85).
        min_opposition: minimum angle [deg] between the two jaws' contact forces: a squeezed
            object pushes the jaws apart, so the forces point away from each other. Without it,
            both jaws pressing on the object from one side count as a grasp whenever each force
            falls inside its jaw's cone: the SO-100's jaws wide open (their opening directions
            about 70 deg apart) resting on a cube's top face, forces 20-55 deg apart. Measured
            with the scripted experts, real grasps hold their forces 172-180 deg apart on the
            SO-100 (SO100Lift-v1, 2,881 grasped states) and 160-180 deg on the Panda
            (FrankaLift-v1, FrankaPickPlace-v1, FrankaStack-v1).
    """

    jaw_links: tuple[str, str]
    opening_axes: tuple[tuple[float, float, float], tuple[float, float, float]]
    min_force: float = 0.5
    max_angle: float = 85.0
    min_opposition: float = 120.0


@dataclass(frozen=True)
class LeRobotJoints:
    """The real arm's joint readings as LeRobot records them, and how ours map onto them.

    Each recorded value is ``scale * (q - offset)`` of our joint ``q`` [rad or m], so
    ``q = offset + value / scale``.

    Attributes:
        robot_type: the dataset's ``robot_type``.
        names: the recorded feature names, one per joint of ``joints``, in order.
        joints: our joint names, in the recorded order.
        scale / offset: per joint, as above.
        units: per joint, the recorded unit (for people: ``"deg"``, ``"0-100"``).
        control_mode: the agent's control mode whose actions are joint targets in these units
            (recorded actions replay in it).
    """

    robot_type: str
    names: tuple[str, ...]
    joints: tuple[str, ...]
    scale: tuple[float, ...]
    offset: tuple[float, ...]
    units: tuple[str, ...]
    control_mode: str

    def __post_init__(self) -> None:
        n = len(self.names)
        if not all(len(v) == n for v in (self.joints, self.scale, self.offset, self.units)):
            raise ValueError("LeRobotJoints: names, joints, scale, offset and units need one entry per joint")


def mani_skill_asset(relative: str) -> str:
    """Absolute path of ``relative`` inside mani-skill's ``assets/robots`` directory.

    Raises:
        FileNotFoundError: mani-skill is not installed, or lacks the file.
    """
    spec = importlib.util.find_spec("mani_skill")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the robot asset {relative!r} ships with mani-skill: pip install mani-skill==3.0.1")
    path = os.path.join(list(spec.submodule_search_locations)[0], "assets", "robots", relative)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"robot asset not found at {path}; reinstall mani-skill==3.0.1")
    return path


class BaseAgent:
    """A robot in every env: owns its ``Robot``, its controller and the robot-specific queries.

    Args:
        scene: the ``Scene`` to add the robot to (at ``path``).
        control_mode: a key of the class's ``controller_configs`` (None: ``default_control_mode``).
        path: prototype path of the robot.
        initial_pose: env-local pose of the fixed base (a ``Pose``, a ``sapien.Pose`` or
            ``[x, y, z, qw, qx, qy, qz]``); None: the class's ``base_pose``.

    Raises:
        ValueError: an unknown ``control_mode`` (the message lists the known ones).
        FileNotFoundError: the asset is missing.
    """

    uid: str = ""
    asset: str = ""
    arm_joints: tuple[str, ...] = ()
    gripper_joints: tuple[str, ...] = ()
    drives: tuple[JointDrive, ...] = ()
    rest_qpos: tuple[float, ...] = ()
    tcp_link: str = ""
    tcp_offset: Pose = Pose()
    base_pose: Pose = Pose()
    link_materials: Mapping = {}
    disable_gravity: bool = False
    controller_configs: Mapping[str, Mapping] = {}
    default_control_mode: str = ""
    grasp: Optional[JawGrasp] = None
    lerobot: Optional[LeRobotJoints] = None
    collision_boxes: Mapping = {}
    solver_iterations: Optional[tuple[int, int]] = None
    sensor_configs: tuple = ()

    @classmethod
    def urdf_path(cls) -> str:
        """Absolute path of the robot's URDF: ``asset`` inside mani-skill's ``assets/robots``.

        Raises:
            FileNotFoundError: the package that ships the asset is missing, or lacks the file.
        """
        return mani_skill_asset(cls.asset)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        #: Every ``control_mode`` this agent accepts (the keys of ``controller_configs``), as in ManiSkill.
        cls.supported_control_modes = tuple(cls.controller_configs)

    _jaws: tuple = (None, ())
    """``(grasp, the robot's link indices of its jaw_links)``: what ``is_grasping`` reads every step,
    made on its first call (and again when ``grasp`` is replaced)."""

    def __init__(self, scene, control_mode: Optional[str] = None, path: str = "/World/Robot", initial_pose=None):
        control_mode = self.default_control_mode if control_mode is None else control_mode
        if control_mode not in self.controller_configs:
            raise ValueError(f"unknown control_mode {control_mode!r} for {self.uid}; "
                             f"choose from {list(self.controller_configs)}")
        self.control_mode = control_mode
        spec = RobotSpec(
            urdf_path=self.urdf_path(),
            drives=list(self.drives),
            tcp_link=self.tcp_link,
            tcp_offset=self.tcp_offset,
            base_pose=self.base_pose if initial_pose is None else Pose.coerce(initial_pose),
            link_materials=dict(self.link_materials),
            disable_gravity=self.disable_gravity,
            collision_boxes=dict(self.collision_boxes),
            solver_iterations=self.solver_iterations,
        )
        self.robot = scene.add(Robot(spec, name=self.uid), at=path)
        self.controller: CombinedController | None = None

    def on_attached(self, env_origins: torch.Tensor) -> None:
        """Build the controller once the robot exists in the simulation.

        Raises:
            ValueError: the URDF's active joints are not ``arm_joints + gripper_joints`` in order.
        """
        joints = tuple(self.arm_joints) + tuple(self.gripper_joints)
        if tuple(self.robot.joint_names) != joints:
            raise ValueError(f"{type(self).__name__}: the asset's joints {self.robot.joint_names} are not "
                             f"arm_joints + gripper_joints {list(joints)}")
        device = env_origins.device
        self.controller = CombinedController(self.controller_configs[self.control_mode], self.robot, env_origins)
        self._rest = torch.tensor(self.rest_qpos, dtype=torch.float32, device=device)
        self._arm_index = torch.tensor([joints.index(j) for j in self.arm_joints], device=device)
        if self.grasp is not None:
            axes = np.asarray(self.grasp.opening_axes, dtype=np.float32)
            self._opening_axes = {np.ndarray: axes, torch.Tensor: torch.from_numpy(axes).to(self.robot._device)}

    @property
    def single_action_space(self) -> spaces.Box:
        """Per-env action space of the current control mode (float32 Box)."""
        return self.controller.single_action_space()

    def set_action(self, action: torch.Tensor) -> None:
        """Apply a clipped batched action ``(N, action_dim)`` as drive targets.

        Raises:
            ValueError: NaN or inf in ``action``; no target is written.
        """
        self.controller.set_action(action)

    def _set_checked_action(self, action: torch.Tensor) -> None:
        """Apply an action ``BaseEnv.step`` has already checked (finite, clipped, float32
        ``(N, action_dim)`` on the env's device): the controller's targets without a second test of
        the same entries. An agent class that overrides ``set_action`` gets ``set_action`` here."""
        if type(self).set_action is not BaseAgent.set_action:
            self.set_action(action)
        else:
            self.controller._set_checked_action(action)

    def _checked_array_sink(self):
        """Where ``BaseEnv.step`` may hand its checked action as a numpy array on the CPU (float32
        ``(N, action_dim)``, finite, clipped): the controller's ``_set_checked_array``, or None
        (the step then calls ``_set_checked_action`` with the tensor). None for an agent class
        that overrides ``set_action`` or ``_set_checked_action``, or a controller without a
        numpy map (an end-effector part, joints out of qpos order, a GPU robot)."""
        cls = type(self)
        if cls.set_action is not BaseAgent.set_action or cls._set_checked_action is not BaseAgent._set_checked_action:
            return None
        return getattr(self.controller, "_array_sink", None)

    def get_proprioception(self, xp=torch) -> dict:
        """``{"qpos": (N, dof), "qvel": (N, dof)}`` [rad, m; rad/s, m/s], fresh (ManiSkill's agent name):
        tensors, or numpy arrays with ``xp=numpy`` (the CPU fast path's step hooks, ``BaseEnv.xp``)."""
        state = self.robot.state_in(xp)
        return {"qpos": state.qpos, "qvel": state.qvel}

    @property
    def robot_link_names(self) -> list[str]:
        """The robot's link names, in SAPIEN's link order."""
        return list(self.robot.link_names)

    def reset(self, env_ids: EnvIds = None, qpos=None) -> None:
        """Put ``env_ids`` at ``qpos`` (default ``rest_qpos``) with zero velocity, targets = qpos."""
        ids = normalize_env_ids(env_ids, self.robot.num_envs)
        q = self._rest.expand(len(ids), -1) if qpos is None else torch.as_tensor(qpos, dtype=torch.float32)
        self.robot.set_qpos(q, ids)
        self.robot.set_qvel(torch.zeros(len(ids), self.robot.dof), ids)
        self.robot.set_drive_targets(q, ids)
        self.controller.reset(torch.from_numpy(ids))

    # ------------------------------------------------------------------ queries tasks use
    @property
    def tcp_pose(self) -> torch.Tensor:
        """(N, 7) TCP pose ``[x, y, z, qw, qx, qy, qz]``, world frame; fresh."""
        return self.robot.state.tcp_pose

    def arm_qvel(self) -> torch.Tensor:
        """(N, len(arm_joints)) arm joint velocities [rad/s]."""
        return self.robot.state.qvel[:, self._arm_index]

    def is_static(self, threshold: float = 0.2) -> torch.Tensor:
        """bool (N,): every arm joint slower than ``threshold`` [rad/s]."""
        return self.arm_qvel().abs().max(dim=1).values <= threshold

    def is_grasping(self, prop, min_force: Optional[float] = None, max_angle: Optional[float] = None,
                    xp=torch, min_opposition: Optional[float] = None) -> torch.Tensor:
        """bool (N,): both jaws squeeze ``prop``.

        Each jaw (``grasp.jaw_links``) must feel a contact force from the prop of at least
        ``min_force`` [N] (default ``grasp.min_force``), within ``max_angle`` [deg] (default
        ``grasp.max_angle``) of that jaw's opening direction, and the two forces must be at least
        ``min_opposition`` [deg] (default ``grasp.min_opposition``) apart: the prop pushes the
        jaws apart, as a squeezed object does. A closed gripper on empty air, a prop touched by
        one jaw or from the side, or both jaws pressing on it from one side (open jaws resting
        on its top) is not a grasp. Batched over envs; uses the last physics step's contacts,
        so an env reset or written since that step is not grasping until the next step finds
        its contacts. A tensor on the env's device, or a numpy array with ``xp=numpy`` (the CPU
        fast path's step hooks, ``BaseEnv.xp``).

        Raises:
            NotImplementedError: the agent describes no ``grasp``.
            ValueError: ``xp`` is neither ``torch`` nor ``numpy``.
        """
        # Computed on the backend's own arrays (numpy on physx_cpu: a fraction of torch's per-call
        # cost), converted to ``xp`` at the end.
        grasp = self.grasp
        if grasp is None:
            raise NotImplementedError(f"{type(self).__name__} describes no grasp (JawGrasp)")
        if min_force is None:
            min_force = grasp.min_force
        robot = self.robot
        jaws = self._jaws
        if jaws[0] is not grasp:
            jaws = self._jaws = (grasp, robot._link_indices(grasp.jaw_links))
        forces = robot._backend.contact_forces(robot._gid, jaws[1], prop._gid)  # robot._raw, inline: every step
        if isinstance(forces, np.ndarray):  # (N, 2, 3) -> (N,)
            pressed = np.minimum.reduce(einsum("ijk,ijk->ij", forces, forces), axis=1) >= min_force * min_force
        else:
            pressed = torch.amin((forces * forces).sum(-1), 1) >= min_force * min_force
        # Skipped in the common case, no jaw pressed: no jaw frames needed (on numpy, count_nonzero
        # costs a fraction of ndarray.any on a few entries).
        if count_true(pressed) if type(pressed) is np.ndarray else bool(pressed.any()):
            max_angle = grasp.max_angle if max_angle is None else max_angle
            min_opposition = grasp.min_opposition if min_opposition is None else min_opposition
            cos_max = math.cos(math.radians(max_angle))
            axes = self._opening_axes[type(forces)]
            for k, link in enumerate(grasp.jaw_links):
                opening = quat_rotate(robot._raw("link_pose", robot.link_index(link))[:, 3:7], axes[k])
                pressed &= cos_angle(forces[:, k], opening) >= cos_max
            pressed &= cos_angle(forces[:, 0], forces[:, 1]) <= math.cos(math.radians(min_opposition))
        if xp is np and type(pressed) is np.ndarray:  # the CPU fast path: already fresh numpy
            return pressed
        return to_xp(pressed, xp, self.robot._device)

    # ------------------------------------------------------------------ LeRobot's schema
    def lerobot_from_qpos(self, qpos: torch.Tensor) -> torch.Tensor:
        """Joint positions ``(N, dof)`` [rad, m] -> float32 ``(N, len(lerobot.names))`` in the units
        LeRobot records for the real arm (``lerobot``: ``scale * (q - offset)``).

        Raises:
            NotImplementedError: the agent has no ``lerobot`` description.
        """
        scale, offset, columns = self._lerobot_map(qpos)
        return (qpos[:, columns] - offset) * scale

    def qpos_from_lerobot(self, values: torch.Tensor) -> torch.Tensor:
        """The inverse of ``lerobot_from_qpos``: ``(N, len(lerobot.names))`` -> joint positions
        ``(N, len(lerobot.joints))`` [rad, m], in ``lerobot.joints`` order.

        Raises:
            NotImplementedError: the agent has no ``lerobot`` description.
        """
        scale, offset, _ = self._lerobot_map(values)
        return offset + values / scale

    def _lerobot_map(self, like: torch.Tensor):
        if self.lerobot is None:
            raise NotImplementedError(f"{type(self).__name__} has no LeRobot joint description")
        spec = self.lerobot
        names = self.robot.joint_names
        columns = torch.tensor([names.index(j) for j in spec.joints], device=like.device)
        scale = torch.tensor(spec.scale, dtype=torch.float32, device=like.device)
        offset = torch.tensor(spec.offset, dtype=torch.float32, device=like.device)
        return scale, offset, columns

