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
from simulo_envs.policies.phase_expert import CLOSED, PhaseExpert
from simulo_envs.policies.pick_experts import PickExpertConfig, PickPlaceExpert, SortExpert, StackExpert
from simulo_envs.policies.place_expert import PlaceExpert
from simulo_envs.policies.push_expert import PushExpert, PushExpertConfig

_SO_LIFT = partial(LiftExpert, config=LiftExpertConfig(hover=0.04, lift_height=0.08, reach_tol=0.005, close_time=0.4,
                                                     object="cube"))
_SO_PICK_PLACE = partial(PickPlaceExpert, config=PickExpertConfig(hover=0.04, reach_tol=0.005, close_time=0.4,
                                                                  grasp_offset=0.0, drop_tol=0.02))
_SO_PLACE = partial(PlaceExpert, config=PickExpertConfig(hover=0.04, reach_tol=0.005, close_time=0.4, grasp_offset=0.0,
                                                        drop_tol=0.02, place_gap=0.02))
# Set down on the table or the other cube, then open the SO-101's jaw part way: opened wide it swings
# into what it let go of and knocks it off the target (0.84 -> 0.98) or the lower cube (0.81 -> 1.00, held-out seeds).
# On the square: let go 15 mm up and wait 10 cm up, so neither looks like grasping the cube on the table or
# hovering 4 cm above it (a policy learnt from recordings to the time limit otherwise lets go where it grasped).
_SO_PLACE_ON = partial(PlaceExpert, config=PickExpertConfig(hover=0.04, reach_tol=0.005, close_time=0.4, grasp_offset=0.0,
                                                           drop_tol=0.02, place_gap=0.015, open_action=-0.5,
                                                           retreat_hover=0.10))
_SO_STACK = partial(StackExpert, config=PickExpertConfig(hover=0.04, reach_tol=0.005, close_time=0.4, grasp_offset=0.0,
                                                        drop_tol=0.02, place_gap=0.0, open_action=-0.5))


def _so_push(pusher_offset: tuple, contact: float, push_height: float = 0.022, push_speed: float = 0.15):
    """The SO arms' push/pull expert: the closed jaw's centre (``pusher_offset``, TCP frame) pushes."""
    return partial(PushExpert, config=PushExpertConfig(
        standoff=contact + 0.011, contact=contact, hover=0.07, push_height=push_height, advance=0.03, max_offset=0.015,
        reach_tol=0.006, close_time=0.4, pusher_offset=pusher_offset, push_speed=push_speed, finish_tol=0.012))


_SO100_PUSH = _so_push((0.017, 0.0, 0.0), 0.026, 0.03, 0.08)   # the SO-100's TCP frame: +x towards the fixed jaw
_SO101_PUSH = _so_push((-0.019, 0.0, 0.0), 0.021)  # the SO-101's: -x towards the fixed jaw
_SO100_PULL = _so_push((0.017, 0.0, 0.0), 0.026, 0.02, 0.08)
# The SO arms open a drawer by hooking its handle: the closed jaw lowered between the bar and the
# drawer's face (the TCP 36 mm beyond the bar's centre), pulled back, then lifted clear.
_SO_DRAWER = partial(DrawerExpert, config=DrawerExpertConfig(
    hover=0.05, reach_tol=0.005, close_time=0.05, pull_step=0.02, slip_tol=0.03, grasp_shift=-0.036,
    release_at=0.055, open_action=CLOSED))
# Sorting opens the SO-101's jaw part way: opened wide, its moving jaw swings into a bin's wall or the
# other cube beside the one to grasp (held-out positions: 0.80 -> 1.00 over 64 seeds).
_SO_SORT = partial(SortExpert, config=PickExpertConfig(hover=0.04, reach_tol=0.005, close_time=0.4, open_time=0.3,
                                                       grasp_offset=0.0, drop_tol=0.02, carry_z=0.07, open_action=-0.5))
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
    "SO101PlaceInBowl-v1": _SO_PLACE,
    "SO100PlaceInBowl-v1": _SO_PLACE,
    "SO101PlaceOnTarget-v1": _SO_PLACE_ON,
    "SO100PlaceOnTarget-v1": _SO_PLACE_ON,
    "SO101Stack-v1": _SO_STACK,
    "SO100Stack-v1": _SO_STACK,
    "SO100Push-v1": _SO100_PUSH,
    "SO101Push-v1": _SO101_PUSH,
    "SO100Pull-v1": _SO100_PULL,
    "SO101Pull-v1": _SO101_PUSH,
    "SO100Sort-v1": _SO_SORT,
    "SO101Sort-v1": _SO_SORT,
    "SO100OpenDrawer-v1": _SO_DRAWER,
    "SO101OpenDrawer-v1": _SO_DRAWER,
}

__all__ = ["EXPERTS", "PhaseExpert", "DrawerExpert", "DrawerExpertConfig", "LiftExpert", "LiftExpertConfig", "PushExpert", "PushExpertConfig", "SortExpert",
           "PickExpertConfig", "PickPlaceExpert", "PlaceExpert", "StackExpert"]
