"""A scripted leader arm for LeRobot. Importing the package registers the teleoperator type
``simulo_scripted_leader`` (LeRobot's commands import it themselves:
``register_third_party_plugins``)."""

from lerobot_teleoperator_simulo.scripted_leader import ScriptedLeader, ScriptedLeaderConfig

__all__ = ["ScriptedLeader", "ScriptedLeaderConfig"]
