"""``PushExpert``: a batched scripted expert for FrankaPush-v1 and the SO arms' push and pull
tasks (SO101Push-v1, SO101Pull-v1: the same info keys) on ``pd_ee_delta_pos``.

Phases, per env (``PhaseExpert``), gripper closed throughout:

    ABOVE   move the pusher above the push point: ``standoff`` behind the cube on the
            goal-to-cube line (a pusher below ``hover`` and away from that point first rises
            straight up, so that it never sweeps over the cube), and stay there at least
            ``close_time`` seconds after the episode's start (a gripper that starts open closes
            first)
    DOWN    descend to ``push_height`` at the push point
    PUSH    drive the pusher along the cube-to-goal line, re-aimed every step from the cube's
            current position: towards the point ``contact`` behind the goal (where it touches
            a cube resting on the goal), at most ``advance`` ahead of where it touches the cube
            now; if it falls more than ``max_offset`` off that line (the cube slid sideways)
            or gets past the cube (the cube slid by the goal), lift and start again; the pusher moves at most ``push_speed`` [m/s], so the cube,
            pushed no faster, does not slide on past the goal
    RETREAT (with ``finish_tol``) once the cube's centre is within ``finish_tol`` of the goal,
            in any phase, move the pusher away from the cube to ``2 * standoff`` from its centre
            at ``hover`` height, then hold still: the cube stays there untouched to the
            episode's end (should it drift more than ``2 * finish_tol`` off, start again)

The pusher is the point of the closed gripper that pushes: the TCP moved by ``pusher_offset``
in the TCP's own frame (zero for the Panda, whose TCP sits between its fingertips; the SO arms'
TCP lies 18.5 mm in front of the jaw's pad: their pusher is the closed jaw's centre, which pushes
with one face or the other whatever the direction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from simulo_envs.geometry import quat_apply
from simulo_envs.policies.phase_expert import CLOSED, PhaseExpert

ABOVE, DOWN, PUSH, RETREAT = 0, 1, 2, 3


@dataclass(frozen=True)
class PushExpertConfig:
    """Tunables of ``PushExpert`` (metres)."""

    standoff: float = 0.035     # push point behind the cube centre (half the cube + the fingers) [m]
    contact: Optional[float] = None  # pusher-to-cube-centre distance when touching [m]; None: standoff
    hover: float = 0.08         # height of the ABOVE waypoint [m]
    push_height: float = 0.02   # TCP height while pushing [m]
    advance: float = 0.05       # how far past the push point the TCP is driven [m]
    max_offset: float = 0.02    # TCP distance from the push line that restarts the approach [m]
    reach_tol: float = 0.01     # waypoint reached within this distance [m]
    close_time: float = 0.0     # the gripper's time to close [s]: the ABOVE phase lasts at least this
    pusher_offset: tuple = (0.0, 0.0, 0.0)  # the pushing point in the TCP frame [m]
    push_speed: Optional[float] = None  # the pusher's speed limit while pushing [m/s]; None: none
    finish_tol: Optional[float] = None  # cube this close to the goal: retreat [m]; None: push on


class PushExpert(PhaseExpert):
    """Batched scripted expert for FrankaPush-v1; see the module docstring."""

    def __init__(self, env, config: PushExpertConfig = PushExpertConfig()):
        super().__init__(env)
        self.cfg = config

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        cube = info["cube_pose"][:, :3]
        tcp_pose = info["tcp_pose"]
        tcp = tcp_pose[:, :3] + quat_apply(tcp_pose[:, 3:], torch.tensor(cfg.pusher_offset, device=self.device))
        to_goal = info["cube_to_goal"][:, :2]
        remaining = to_goal.norm(dim=1, keepdim=True)
        direction = to_goal / remaining.clamp_min(1e-6)
        behind = cube[:, :2] - direction * cfg.standoff
        low = torch.cat([behind, torch.full_like(remaining, cfg.push_height)], dim=1)
        high = low.clone()
        high[:, 2] = cfg.hover
        contact = cfg.standoff if cfg.contact is None else cfg.contact
        ahead = low.clone()
        ahead[:, :2] = cube[:, :2] - direction * contact + direction * torch.clamp(remaining, max=cfg.advance)
        away = tcp[:, :2] - cube[:, :2]
        back = high.clone()
        back[:, :2] = cube[:, :2] + away / away.norm(dim=1, keepdim=True).clamp_min(1e-6) * 2 * cfg.standoff
        rise = torch.cat([tcp[:, :2], torch.full_like(remaining, cfg.hover)], dim=1)
        must_rise = (tcp[:, 2] < cfg.hover - cfg.reach_tol) & ((tcp[:, :2] - high[:, :2]).norm(dim=1) > cfg.reach_tol)
        high = torch.where(must_rise[:, None], rise, high)
        goal = self.pick(self.phase, {ABOVE: high, DOWN: low, PUSH: ahead, RETREAT: back})

        rel = tcp[:, :2] - behind
        off_line = (rel - (rel * direction).sum(1, keepdim=True) * direction).norm(dim=1)
        reached = (goal - tcp).norm(dim=1) < cfg.reach_tol
        phase = self.phase
        closed = self.timer >= self.steps_for(cfg.close_time) if cfg.close_time > 0 else True
        self._advance(((phase == ABOVE) & reached & closed) | ((phase == DOWN) & reached))
        beyond = (rel * direction).sum(1) > cfg.standoff  # past the cube (it slid by the goal): push it back
        self._advance((phase == PUSH) & ((off_line > cfg.max_offset) | beyond), to=ABOVE)
        if cfg.finish_tol is not None:  # wherever the cube is close enough to the goal: retreat; drifted off: again
            self._advance((phase != RETREAT) & (remaining[:, 0] < cfg.finish_tol), to=RETREAT)
            self._advance((phase == RETREAT) & (remaining[:, 0] > 2 * cfg.finish_tol), to=ABOVE)

        action = torch.full((self.num_envs, 4), CLOSED, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        if cfg.push_speed is not None:
            limit = cfg.push_speed / (self.control_freq * self.pos_bound)  # the action of push_speed
            size = action[:, :3].norm(dim=1, keepdim=True)
            slow = (phase == PUSH)[:, None] & (size > limit)
            action[:, :3] = torch.where(slow, action[:, :3] * limit / size.clamp_min(1e-9), action[:, :3])
        return action
