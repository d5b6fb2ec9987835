"""``DrawerExpert``: a batched scripted expert for FrankaOpenDrawer-v1 on ``pd_ee_delta_pos``.

Phases, per env (``PhaseExpert``), on the handle's grip point and the drawer's opening direction
from the task's info:

    APPROACH  move ``hover`` above the grip point, gripper open; descend only once above it
    DESCEND   move the TCP to the grip point (fingers either side of the vertical bar)
    CLOSE     hold still and close the gripper for ``close_time`` seconds
    PULL      drive the TCP ``pull_step`` ahead along the opening direction, gripper closed; a
              TCP that ends more than ``slip_tol`` from the grip point (the handle slipped out)
              opens the gripper and starts again at APPROACH
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from simulo_envs.policies.phase_expert import CLOSED, OPEN, PhaseExpert

APPROACH, DESCEND, CLOSE, PULL = 0, 1, 2, 3


@dataclass(frozen=True)
class DrawerExpertConfig:
    """Tunables of ``DrawerExpert`` (metres, seconds)."""

    hover: float = 0.08          # approach height above the grip point [m]
    reach_tol: float = 0.01      # waypoint reached within this distance [m]
    close_time: float = 0.3      # time spent closing the gripper [s] (6 steps at 20 Hz)
    pull_step: float = 0.025     # pull target this far ahead of the grip point (sets the pulling speed) [m]
    slip_tol: float = 0.02       # TCP farther than this from the grip point: the handle slipped out [m]
    gain: float = 0.6            # fraction of the remaining error commanded per step
    pos_bound: Optional[float] = None  # the controller's translation per unit action [m]; None: the env's


class DrawerExpert(PhaseExpert):
    """Batched scripted expert for FrankaOpenDrawer-v1; see the module docstring."""

    def __init__(self, env, config: DrawerExpertConfig = DrawerExpertConfig()):
        super().__init__(env, gain=config.gain, pos_bound=config.pos_bound)
        self.cfg = config

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        grip, tcp = info["handle_pos"], info["tcp_pose"][:, :3]
        above = grip.clone()
        above[:, 2] += cfg.hover
        pull = grip + info["open_direction"] * cfg.pull_step
        goal = self.pick(self.phase, {APPROACH: above, DESCEND: grip, CLOSE: tcp, PULL: pull})
        phase = self.phase
        reached = (goal - tcp).norm(dim=1) < cfg.reach_tol
        planar = (tcp[:, :2] - grip[:, :2]).norm(dim=1) < cfg.reach_tol
        self._advance(((phase == APPROACH) & reached & planar) | ((phase == DESCEND) & reached)
                      | ((phase == CLOSE) & (self.timer >= self.steps_for(cfg.close_time))))
        self._advance((phase == PULL) & ((grip - tcp).norm(dim=1) > cfg.slip_tol), to=APPROACH)
        action = torch.empty(self.num_envs, 4, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        action[:, 3] = torch.where(phase >= CLOSE, CLOSED, OPEN)
        return action
