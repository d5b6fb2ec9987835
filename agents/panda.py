"""The Franka Emika Panda: asset, drives, TCP, controllers, rest pose and grasp test (a
``BaseAgent`` description).

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

Cameras: ``Panda`` carries none (the tasks add a front one). ``PandaWristCam``
(``robot_uids="panda_wristcam"``, ManiSkill's uid) is the same arm with a ``hand_camera`` riding on
``panda_hand`` where ManiSkill's ``panda_v3.urdf`` mounts its RealSense (``HAND_CAMERA``); the
camera has no body here, so the arm's links, masses and contacts are ``Panda``'s exactly and a
policy trained with either robot's state acts the same with the other.
"""

from __future__ import annotations

import math

from simulo_envs.agents.base_agent import BaseAgent, JawGrasp, mani_skill_asset
from simulo_envs.authoring.camera import CameraConfig, look_at
from simulo_envs.controllers import EEPoseConfig, JointPosConfig
from simulo_envs.robot import JointDrive, LinkMaterial

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

HAND_CAMERA = CameraConfig("hand_camera", look_at((0.0465, -0.02, 0.036), (0.0465, -0.02, 1.0), up=(1.0, 0.0, 0.0)),
                           128, 128, math.pi / 2, near=0.01, mount="panda_hand")
"""The hand camera (pose in ``panda_hand``, whose +z points from the hand to the fingertips):
ManiSkill 3.0.1's ``panda_wristcam`` camera, ``camera_link`` of ``panda_v3.urdf`` (the RealSense
joint at (0.035, 0, 0.036) m, rpy (0, -pi/2, pi), then (0, 0.02, 0.0115) m): 4.65 cm from the
fingers' plane, looking along +z past the fingertips, image up along the hand's +x; its 90 deg
field of view and 128 x 128 px are ManiSkill's too."""


def panda_urdf_path() -> str:
    """Path of ``panda_v2.urdf`` inside the installed mani-skill package.

    Raises:
        FileNotFoundError: mani-skill is not installed or lacks the asset.
    """
    return mani_skill_asset(Panda.asset)


class Panda(BaseAgent):
    """The Panda agent (module docstring); everything it does is ``BaseAgent``'s.

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
    asset = "panda/panda_v2.urdf"
    arm_joints = ARM_JOINTS
    gripper_joints = GRIPPER_JOINTS
    drives = (ARM_DRIVE,) * len(ARM_JOINTS) + (GRIPPER_DRIVE,) * len(GRIPPER_JOINTS)
    rest_qpos = REST_QPOS
    tcp_link = TCP_LINK
    link_materials = {LEFT_FINGER: FINGER_MATERIAL, RIGHT_FINGER: FINGER_MATERIAL}
    disable_gravity = True
    controller_configs = CONTROLLER_CONFIGS
    default_control_mode = DEFAULT_CONTROL_MODE
    # The left finger opens along its +y axis, the right one along -y.
    grasp = JawGrasp((LEFT_FINGER, RIGHT_FINGER), ((0.0, 1.0, 0.0), (0.0, -1.0, 0.0)), GRASP_MIN_FORCE, GRASP_MAX_ANGLE)


class PandaWristCam(Panda):
    """The Panda with ``HAND_CAMERA`` on its hand (module docstring, "Cameras"); the same
    arguments and errors as ``Panda``."""

    uid = "panda_wristcam"
    sensor_configs = (HAND_CAMERA,)
