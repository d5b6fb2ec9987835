"""Batched scripted experts that grasp a cube from above on ``pd_ee_delta_pos``: ``PickPlaceExpert``
(FrankaPickPlace-v1, SO100PickPlace-v1), ``StackExpert`` (FrankaStack-v1) and ``SortExpert``
(SO101Sort-v1).

Both begin like ``LiftExpert``, per env (``PhaseExpert``):

    APPROACH  move ``hover`` above the cube, gripper open; descend only once above it in the plane
    DESCEND   move the TCP to the cube's centre, gripper open
    CLOSE     hold still and close the gripper for ``close_time`` seconds

then ``PickPlaceExpert`` carries it (CARRY: the TCP straight to the goal point, gripper closed),
and ``StackExpert`` lifts it clear of the other cube (LIFT), moves above it (OVER), lowers it
onto it (PLACE, until it rests there), opens the gripper (RELEASE, ``open_time`` seconds) and rises
away (RETREAT, ``retreat_hover`` above the resting place). A
cube that falls out of the gripper on the way (its grip point ``drop_tol`` from the TCP) sends
the env back to APPROACH.

``SortExpert`` works on the first cube not yet in its bin (A, then B): it lifts it to ``carry_z``
(LIFT), moves it over its bin's centre (OVER), opens the gripper (RELEASE, ``open_time``
seconds) and rises straight up to ``carry_z`` (RAISE), then starts again on the next cube (or
the same one, had it missed). With both cubes in, it holds still, gripper open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from simulo_envs.policies.phase_expert import CLOSED, OPEN, PhaseExpert

APPROACH, DESCEND, CLOSE = 0, 1, 2
CARRY = 3
LIFT, OVER, PLACE, RELEASE, RETREAT = 3, 4, 5, 6, 7
SORT_LIFT, SORT_OVER, SORT_RELEASE, SORT_RAISE = 3, 4, 5, 6


@dataclass(frozen=True)
class PickExpertConfig:
    """Tunables of the cube-grasping experts (metres, seconds)."""

    hover: float = 0.08          # approach height above the cube centre; also the clearance when stacking [m]
    reach_tol: float = 0.01      # waypoint reached within this distance [m]
    close_time: float = 0.3      # time spent closing the gripper [s] (6 steps at 20 Hz)
    open_time: float = 0.2       # time spent opening it (StackExpert) [s] (4 steps at 20 Hz)
    grasp_offset: float = 0.01   # grasp with the TCP this far above the cube centre (fingertips clear of what is below) [m]
    drop_tol: float = 0.03       # carrying: the cube's grip point farther than this from the TCP means it fell [m]
    place_gap: float = 0.004     # stacking: the held cube's bottom this far above the other's top [m]
    align_tol: float = 0.006     # stacking: lower once the held cube is this close above the other in the plane;
                                 # let go once it is this close to its resting place [m]
    place_slowdown: float = 0.5  # stacking: fraction of the usual speed while lowering the cube
    open_action: float = OPEN    # gripper action while open, in [-1, 1]: +1 wide open; less keeps a
                                 # hinged jaw from sweeping into things beside the cube
    carry_z: float = 0.07        # sorting: the TCP's height while carrying and after releasing [m]
    retreat_hover: Optional[float] = None  # stacking: RETREAT rises this far above the resting place [m];
                                 # None: ``hover``. Higher keeps the wait after letting go apart from the
                                 # hover before a grasp (a policy learnt from it tells the two apart)
    gain: float = 0.6            # fraction of the remaining error commanded per step
    pos_bound: Optional[float] = None  # the controller's translation per unit action [m]; None: the env's


class _GraspExpert(PhaseExpert):
    """APPROACH / DESCEND / CLOSE on the cube to grasp; subclasses add the phases after CLOSE."""

    def __init__(self, env, config: PickExpertConfig = PickExpertConfig()):
        super().__init__(env, gain=config.gain, pos_bound=config.pos_bound)
        self.cfg = config

    def _grasp_goals(self, cube: torch.Tensor, tcp: torch.Tensor) -> dict:
        grasp = cube.clone()
        grasp[:, 2] += self.cfg.grasp_offset
        above = cube.clone()
        above[:, 2] += self.cfg.hover
        return {APPROACH: above, DESCEND: grasp, CLOSE: tcp}

    def _dropped(self, cube: torch.Tensor, tcp: torch.Tensor) -> torch.Tensor:
        """bool (N,): the cube is no longer between the fingers (its grip point too far from the TCP)."""
        grip = cube.clone()
        grip[:, 2] += self.cfg.grasp_offset
        return (grip - tcp).norm(dim=1) > self.cfg.drop_tol

    def _grasp_advance(self, goal, cube, tcp) -> torch.Tensor:
        """Advance the grasp phases; returns ``reached`` (N,) for the subclass's phases."""
        cfg, phase = self.cfg, self.phase
        reached = (goal - tcp).norm(dim=1) < cfg.reach_tol
        planar = (tcp[:, :2] - cube[:, :2]).norm(dim=1) < cfg.reach_tol
        self._advance(((phase == APPROACH) & reached & planar) | ((phase == DESCEND) & reached)
                      | ((phase == CLOSE) & (self.timer >= self.steps_for(cfg.close_time))))
        return reached


