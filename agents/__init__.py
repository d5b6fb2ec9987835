"""Robot agents, installed as simulo_envs.agents; ``REGISTERED_AGENTS`` maps ``robot_uids`` names
to agent classes (ManiSkill's registry of the same name)."""

from simulo_envs.agents.base_agent import BaseAgent, JawGrasp, LeRobotJoints
from simulo_envs.agents.panda import Panda, PandaWristCam
from simulo_envs.agents.so100 import SO100
from simulo_envs.agents.so101 import SO101

REGISTERED_AGENTS: dict[str, type] = {Panda.uid: Panda, PandaWristCam.uid: PandaWristCam, SO100.uid: SO100, SO101.uid: SO101}
"""Agent uid -> agent class; ``BaseEnv(robot_uids=...)`` picks from it. Add yours with
``register_agent``."""


def register_agent(cls: type) -> type:
    """Class decorator: make ``cls`` (with a ``uid`` str attribute) available as ``robot_uids=cls.uid``.

    Raises:
        ValueError: ``cls`` has no ``uid``, or the uid is taken by another class.
    """
    uid = getattr(cls, "uid", None)
    if not isinstance(uid, str) or not uid:
        raise ValueError(f"{cls.__name__} needs a non-empty str 'uid' class attribute to be registered")
    if REGISTERED_AGENTS.get(uid, cls) is not cls:
        raise ValueError(f"agent uid {uid!r} is already registered by {REGISTERED_AGENTS[uid].__name__}")
    REGISTERED_AGENTS[uid] = cls
    return cls


def load_agents(scene, robot_uids, control_mode=None, initial_poses=None):
    """Build the agent(s) ``robot_uids`` names into ``scene`` (``BaseEnv._load_agent``'s default).

    Args:
        robot_uids: a registered uid or agent class, or a tuple of them (several robots per env:
            a ``MultiAgent`` keyed ``"<uid>-<i>"``, robot ``i`` at ``/World/Robot_<i>``).
        control_mode: the control mode of every agent (None: each agent's default).
        initial_poses: env-local base pose(s): one pose, or a list with one per robot.

    Raises:
        ValueError: an unknown uid, or a pose list whose length differs from the robots'.
    """
    from simulo_envs.agents.multi_agent import MultiAgent

    uids = robot_uids if isinstance(robot_uids, tuple) else (robot_uids,)
    poses = list(initial_poses) if isinstance(initial_poses, list) else [initial_poses] * len(uids)
    if len(poses) != len(uids):
        raise ValueError(f"initial_agent_poses: {len(poses)} poses for {len(uids)} robots {uids!r}")
    agents = {}
    for i, uid in enumerate(uids):
        cls = uid if isinstance(uid, type) else REGISTERED_AGENTS.get(uid)
        if cls is None:
            raise ValueError(f"unknown agent {uid!r}; registered agents: {sorted(REGISTERED_AGENTS)}")
        kwargs = {} if control_mode is None else {"control_mode": control_mode}
        path = "/World/Robot" if len(uids) == 1 else f"/World/Robot_{i}"
        agents[f"{cls.uid}-{i}"] = cls(scene, path=path, initial_pose=poses[i], **kwargs)
    return next(iter(agents.values())) if len(agents) == 1 else MultiAgent(agents)


__all__ = ["BaseAgent", "JawGrasp", "LeRobotJoints", "Panda", "PandaWristCam", "SO100", "SO101", "REGISTERED_AGENTS", "register_agent", "load_agents"]
