"""Scripted policies (privileged state, no learning)."""

from simulo_envs.policies.lift_expert import LiftExpert, LiftExpertConfig

__all__ = ["LiftExpert", "LiftExpertConfig"]
