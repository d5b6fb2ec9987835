"""The Franka Emika Panda: asset, drives, TCP, controllers and rest pose.

Asset: ``panda_v2.urdf`` shipped inside the mani-skill wheel (``mani_skill/assets/robots/panda``),
loaded from the installed package at run time; nothing is downloaded.

TCP: the ``panda_hand_tcp`` link, 0.1034 m along the hand's +z axis from ``panda_hand`` (URDF
joint ``panda_hand_tcp_joint``): centred between the two fingers, at the height of the finger
pads (pads sit 0.0584 + 0.0455 = 0.1039 m from the hand). At rest its z axis points down.

Gains and limits (source: ManiSkill 3.0.1 ``mani_skill/agents/robots/panda/panda.py``):
arm and fingers stiffness 1e3, damping 1e2, force limit 100; finger friction 2.0 (static and
dynamic) with patch radius 0.1. Controllers:

- ``pd_joint_delta_pos`` (default): 7 arm actions in [-1, 1] -> joint increments in
  [-0.1, 0.1] rad added to the current qpos, clipped to the URDF joint limits; 1 gripper action.
- ``pd_joint_pos``: 7 absolute arm targets within the URDF joint limits [rad]; 1 gripper action.
- ``pd_ee_delta_pos`` (3 + 1), ``pd_ee_delta_pose`` (6 + 1), ``pd_ee_pose`` (6 + 1): Cartesian
  control of the TCP by batched damped-least-squares IK; frames, bounds and the Jacobian's
  source are in ``simulo_envs/controllers/ee.py`` (translations +-0.1 m, rotations +-0.1 rad
  per step in the delta modes).

The links have gravity disabled (``RobotSpec.disable_gravity``), like Isaac Lab's Franka
config: the real arm compensates gravity in its controller, and the PD targets are then
tracked without sag.

Gripper (both modes): one action in [-1, 1] -> both finger targets in [-0.01, 0.04] m
(-1 closed, +1 open; the -0.01 m target keeps a squeezing force on thin objects, as ManiSkill does).
"""

from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import torch
from gymnasium import spaces

from simulo_envs.authoring import Pose
from simulo_envs.controllers import CombinedController, EEPoseConfig, JointPosConfig
from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.geometry import cos_angle, quat_axis
from simulo_envs.robot import JointDrive, LinkMaterial, Robot, RobotSpec
from simulo_envs.tensors import to_device

ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
GRIPPER_JOINTS = ("panda_finger_joint1", "panda_finger_joint2")
TCP_LINK = "panda_hand_tcp"
LEFT_FINGER, RIGHT_FINGER = "panda_leftfinger", "panda_rightfinger"
GRASP_MIN_FORCE = 0.5
"""Minimum contact force [N] on each finger for a grasp (ManiSkill's ``is_grasping`` default)."""
GRASP_MAX_ANGLE = 85.0
"""Maximum angle [deg] between a finger's contact force and its opening direction (ManiSkill's default)."""
REST_QPOS = (0.0, math.pi / 8, 0.0, -math.pi * 5 / 8, 0.0, math.pi * 3 / 4, math.pi / 4, 0.04, 0.04)
"""Rest configuration (ManiSkill's ``rest`` keyframe): arm [rad], then both fingers open [m]."""

ARM_DRIVE = JointDrive(stiffness=1e3, damping=1e2, force_limit=100.0)
GRIPPER_DRIVE = JointDrive(stiffness=1e3, damping=1e2, force_limit=100.0)
FINGER_MATERIAL = LinkMaterial(static_friction=2.0, dynamic_friction=2.0, restitution=0.0,
                               patch_radius=0.1, min_patch_radius=0.1)

_GRIPPER = JointPosConfig(GRIPPER_JOINTS, lower=-0.01, upper=0.04, normalize_action=True, mimic=True)
CONTROLLER_CONFIGS = {
    "pd_joint_delta_pos": {
        "arm": JointPosConfig(ARM_JOINTS, lower=-0.1, upper=0.1, use_delta=True, normalize_action=True),
        "gripper": _GRIPPER,
    },
    "pd_joint_pos": {
        "arm": JointPosConfig(ARM_JOINTS, lower=None, upper=None, use_delta=False, normalize_action=False),
        "gripper": _GRIPPER,
    },
    "pd_ee_delta_pos": {"arm": EEPoseConfig(ARM_JOINTS, TCP_LINK, mode="delta_pos"), "gripper": _GRIPPER},
    "pd_ee_delta_pose": {"arm": EEPoseConfig(ARM_JOINTS, TCP_LINK, mode="delta_pose"), "gripper": _GRIPPER},
    "pd_ee_pose": {"arm": EEPoseConfig(ARM_JOINTS, TCP_LINK, mode="pose"), "gripper": _GRIPPER},
}
DEFAULT_CONTROL_MODE = "pd_joint_delta_pos"


def panda_urdf_path() -> str:
    """Path of ``panda_v2.urdf`` inside the installed mani-skill package.

    Raises:
        FileNotFoundError: mani-skill is not installed or lacks the asset.
    """
    spec = importlib.util.find_spec("mani_skill")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the Panda asset ships with mani-skill: pip install mani-skill==3.0.1")
    path = os.path.join(list(spec.submodule_search_locations)[0], "assets", "robots", "panda", "panda_v2.urdf")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Panda URDF not found at {path}; reinstall mani-skill==3.0.1")
    return path


