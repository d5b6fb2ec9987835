"""``DrawerExpert``: a batched scripted expert for FrankaOpenDrawer-v1 and SO101OpenDrawer-v1 on
``pd_ee_delta_pos``.

Phases, per env (``PhaseExpert``), on the handle's grip point and the drawer's opening direction
from the task's info:

    APPROACH  move ``hover`` above the grip point, gripper open; descend only once above it
    DESCEND   move the TCP to the grip point (fingers either side of the vertical bar)
    CLOSE     hold still and close the gripper for ``close_time`` seconds
    PULL      drive the TCP ``pull_step`` ahead along the opening direction, gripper closed; a
              TCP that ends more than ``slip_tol`` from the grip point (the handle slipped out)
              opens the gripper and starts again at APPROACH

With ``release_at`` set (SO101OpenDrawer-v1, whose success needs the handle let go), two more:

    RELEASE   once the drawer is open ``release_at``: hold still and open the gripper for
              ``open_time`` seconds
    RETREAT   move the TCP ``hover`` straight up from where it let go, gripper open; then hold

The task's info names the grip point ``handle_pos`` (N, 3), the drawer's way out
``open_direction`` (N, 3, unit) and its opening ``drawer_qpos`` (N, 1) [m], world frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from simulo_envs.policies.phase_expert import CLOSED, OPEN, PhaseExpert

APPROACH, DESCEND, CLOSE, PULL, RELEASE, RETREAT = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True)
class DrawerExpertConfig:
    """Tunables of ``DrawerExpert`` (metres, seconds)."""

    hover: float = 0.08          # approach height above the grip point [m]
    reach_tol: float = 0.01      # waypoint reached within this distance [m]
    close_time: float = 0.3      # time spent closing the gripper [s] (6 steps at 20 Hz)
    pull_step: float = 0.025     # pull target this far ahead of the grip point (sets the pulling speed) [m]
    slip_tol: float = 0.02       # TCP farther than this from the grip point: the handle slipped out [m]
    grasp_shift: float = 0.0     # grasp with the TCP this far from the grip point along the way out [m]
    release_at: Optional[float] = None  # let go once the drawer is open this much [m]; None: never
    open_time: float = 0.3       # time spent opening the gripper to let go [s]
    open_action: float = OPEN    # gripper action while open, in [-1, 1] (+1: wide open)
    gain: float = 0.6            # fraction of the remaining error commanded per step
    pos_bound: Optional[float] = None  # the controller's translation per unit action [m]; None: the env's


class DrawerExpert(PhaseExpert):
    """Batched scripted expert for FrankaOpenDrawer-v1; see the module docstring."""

    def __init__(self, env, config: DrawerExpertConfig = DrawerExpertConfig()):
        super().__init__(env, gain=config.gain, pos_bound=config.pos_bound)
        self.cfg = config
        self._let_go = torch.zeros(self.num_envs, 3, device=self.device)  # where each env let go of the handle

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        handle, tcp, way_out = info["handle_pos"], info["tcp_pose"][:, :3], info["open_direction"]
        grip = handle + way_out * cfg.grasp_shift
        above = grip.clone()
        above[:, 2] += cfg.hover
        pull = grip + way_out * cfg.pull_step
        retreat = self._let_go.clone()
        retreat[:, 2] += cfg.hover
        goal = self.pick(self.phase, {APPROACH: above, DESCEND: grip, CLOSE: tcp, PULL: pull, RELEASE: tcp,
                                      RETREAT: retreat})
        phase = self.phase
        reached = (goal - tcp).norm(dim=1) < cfg.reach_tol
        planar = (tcp[:, :2] - grip[:, :2]).norm(dim=1) < cfg.reach_tol
        self._advance(((phase == APPROACH) & reached & planar) | ((phase == DESCEND) & reached)
                      | ((phase == CLOSE) & (self.timer >= self.steps_for(cfg.close_time))))
        self._advance((phase == PULL) & ((grip - tcp).norm(dim=1) > cfg.slip_tol), to=APPROACH)
        if cfg.release_at is not None:
            opened = (phase == PULL) & (info["drawer_qpos"][:, 0] >= cfg.release_at)
            self._let_go = torch.where(opened[:, None], tcp, self._let_go)
            self._advance(opened | ((phase == RELEASE) & (self.timer >= self.steps_for(cfg.open_time))))
        action = torch.empty(self.num_envs, 4, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        action[:, 3] = torch.where((phase >= CLOSE) & (phase <= PULL), CLOSED, cfg.open_action)
        return action
