"""``MultiAgent``: several robots in every env, driven through one dict action (ManiSkill's
``robot_uids=("panda", "panda")``)."""

from __future__ import annotations

import torch
from gymnasium import spaces


class MultiAgent:
    """Agents keyed ``"<uid>-<i>"`` (``i``: position in ``robot_uids``, ManiSkill's naming).

    The action space is a ``spaces.Dict`` of the agents' Boxes; actions, proprioception and
    ``control_mode`` are dicts with the same keys.

    Args:
        agents: key -> agent (each with ``single_action_space``, ``set_action``, ``reset``,
            ``on_attached``, ``get_proprioception``, ``robot_link_names``, ``controller``).
    """

    def __init__(self, agents: dict):
        self.agents = dict(agents)
        self.controller = _Controllers(self.agents)

    @property
    def uid(self) -> tuple[str, ...]:
        """The agents' uids, in order."""
        return tuple(agent.uid for agent in self.agents.values())

    @property
    def control_mode(self) -> dict:
        """key -> the agent's control mode."""
        return {key: agent.control_mode for key, agent in self.agents.items()}

    def on_attached(self, env_origins: torch.Tensor) -> None:
        """Build every agent's controller once the robots exist in the simulation."""
        for agent in self.agents.values():
            agent.on_attached(env_origins)

    @property
    def single_action_space(self) -> spaces.Dict:
        """key -> the agent's per-env Box."""
        return spaces.Dict({key: agent.single_action_space for key, agent in self.agents.items()})

    def set_action(self, action: dict) -> None:
        """Apply ``{key: (N, action_dim of that agent)}`` (clipped) as drive targets."""
        for key, agent in self.agents.items():
            agent.set_action(action[key])

    def _set_checked_action(self, action: dict) -> None:
        """``set_action`` for an action ``BaseEnv.step`` has already checked (every part finite,
        clipped, float32 on the env's device): each agent's ``_set_checked_action``."""
        for key, agent in self.agents.items():
            agent._set_checked_action(action[key])

    def reset(self, env_ids=None) -> None:
        """Put every agent of ``env_ids`` at its rest pose (see each agent's ``reset``)."""
        for agent in self.agents.values():
            agent.reset(env_ids)

    def get_proprioception(self) -> dict:
        """key -> the agent's ``{"qpos", "qvel"}``."""
        return {key: agent.get_proprioception() for key, agent in self.agents.items()}

    @property
    def robot_link_names(self) -> list[str]:
        """Every agent's link names, in agent order."""
        return [name for agent in self.agents.values() for name in agent.robot_link_names]


class _Controllers:
    """Resets every agent's controller at once (what a state write calls)."""

    def __init__(self, agents: dict):
        self._agents = agents

    def reset(self, env_ids: torch.Tensor) -> None:
        for agent in self._agents.values():
            if agent.controller is not None:
                agent.controller.reset(env_ids)