class Panda:
    """The Panda agent: owns the ``Robot``, its controller and robot-specific queries.

    Args:
        scene: the ``Scene`` to add the robot to (at ``path``, base at the env origin).
        control_mode: a key of ``CONTROLLER_CONFIGS``.
        path: prototype path of the robot.
        initial_pose: env-local pose of the fixed base (a ``Pose``, a ``sapien.Pose`` or
            ``[x, y, z, qw, qx, qy, qz]``); default the env origin.

    Raises:
        ValueError: an unknown ``control_mode`` (the message lists the known ones).
    """

    uid = "panda"
    controller_configs = CONTROLLER_CONFIGS
    #: Every ``control_mode`` this agent accepts (the keys of ``CONTROLLER_CONFIGS``), as in ManiSkill.
    supported_control_modes: tuple[str, ...] = tuple(CONTROLLER_CONFIGS)

    def __init__(self, scene, control_mode: str = DEFAULT_CONTROL_MODE, path: str = "/World/Robot", initial_pose=None):
        if control_mode not in self.supported_control_modes:
            raise ValueError(f"unknown control_mode {control_mode!r} for panda; choose from {list(self.supported_control_modes)}")
        self.control_mode = control_mode
        spec = RobotSpec(
            urdf_path=panda_urdf_path(),
            drives=[ARM_DRIVE] * len(ARM_JOINTS) + [GRIPPER_DRIVE] * len(GRIPPER_JOINTS),
            tcp_link=TCP_LINK,
            base_pose=Pose.coerce(initial_pose),
            link_materials={"panda_leftfinger": FINGER_MATERIAL, "panda_rightfinger": FINGER_MATERIAL},
            disable_gravity=True,
        )
        self.robot = scene.add(Robot(spec, name="panda"), at=path)
        self.controller: CombinedController | None = None

    def on_attached(self, env_origins: torch.Tensor) -> None:
        """Build the controller once the robot exists in the simulation."""
        self.controller = CombinedController(CONTROLLER_CONFIGS[self.control_mode], self.robot, env_origins)
        self._rest = torch.tensor(REST_QPOS, dtype=torch.float32, device=env_origins.device)
        self._arm_index = torch.tensor([self.robot.joint_names.index(j) for j in ARM_JOINTS], device=env_origins.device)

    @property
    def single_action_space(self) -> spaces.Box:
        """Per-env action space of the current control mode (float32 Box)."""
        return self.controller.single_action_space()

    def set_action(self, action: torch.Tensor) -> None:
        """Apply a clipped batched action ``(N, action_dim)`` as drive targets."""
        self.controller.set_action(action)

    def get_proprioception(self) -> dict:
        """``{"qpos": (N, 9), "qvel": (N, 9)}`` [rad, m; rad/s, m/s], fresh (ManiSkill's agent name)."""
        state = self.robot.state
        return {"qpos": state.qpos, "qvel": state.qvel}

    @property
    def robot_link_names(self) -> list[str]:
        """The robot's link names, in SAPIEN's link order."""
        return list(self.robot.link_names)

    def reset(self, env_ids: EnvIds = None, qpos=None) -> None:
        """Put ``env_ids`` at ``qpos`` (default ``REST_QPOS``) with zero velocity, targets = qpos."""
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
        """(N, 7) arm joint velocities [rad/s]."""
        return self.robot.state.qvel[:, self._arm_index]

    def is_static(self, threshold: float = 0.2) -> torch.Tensor:
        """bool (N,): every arm joint slower than ``threshold`` [rad/s]."""
        return self.arm_qvel().abs().max(dim=1).values <= threshold

    def is_grasping(self, prop, min_force: float = GRASP_MIN_FORCE, max_angle: float = GRASP_MAX_ANGLE) -> torch.Tensor:
        """bool (N,): both fingers press on ``prop``.

        Each finger must feel a contact force from the prop of at least ``min_force`` [N], within
        ``max_angle`` [deg] of that finger's opening direction (the left finger opens along its
        +y axis, the right one along -y): the prop pushes the fingers apart, as a squeezed object
        does. A closed gripper on empty air, or a prop touched by one finger or from the side,
        is not a grasp. Batched over envs; uses the last physics step's contacts, so an env reset
        or written since that step is not grasping until the next step finds its contacts.
        """
        return to_device(self._grasping_array(prop, min_force, max_angle), self.robot._device)

    def _grasping_array(self, prop, min_force: float = GRASP_MIN_FORCE, max_angle: float = GRASP_MAX_ANGLE):
        """``is_grasping`` on the backend's own arrays: bool (N,), numpy on physx_cpu (a fraction
        of torch's per-call cost; the tasks' CPU fast paths use it as is), a tensor elsewhere."""
        robot = self.robot
        forces = robot._raw("contact_forces", robot._link_indices((LEFT_FINGER, RIGHT_FINGER)), prop._gid)
        if isinstance(forces, np.ndarray):  # (N, 2, 3) -> (N,)
            pressed = np.minimum.reduce(np.einsum("ijk,ijk->ij", forces, forces), axis=1) >= min_force * min_force
        else:
            pressed = torch.amin((forces * forces).sum(-1), 1) >= min_force * min_force
        if bool(pressed.any()):  # skipped in the common case: no finger frames needed
            cos_max = math.cos(math.radians(max_angle))
            left = quat_axis(robot._raw("link_pose", robot.link_index(LEFT_FINGER))[:, 3:7], 1)  # opens along +y
            right = -quat_axis(robot._raw("link_pose", robot.link_index(RIGHT_FINGER))[:, 3:7], 1)  # along -y
            pressed &= (cos_angle(forces[:, 0], left) >= cos_max) & (cos_angle(forces[:, 1], right) >= cos_max)
        return pressed
