"""Episodes in a real robot's recorded schema: joint readings and joint targets in the units the
robot's own LeRobot driver records, so simulated episodes concatenate with real recordings.

An agent that describes its real counterpart (``agent.lerobot``, a ``LeRobotJoints``: the
dataset's ``robot_type``, the recorded feature names, units and their map from our joints; the
SO-100's is in ``agents/so100.py``) is recorded in LeRobot's format as that robot is:

=====================  ======================================================================
feature                here
=====================  ======================================================================
``robot_type``         ``lerobot.robot_type`` (``"so_follower"``, what LeRobot's SO followers
                       record), unless the recording options name another
``observation.state``  the joint positions, ``lerobot.names`` (``shoulder_pan.pos`` ...), in the
                       robot's units (``agent.lerobot_from_qpos``: degrees, gripper 0..100)
``action``             the joint targets sent in that step, same names and units (what
                       LeRobot's follower records: the goal positions written to the motors):
                       the actions of the robot's control mode the env executed
``observation.images.<camera>``  the sensor cameras' RGB, as for every dataset
=====================  ======================================================================

The dataset's control mode is then ``lerobot.control_mode`` (``"pd_joint_pos_lerobot"``), and
the env that records it runs in that mode: its actions are recorded as executed, so replaying
them in that mode reproduces the episode (bit for bit with one PhysX system per env). A policy
of another mode drives it through ``joint_drive.JointDrive`` (the scripted experts), or is
converted into it (``replay.py``). Recording the targets an env of another mode set, in the
robot's units, would not do: the unit conversion rounds (float32), and replayed those targets
differ from the executed ones by about 1e-7 rad, which contact amplifies.
The task's other state (object poses) is not part of a real robot's schema; record it in the
HDF5 format, or in the LeRobot format of an agent without a ``lerobot`` description.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from simulo_envs.datasets.schema import DatasetSchema


class RealRobotFrames:
    """Maps a batched env's observations to its robot's recorded schema (module docstring); the
    env runs in the robot's control mode, whose actions are recorded as they are. Build it with ``real_robot_frames``; it reads the env's current agent at every
    call (a reconfiguring reset builds a new one)."""

    def __init__(self, env):
        self.env = env.unwrapped
        self.spec = self.env.agent.lerobot

    @property
    def agent(self):
        """The wrapped env's agent (its joints and units)."""
        return self.env.agent

    def schema(self, schema: DatasetSchema) -> DatasetSchema:
        """``schema`` with the robot's type, state and action names, units map
        (``state_source="robot"``, ``robot_units``) and replay control mode."""
        kwargs = dict(schema.env_kwargs, control_mode=self.spec.control_mode)
        return replace(schema, robot_type=self.spec.robot_type, state_names=tuple(self.spec.names),
                       action_names=tuple(self.spec.names), control_mode=self.spec.control_mode, env_kwargs=kwargs,
                       state_source="robot", robot_units=units_of(self.spec))

    @property
    def control_mode(self) -> str:
        """The robot's control mode (``lerobot.control_mode``): the env's must be it."""
        return self.spec.control_mode

    def obs(self, obs):
        """The env's observation -> ``{"agent": {"state": (N, J)}, "sensor_data": ...}``: the joint
        readings in the robot's units, and the camera images when there are any."""
        out = {"agent": {"state": self.agent.lerobot_from_qpos(self.agent.robot.state.qpos)}}
        if isinstance(obs, dict) and "sensor_data" in obs:
            out["sensor_data"] = obs["sensor_data"]
        return out


def units_of(spec) -> dict:
    """A ``LeRobotJoints`` as the plain dict ``DatasetSchema.robot_units`` records."""
    return {"names": list(spec.names), "joints": list(spec.joints), "scale": [float(v) for v in spec.scale],
            "offset": [float(v) for v in spec.offset], "units": list(spec.units)}


def lerobot_spec_of(env_class: type, robot_uids=None):
    """The ``LeRobotJoints`` of the agent an env of ``env_class`` built with ``robot_uids`` (None:
    the task's default) drives, or None (no such description, or several agents); nothing is built.

    Raises:
        ValueError: an unknown uid, or one the task does not support (``check_robot_uids``).
    """
    from simulo_envs.agents import REGISTERED_AGENTS
    from simulo_envs.envs.env_options import check_robot_uids

    uid = check_robot_uids(env_class, robot_uids)
    if uid is None or isinstance(uid, tuple):
        return None
    agent = uid if isinstance(uid, type) else REGISTERED_AGENTS[uid]
    return getattr(agent, "lerobot", None)


def real_robot_frames(env, fmt: str) -> Optional[RealRobotFrames]:
    """A ``RealRobotFrames`` for ``env`` (in-process, wrapped or not) when ``fmt`` is ``"lerobot"``
    and its agent describes a real robot (``agent.lerobot``); None otherwise."""
    agent = getattr(env.unwrapped, "agent", None)
    if fmt != "lerobot" or getattr(agent, "lerobot", None) is None:
        return None
    return RealRobotFrames(env)
