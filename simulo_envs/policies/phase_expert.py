"""``PhaseExpert``: the base of the batched scripted experts (a state machine per env).

Every env runs its own phase of one task script on privileged state: the task's ``info`` dict
(``evaluate()``'s world poses, plus ``elapsed_steps``). ``act()`` reads it from the env
(``get_info()``); ``act(info)`` takes the last info of ``reset``/``step``, which is how an expert
drives envs in worker processes. An env whose ``elapsed_steps`` is 0 (just reset, fully or
partially) starts again at phase 0, so partial resets in the middle of a rollout never confuse
an expert; ``reset(env_ids)`` does the same explicitly. The arm is driven in
``pd_ee_delta_pos`` (world-frame TCP translations): ``move_to(goal)`` commands
``clip(gain * (goal - tcp) / pos_bound, -1, 1)``, ``pos_bound`` the env's arm controller's
translation per unit action (the agent's own, whichever robot runs).

Timed phases (closing a gripper, opening it) last a time in seconds, not a number of steps:
``steps_for(seconds)`` converts with the env's ``control_freq``, so an expert works at every
control frequency its task accepts (a jaw needs the same 0.4 s to close at 20 Hz and at 30 Hz).
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from simulo_envs.env_ids import normalize_env_ids

OPEN, CLOSED = 1.0, -1.0
"""Gripper actions: +1 opens the fingers (jaws), -1 closes them (every agent's gripper controller)."""


class PhaseExpert:
    """Batched phase bookkeeping and Cartesian moves shared by the task experts.

    Args:
        env: the task's env (wrapped or not), made with ``control_mode="pd_ee_delta_pos"``.
        gain: fraction of the remaining TCP error commanded per step.
        pos_bound: the controller's translation per unit action [m]; None: read from the env's
            arm controller (``EEPoseConfig.pos_bound`` of the agent's ``pd_ee_delta_pos``), which
            needs the env's tasks in this process.

    Attributes:
        phase: int64 (N,) current phase per env, on the env's device. ``timer``: int64 (N,) ``act`` calls since the
            env entered it (0 on entry).
        control_freq: the env's control frequency [Hz] (``steps_for``).

    Raises:
        ValueError: the env's control mode is not ``pd_ee_delta_pos``; no ``pos_bound`` given for
            an env that exposes neither an agent nor an agent class.
    """

    def __init__(self, env, gain: float = 0.6, pos_bound: Optional[float] = None):
        base = env.unwrapped
        if base.control_mode != "pd_ee_delta_pos":
            raise ValueError(f"{type(self).__name__} needs control_mode='pd_ee_delta_pos', the env has "
                             f"{base.control_mode!r}")
        self.env = base
        self.num_envs = base.num_envs
        self.device = base.device
        self.gain, self.pos_bound = gain, arm_pos_bound(base) if pos_bound is None else pos_bound
        self.control_freq = float(base.control_freq)
        self.phase = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self.timer = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)

    def steps_for(self, seconds: float) -> int:
        """The env steps (``act`` calls) that last at least ``seconds`` at the env's control
        frequency: ``ceil(seconds * control_freq)`` (less a hair for float error), at least 1."""
        return max(1, math.ceil(seconds * self.control_freq - 1e-6))

    def reset(self, env_ids=None) -> None:
        """Restart the state machine of ``env_ids`` (None: all) at phase 0."""
        ids = torch.from_numpy(normalize_env_ids(env_ids, self.num_envs)).to(self.device)
        self.phase[ids] = 0
        self.timer[ids] = 0

    def act(self, info: Optional[dict] = None) -> torch.Tensor:
        """float32 (N, 4) actions (TCP translation (3), gripper (1)) for the current state of every
        env: read from the env, or from ``info``, the last info dict the env returned (its rows
        must describe the current state: after an autoreset, the vector env's step info does).

        Raises:
            ValueError: no ``info`` for an env whose task objects live in worker processes.
        """
        if info is None:
            get_info = getattr(self.env, "get_info", None)
            if get_info is None:
                raise ValueError("this env's tasks run in worker processes: pass the last info, expert.act(info)")
            info = get_info()
        fresh = info["elapsed_steps"].to(self.device) == 0
        self.phase[fresh] = 0
        self.timer += 1
        self.timer[fresh] = 0
        return self._act(info)

    def _act(self, info: dict) -> torch.Tensor:
        """The task script: actions from ``info`` (phases already restarted where envs were reset)."""
        raise NotImplementedError

    def _advance(self, go: torch.Tensor, to: int | None = None) -> None:
        """Move envs where ``go`` (bool (N,)) to phase ``to`` (default: the next one), timer 0."""
        target = self.phase + 1 if to is None else torch.full_like(self.phase, to)
        self.timer = torch.where(go, torch.zeros_like(self.timer), self.timer)
        self.phase = torch.where(go, target, self.phase)

    def move_to(self, goal: torch.Tensor, tcp: torch.Tensor) -> torch.Tensor:
        """float32 (N, 3) arm action driving the TCP (N, 3) towards ``goal`` (N, 3), world frame."""
        return torch.clamp(self.gain * (goal - tcp) / self.pos_bound, -1.0, 1.0)

    @staticmethod
    def pick(phase: torch.Tensor, options: dict) -> torch.Tensor:
        """Per env, the row of ``options[phase]`` (each (N, ...)); phases missing from ``options``
        take the first entry."""
        first = next(iter(options.values()))
        out = first.clone()
        for value, option in options.items():
            out = torch.where((phase == value).view(-1, *([1] * (first.dim() - 1))), option, out)
        return out


def arm_pos_bound(base) -> float:
    """The TCP translation [m] per unit action of ``base``'s arm controller (its agent's
    ``pd_ee_delta_pos`` config). An env whose agents live in worker processes answers from its
    ``agent_class``'s configs (the same table the workers' agents are built from).

    Raises:
        ValueError: the env exposes neither an agent nor an agent class.
    """
    agent = getattr(base, "agent", None)
    if agent is not None:
        return float(agent.controller.controllers["arm"].config.pos_bound)
    agent_class = getattr(base, "agent_class", None)
    if agent_class is None:
        raise ValueError("this env exposes no agent: pass the arm controller's translation per unit action, "
                         "pos_bound=<agent>.controller_configs['pd_ee_delta_pos']['arm'].pos_bound")
    return float(agent_class.controller_configs["pd_ee_delta_pos"]["arm"].pos_bound)
