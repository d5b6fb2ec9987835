"""Controllers: map actions to PD drive targets (joint position, delta joint position, end-effector IK)."""

from simulo_envs.controllers.combined import CombinedController
from simulo_envs.controllers.ee import EEPoseConfig, EEPoseController, dls_step
from simulo_envs.controllers.joint import JointPosConfig, JointPosController

__all__ = ["CombinedController", "EEPoseConfig", "EEPoseController", "dls_step", "JointPosConfig", "JointPosController"]
