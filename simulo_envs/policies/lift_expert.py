"""``LiftExpert``: a batched scripted expert for FrankaLift-v1 on ``pd_ee_delta_pos``.

A state machine with one phase per env, run on privileged state (the block's and the TCP's
world poses, read from the env):

    APPROACH  move above the block (``hover`` over its centre), gripper open
    DESCEND   move the TCP to the block's centre, gripper open
    CLOSE     hold still and close the gripper for ``close_steps`` steps
    LIFT      raise the TCP to ``lift_height`` above the block's spawn height, gripper closed

An env whose ``elapsed_steps`` is 0 (it was just reset, fully or partially) starts again at
APPROACH, so partial resets in the middle of a rollout never confuse it; ``reset(env_ids)``
does the same explicitly. ``act()`` reads the state from the env's objects; ``act(info)`` reads
it from the last ``info`` of ``reset``/``step`` (``block_pose``, ``tcp_pose``, ``height_gain``,
``elapsed_steps``), which is how it drives envs in worker processes. Actions are ``clip(gain * (goal - tcp) / pos_bound, -1, 1)`` for the
arm (world-frame TCP translation) and +1 (open) / -1 (closed) for the gripper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from simulo_envs.env_ids import normalize_env_ids

APPROACH, DESCEND, CLOSE, LIFT = 0, 1, 2, 3


@dataclass(frozen=True)
class LiftExpertConfig:
    """Tunables of ``LiftExpert`` (metres, env steps)."""

    hover: float = 0.08          # approach height above the block centre [m]
    grasp_depth: float = 0.0     # TCP goal below the block centre when descending [m]
    lift_height: float = 0.2     # lift goal above the block's spawn height [m]
    reach_tol: float = 0.01      # phase switch when the TCP is this close to its goal [m]
    close_steps: int = 6         # env steps spent closing the gripper
    gain: float = 0.6            # fraction of the remaining error commanded per step
    pos_bound: float = 0.1       # the controller's translation per unit action [m]


class LiftExpert:
    """Batched scripted expert; see the module docstring.

    Args:
        env: a FrankaLift-v1 env (wrapped or not) made with ``control_mode="pd_ee_delta_pos"``.
        config: tunables.

    Raises:
        ValueError: the env's control mode is not ``pd_ee_delta_pos``.
    """

    def __init__(self, env, config: LiftExpertConfig = LiftExpertConfig()):
        base = env.unwrapped
        if base.control_mode != "pd_ee_delta_pos":
            raise ValueError(f"LiftExpert needs control_mode='pd_ee_delta_pos', the env has {base.control_mode!r}")
        self.env = base
        self.cfg = config
        self.num_envs = base.num_envs
        self.phase = torch.zeros(self.num_envs, dtype=torch.long, device=base.device)
        self.closing = torch.zeros(self.num_envs, dtype=torch.long, device=base.device)

    def reset(self, env_ids=None) -> None:
        """Restart the state machine of ``env_ids`` (None: all) at APPROACH."""
        ids = torch.from_numpy(normalize_env_ids(env_ids, self.num_envs))
        self.phase[ids] = APPROACH
        self.closing[ids] = 0

    def act(self, info: Optional[dict] = None) -> torch.Tensor:
        """float32 (N, 4) actions for the current state of every env: read from the env, or
        from ``info``, the last info dict the env returned (its rows must describe the current
        state: after an autoreset, the vector env's step info does).

        Raises:
            ValueError: no ``info`` for an env whose task objects live in worker processes.
        """
        cfg, env = self.cfg, self.env
        if info is not None:
            elapsed, block_pose = info["elapsed_steps"], info["block_pose"]
            tcp, spawn_z = info["tcp_pose"][:, :3], block_pose[:, 2] - info["height_gain"]
        elif hasattr(env, "block"):
            elapsed, block_pose = env.elapsed_steps, env.block.state.pose
            tcp, spawn_z = env.agent.tcp_pose[:, :3], env.block.default_pose[:, 2]
        else:
            raise ValueError("this env's tasks run in worker processes: pass the last info, expert.act(info)")
        fresh = elapsed.to(self.phase.device) == 0
        self.phase[fresh] = APPROACH
        self.closing[fresh] = 0
        block = block_pose[:, :3]

        goal = block.clone()
        goal[:, 2] -= cfg.grasp_depth
        above = block.clone()
        above[:, 2] += cfg.hover
        lift = block.clone()
        lift[:, 2] = spawn_z + cfg.lift_height
        phase = self.phase
        goal = torch.where((phase == APPROACH)[:, None], above, goal)
        goal = torch.where((phase == CLOSE)[:, None], tcp, goal)
        goal = torch.where((phase == LIFT)[:, None], lift, goal)

        distance = (goal - tcp).norm(dim=1)
        reached = distance < cfg.reach_tol
        # Approach: also require the TCP to be above the block in the plane before descending.
        planar = (tcp[:, :2] - block[:, :2]).norm(dim=1) < cfg.reach_tol
        self.closing = torch.where(phase == CLOSE, self.closing + 1, self.closing)
        next_phase = phase.clone()
        next_phase[(phase == APPROACH) & reached & planar] = DESCEND
        next_phase[(phase == DESCEND) & reached] = CLOSE
        next_phase[(phase == CLOSE) & (self.closing >= cfg.close_steps)] = LIFT
        self.phase = next_phase

        action = torch.zeros(self.num_envs, 4, device=tcp.device)
        action[:, :3] = torch.clamp(cfg.gain * (goal - tcp) / cfg.pos_bound, -1.0, 1.0)
        action[:, 3] = torch.where(phase >= CLOSE, -1.0, 1.0)
        return action
