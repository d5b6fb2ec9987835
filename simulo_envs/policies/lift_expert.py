"""``LiftExpert``: a batched scripted expert for FrankaLift-v1 and SO100Lift-v1 on
``pd_ee_delta_pos``, whichever robot runs it (the lifted object's info keys are
``<object>_pose``: ``block`` in FrankaLift-v1, ``cube`` in SO100Lift-v1; ``LiftExpertConfig.object``).

A state machine with one phase per env, run on privileged state (the block's and the TCP's
world poses, read from the env):

    APPROACH  move above the block (``hover`` over its centre), gripper open
    DESCEND   move the TCP to the block's centre, gripper open
    CLOSE     hold still and close the gripper for ``close_time`` seconds
    LIFT      raise the TCP to ``lift_height`` above the block's spawn height, gripper closed;
              a missed grasp (the task's ``is_grasped`` false once the TCP is ``retry_rise``
              above the block's centre) opens the gripper and starts again at APPROACH

Phase bookkeeping, ``act()`` / ``act(info)`` and moves are ``PhaseExpert``'s: an env just reset
(fully or partially) starts again at APPROACH; the state comes from the task's info
(``<object>_pose``, ``tcp_pose``, ``height_gain``); actions are ``clip(gain * (goal - tcp) /
pos_bound, -1, 1)`` for the arm (world-frame TCP translation) and +1 (open) / -1 (closed) for
the gripper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from simulo_envs.policies.phase_expert import CLOSED, OPEN, PhaseExpert

APPROACH, DESCEND, CLOSE, LIFT = 0, 1, 2, 3


@dataclass(frozen=True)
class LiftExpertConfig:
    """Tunables of ``LiftExpert`` (metres, seconds)."""

    hover: float = 0.08          # approach height above the block centre [m]
    grasp_depth: float = 0.0     # TCP goal below the block centre when descending [m]
    lift_height: float = 0.2     # lift goal above the block's spawn height [m]
    reach_tol: float = 0.01      # phase switch when the TCP is this close to its goal [m]
    close_time: float = 0.3      # time spent closing the gripper [s] (6 steps at 20 Hz)
    open_action: float = OPEN    # gripper action while open, in [-1, 1] (+1: wide open)
    gain: float = 0.6            # fraction of the remaining error commanded per step
    pos_bound: Optional[float] = None  # the controller's translation per unit action [m]; None: the env's
    object: str = "block"        # the lifted object's name in the task's info (its pose: info["<object>_pose"])
    retry_rise: float = 0.03     # a LIFT whose TCP is this far above the object's centre without a grasp retries [m]


class LiftExpert(PhaseExpert):
    """Batched scripted expert; see the module docstring.

    Args:
        env: a FrankaLift-v1 or SO100Lift-v1 env (wrapped or not) made with
            ``control_mode="pd_ee_delta_pos"``.
        config: tunables.

    Raises:
        ValueError: the env's control mode is not ``pd_ee_delta_pos``.
    """

    def __init__(self, env, config: LiftExpertConfig = LiftExpertConfig()):
        super().__init__(env, gain=config.gain, pos_bound=config.pos_bound)
        self.cfg = config

    def _act(self, info: dict) -> torch.Tensor:
        cfg = self.cfg
        block = info[f"{cfg.object}_pose"][:, :3]
        tcp = info["tcp_pose"][:, :3]
        spawn_z = block[:, 2] - info["height_gain"]
        grasp = block.clone()
        grasp[:, 2] -= cfg.grasp_depth
        above = block.clone()
        above[:, 2] += cfg.hover
        lift = block.clone()
        lift[:, 2] = spawn_z + cfg.lift_height
        goal = self.pick(self.phase, {APPROACH: above, DESCEND: grasp, CLOSE: tcp, LIFT: lift})

        reached = (goal - tcp).norm(dim=1) < cfg.reach_tol
        # Approach: also require the TCP to be above the block in the plane before descending.
        planar = (tcp[:, :2] - block[:, :2]).norm(dim=1) < cfg.reach_tol
        phase = self.phase
        self._advance(((phase == APPROACH) & reached & planar) | ((phase == DESCEND) & reached)
                      | ((phase == CLOSE) & (self.timer >= self.steps_for(cfg.close_time))))
        grasped = info.get("is_grasped")
        if grasped is not None:  # a missed grasp lifts an empty gripper: open and approach again
            missed = (phase == LIFT) & ~grasped.to(self.device) & (tcp[:, 2] - block[:, 2] > cfg.retry_rise)
            self._advance(missed, to=APPROACH)

        action = torch.empty(self.num_envs, 4, device=self.device)
        action[:, :3] = self.move_to(goal, tcp)
        action[:, 3] = torch.where(phase >= CLOSE, CLOSED, cfg.open_action)
        return action
