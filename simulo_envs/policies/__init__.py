"""Scripted policies (privileged state, no learning): one batched expert per task.

``EXPERTS`` maps an env id to its expert class; every expert takes the env (made with
``control_mode="pd_ee_delta_pos"``) and returns float32 (N, 4) actions from ``act()``.
"""

from simulo_envs.policies.drawer_expert import DrawerExpert, DrawerExpertConfig
from simulo_envs.policies.lift_expert import LiftExpert, LiftExpertConfig
from simulo_envs.policies.phase_expert import PhaseExpert
from simulo_envs.policies.pick_experts import PickExpertConfig, PickPlaceExpert, StackExpert
from simulo_envs.policies.push_expert import PushExpert, PushExpertConfig

EXPERTS = {
    "FrankaLift-v1": LiftExpert,
    "FrankaLiftMixed-v1": LiftExpert,
    "FrankaLiftRandomized-v1": LiftExpert,
    "FrankaPush-v1": PushExpert,
    "FrankaPickPlace-v1": PickPlaceExpert,
    "FrankaStack-v1": StackExpert,
    "FrankaOpenDrawer-v1": DrawerExpert,
}

__all__ = ["EXPERTS", "PhaseExpert", "DrawerExpert", "DrawerExpertConfig", "LiftExpert", "LiftExpertConfig", "PushExpert", "PushExpertConfig",
           "PickExpertConfig", "PickPlaceExpert", "StackExpert"]
