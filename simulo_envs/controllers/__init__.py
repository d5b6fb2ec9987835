"""Controllers: map actions to PD drive targets (joint position and delta joint position)."""

from simulo_envs.controllers.combined import CombinedController
from simulo_envs.controllers.joint import JointPosConfig, JointPosController

__all__ = ["CombinedController", "JointPosConfig", "JointPosController"]
