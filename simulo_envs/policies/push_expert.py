"""``PushExpert``: a batched scripted expert for FrankaPush-v1 on ``pd_ee_delta_pos``.

Phases, per env (``PhaseExpert``), gripper closed throughout:

    ABOVE  move above the push point: ``standoff`` behind the cube on the goal-to-cube line
    DOWN   descend to ``push_height`` at the push point
    PUSH   drive the TCP along the cube-to-goal line, re-aimed every step from the cube's
           current position, at most ``advance`` ahead of the push point; if the TCP falls more
           than ``max_offset`` off that line (the cube slid sideways), lift and start again
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.policies.phase_expert import CLOSED, PhaseExpert

ABOVE, DOWN, PUSH = 0, 1, 2


@dataclass(frozen=True)
class PushExpertConfig:
    """Tunables of ``PushExpert`` (metres)."""

    standoff: float = 0.035     # push point behind the cube centre (half the cube + the fingers) [m]
    hover: float = 0.08         # height of the ABOVE waypoint [m]
    push_height: float = 0.02   # TCP height while pushing [m]
    advance: float = 0.05       # how far past the push point the TCP is driven [m]
    max_offset: float = 0.02    # TCP distance from the push line that restarts the approach [m]
    reach_tol: float = 0.01     # waypoint reached within this distance [m]


class PushExpert(PhaseExpert):
    """Batched scripted expert for FrankaPush-v1; see the module docstring."""

    def __init__(self, env, config: PushExpertConfig = PushExpertConfig()):
        super().__init__(env)
        self.cfg = config

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        cube = info["cube_pose"][:, :3]
        tcp = info["tcp_pose"][:, :3]
        to_goal = info["cube_to_goal"][:, :2]
        remaining = to_goal.norm(dim=1, keepdim=True)
        direction = to_goal / remaining.clamp_min(1e-6)
        behind = cube[:, :2] - direction * cfg.standoff
        low = torch.cat([behind, torch.full_like(remaining, cfg.push_height)], dim=1)
        high = low.clone()
        high[:, 2] = cfg.hover
        ahead = low.clone()
        ahead[:, :2] += direction * torch.clamp(remaining, max=cfg.advance)
        goal = self.pick(self.phase, {ABOVE: high, DOWN: low, PUSH: ahead})

        rel = tcp[:, :2] - behind
        off_line = (rel - (rel * direction).sum(1, keepdim=True) * direction).norm(dim=1)
        reached = (goal - tcp).norm(dim=1) < cfg.reach_tol
        phase = self.phase
        self._advance(((phase == ABOVE) | (phase == DOWN)) & reached)
        self._advance((phase == PUSH) & (off_line > cfg.max_offset), to=ABOVE)

        action = torch.full((self.num_envs, 4), CLOSED, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        return action