class PickPlaceExpert(_GraspExpert):
    """Batched scripted expert for FrankaPickPlace-v1 and SO100PickPlace-v1; see the module
    docstring. Grasps the cube at its centre by default (nothing lies below it to catch with the
    fingertips)."""

    def __init__(self, env, config: PickExpertConfig = PickExpertConfig(grasp_offset=0.0)):
        super().__init__(env, config)

    def _act(self, info: dict) -> torch.Tensor:
        cube, tcp = info["cube_pose"][:, :3], info["tcp_pose"][:, :3]
        goal_point = tcp + info["cube_to_goal"]  # the TCP's goal that puts the held cube on the goal
        goal = self.pick(self.phase, {**self._grasp_goals(cube, tcp), CARRY: goal_point})
        phase = self.phase
        self._grasp_advance(goal, cube, tcp)
        self._advance((phase == CARRY) & self._dropped(cube, tcp), to=APPROACH)
        action = torch.empty(self.num_envs, 4, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        action[:, 3] = torch.where(phase >= CLOSE, CLOSED, self.cfg.open_action)
        return action


class StackExpert(_GraspExpert):
    """Batched scripted expert for FrankaStack-v1 (cube A onto cube B); see the module docstring."""

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        cube, tcp = info["a_pose"][:, :3], info["tcp_pose"][:, :3]
        on_top = tcp + info["a_to_place"]  # the TCP's goal that rests the held cube on the other
        on_top[:, 2] += cfg.place_gap
        over = on_top.clone()
        over[:, 2] += cfg.hover
        lift = tcp.clone()
        lift[:, 2] = over[:, 2]
        retreat = tcp.clone()  # straight up, to a height fixed by the other cube
        rise = cfg.hover if cfg.retreat_hover is None else cfg.retreat_hover
        retreat[:, 2] = info["b_pose"][:, 2] + rise + cfg.grasp_offset
        goal = self.pick(self.phase, {**self._grasp_goals(cube, tcp), LIFT: lift, OVER: over, PLACE: on_top,
                                      RELEASE: tcp, RETREAT: retreat})
        phase = self.phase
        reached = self._grasp_advance(goal, cube, tcp)
        aligned = info["a_to_place"][:, :2].norm(dim=1) < cfg.align_tol
        resting = info["a_to_place"].norm(dim=1) < cfg.align_tol  # on the other cube: let go now
        self._advance(((phase == LIFT) & reached) | ((phase == OVER) & reached & aligned)
                      | ((phase == PLACE) & (reached | resting))
                      | ((phase == RELEASE) & (self.timer >= self.steps_for(cfg.open_time))))
        self._advance((phase >= LIFT) & (phase <= PLACE) & self._dropped(cube, tcp), to=APPROACH)
        action = torch.empty(self.num_envs, 4, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        action[:, :3] *= torch.where(phase == PLACE, cfg.place_slowdown, 1.0).unsqueeze(1)  # lower gently
        action[:, 3] = torch.where((phase >= CLOSE) & (phase < RELEASE), CLOSED, cfg.open_action)
        return action


class SortExpert(_GraspExpert):
    """Batched scripted expert for SO101Sort-v1 (each cube into the bin of its colour); see the
    module docstring."""

    def __init__(self, env, config: PickExpertConfig = PickExpertConfig(grasp_offset=0.0)):
        super().__init__(env, config)

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        on_b = info["a_in_bin"][:, None]  # A is in its bin: work on B
        cube = torch.where(on_b, info["b_pose"][:, :3], info["a_pose"][:, :3])
        over = torch.where(on_b, info["b_bin_pos"], info["a_bin_pos"]).clone()
        over[:, 2] = cfg.carry_z
        tcp = info["tcp_pose"][:, :3]
        up = tcp.clone()
        up[:, 2] = cfg.carry_z
        goal = self.pick(self.phase, {**self._grasp_goals(cube, tcp), SORT_LIFT: up, SORT_OVER: over,
                                      SORT_RELEASE: tcp, SORT_RAISE: up})
        phase = self.phase
        reached = self._grasp_advance(goal, cube, tcp)
        self._advance(((phase == SORT_LIFT) | (phase == SORT_OVER)) & reached
                      | ((phase == SORT_RELEASE) & (self.timer >= self.steps_for(cfg.open_time))))
        self._advance((phase == SORT_RAISE) & reached, to=APPROACH)
        self._advance(((phase == SORT_LIFT) | (phase == SORT_OVER)) & self._dropped(cube, tcp), to=APPROACH)
        done = info["a_in_bin"] & info["b_in_bin"] & (phase == APPROACH)  # both in: hold still, open
        goal = torch.where(done[:, None], up, goal)
        action = torch.empty(self.num_envs, 4, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        action[:, 3] = torch.where((phase >= CLOSE) & (phase <= SORT_OVER), CLOSED, cfg.open_action)
        return action
