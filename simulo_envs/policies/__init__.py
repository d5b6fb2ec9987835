"""Scripted policies (privileged state, no learning): one batched expert per task.

``EXPERTS`` maps an env id to its expert: a callable taking the env (made with
``control_mode="pd_ee_delta_pos"``) that returns the expert, whose ``act()`` gives float32 (N, 4)
actions. The SO-100 tasks reuse the Panda tasks' experts with their own tunables (a 25 mm cube:
hover 4 cm above it, reach its centre within 5 mm, give the jaw 0.4 s to close: the servo's
no-load time over the jaw's travel); the step size of
the arm's Cartesian controller comes from the env's agent.
"""

from functools import partial


from simulo_envs.policies.drawer_expert import DrawerExpert, DrawerExpertConfig
from simulo_envs.policies.lift_expert import LiftExpert, LiftExpertConfig
from simulo_envs.policies.phase_expert import PhaseExpert
from simulo_envs.policies.pick_experts import PickExpertConfig, PickPlaceExpert, StackExpert
from simulo_envs.policies.push_expert import PushExpert, PushExpertConfig

_SO_LIFT = partial(LiftExpert, config=LiftExpertConfig(hover=0.04, lift_height=0.08, reach_tol=0.005, close_time=0.4))
_SO_PICK_PLACE = partial(PickPlaceExpert, config=PickExpertConfig(hover=0.04, reach_tol=0.005, close_time=0.4,
                                                                  grasp_offset=0.0, drop_tol=0.02))
EXPERTS = {
    "FrankaLift-v1": LiftExpert,
    "FrankaLiftMixed-v1": LiftExpert,
    "FrankaLiftRandomized-v1": LiftExpert,
    "FrankaPush-v1": PushExpert,
    "FrankaPickPlace-v1": PickPlaceExpert,
    "FrankaStack-v1": StackExpert,
    "FrankaStack-v2": StackExpert,
    "FrankaOpenDrawer-v1": DrawerExpert,
    "SO100Lift-v1": _SO_LIFT,
    "SO100PickPlace-v1": _SO_PICK_PLACE,
    "SO101Lift-v1": _SO_LIFT,
    "SO101PickPlace-v1": _SO_PICK_PLACE,
}

__all__ = ["EXPERTS", "PhaseExpert", "DrawerExpert", "DrawerExpertConfig", "LiftExpert", "LiftExpertConfig", "PushExpert", "PushExpertConfig",
           "PickExpertConfig", "PickPlaceExpert", "StackExpert"]
