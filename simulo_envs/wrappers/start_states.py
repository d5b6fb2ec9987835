"""Training episodes that start from states of expert demonstrations (RL with demonstration starts).

A long task such as FrankaStack-v1 (grasp, carry, place, let go) pays its success only at the end
of a chain that random exploration rarely completes: PPO from the task's own initial states
learns the first links and never finds the last one. Starting some training episodes from states
an expert visited puts every link within reach of exploration. This is the "reset to
demonstration states" idea of Nair et al. 2018 (*Overcoming Exploration in Reinforcement Learning
with Demonstrations*, section 4.3) and Salimans & Chen 2018 (*Learning Montezuma's Revenge from a
Single Demonstration*); RFCL (Tao et al. 2024, *Reverse Forward Curriculum Learning*) trains
ManiSkill's tasks from a few demonstrations the same way.

- ``expert_start_states``: runs the task's scripted expert (``simulo_envs.policies.EXPERTS``) on a
  batch of seeded episodes and keeps every state of the episodes that succeed, from the first
  step up to (not including) the success: a ``StartStateBank``.
- ``StartFromStates``: a Gymnasium wrapper around a simulo_envs env (below the vector env); each
  env that ``reset`` starts (all, or ``options["env_idx"]``: the vector env's autoresets) begins,
  with probability ``fraction``, from a state drawn uniformly from the bank instead of the task's
  own initial state. The task's reward, success and time limit are unchanged; the episode's step
  count starts at 0.

Only training uses it (a train config's ``"start_states"``, ``simulo_envs.wrappers.training``):
evaluation always starts from the task's own initial states, so reported success is the task's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import gymnasium as gym
import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids


@dataclass(frozen=True)
class StartStateBank:
    """States of expert episodes, env-local.

    Attributes:
        states: a ``get_state_dict()`` dict whose rows are states (M rows), with every position
            (actor poses, articulation root poses) env-local [m].
        steps: int64 (M,) each state's step index within its episode.
        episodes: how many expert episodes succeeded (the states come from them alone).
    """

    states: dict
    steps: torch.Tensor
    episodes: int

    def __len__(self) -> int:
        return int(self.steps.shape[0])

    def at(self, rows: torch.Tensor, origins: torch.Tensor) -> dict:
        """The states ``rows`` (int64 (K,)) placed at the env origins ``origins`` (float32 (K, 3),
        world frame): a ``get_state_dict()`` dict of K rows for ``reset_to_env_states``."""
        return _shift(self.states, rows, origins)


def _shift(states: dict, rows: Optional[torch.Tensor], offsets: torch.Tensor) -> dict:
    """``states`` (rows ``rows``, or all) with ``offsets`` (K, 3) added to every position."""
    out = {}
    for group, table in states.items():
        out[group] = {}
        for key, value in table.items():
            value = (value if rows is None else value[rows]).clone()
            value[:, :3] += offsets.to(value.device, value.dtype)
            out[group][key] = value
    return out


def expert_start_states(env_cls: type, env_id: str, num_episodes: int, seed: int,
                        env_kwargs: Optional[dict] = None) -> StartStateBank:
    """Run ``env_id``'s scripted expert on ``num_episodes`` envs (seeds ``seed ... seed +
    num_episodes - 1``) for one episode each and keep the states of those that succeed, every step
    before the success.

    Args:
        env_cls: the task's env class. env_id: its id in ``simulo_envs.policies.EXPERTS``.
        env_kwargs: the env's keywords (``control_mode`` is set to ``pd_ee_delta_pos``, the
            experts' mode; the states do not depend on it).

    Raises:
        KeyError: no scripted expert for ``env_id``. ValueError: ``num_episodes`` < 1, or no
            episode succeeded.
    """
    from simulo_envs.policies import EXPERTS

    if env_id not in EXPERTS:
        raise KeyError(f"start_states needs a scripted expert; {env_id!r} has none (experts: {sorted(EXPERTS)})")
    if isinstance(num_episodes, bool) or not isinstance(num_episodes, (int, np.integer)) or num_episodes < 1:
        raise ValueError(f"start_states: expert episodes must be an int >= 1, got {num_episodes!r}")
    kwargs = {**(env_kwargs or {}), "control_mode": "pd_ee_delta_pos", "obs_mode": "state"}
    env = env_cls(num_envs=int(num_episodes), **kwargs)
    try:
        expert = EXPERTS[env_id](env)
        env.reset(seed=seed)
        origins = env.env_origins.clone()
        n, limit = env.num_envs, int(env.max_episode_steps or 500)
        recorded, done = [], torch.zeros(n, dtype=torch.bool, device=env.device)
        succeeded = torch.zeros_like(done)
        for step in range(limit):
            live = ~done
            if not bool(live.any()):
                break
            recorded.append((step, live.clone(), env.get_state_dict()))
            _, _, _, _, info = env.step(expert.act())
            succeeded |= info["success"].to(torch.bool) & live
            done |= info["success"].to(torch.bool)
    finally:
        env.close()
    if not bool(succeeded.any()):
        raise ValueError(f"start_states: the expert of {env_id} succeeded in none of {num_episodes} episodes")
    parts, steps = [], []
    for step, live, state in recorded:
        keep = live & succeeded
        if bool(keep.any()):
            parts.append(_shift(state, keep.nonzero().squeeze(1), -origins[keep]))
            steps.append(torch.full((int(keep.sum()),), step, dtype=torch.long))
    states = {group: {key: torch.cat([p[group][key] for p in parts]) for key in parts[0][group]}
              for group in parts[0]}
    return StartStateBank(states, torch.cat(steps), int(succeeded.sum()))


def _merge_rows(into: Any, source: Any, mask: torch.Tensor) -> Any:
    """``into`` with the rows in ``mask`` taken from ``source`` (tensors, nested dicts; other
    values are kept)."""
    if isinstance(into, dict):
        for key, value in into.items():
            if key in source:
                into[key] = _merge_rows(value, source[key], mask)
        return into
    if isinstance(into, torch.Tensor) and into.ndim >= 1 and into.shape[0] == mask.shape[0]:
        into = into.clone()
        into[mask] = source[mask]
    return into


class StartFromStates(gym.Wrapper):
    """Start a ``fraction`` of the episodes a simulo_envs env begins from ``bank``'s states.

    Args:
        env: a simulo_envs env in this process (a ``BaseEnv``, possibly wrapped).
        bank: the states (``expert_start_states``).
        fraction: probability in [0, 1] that a starting episode starts from a bank state.
        seed: seeds the draws (which envs, which states); they never touch the env's own streams.

    Raises:
        ValueError: ``fraction`` outside [0, 1]; an empty bank.
    """

    def __init__(self, env: gym.Env, bank: StartStateBank, fraction: float, seed: int = 0):
        super().__init__(env)
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0.0 <= fraction <= 1.0:
            raise ValueError(f"start_states: fraction must be a number in [0, 1], got {fraction!r}")
        if len(bank) == 0:
            raise ValueError("start_states: the bank holds no state")
        self.bank, self.fraction = bank, float(fraction)
        self.generator = torch.Generator().manual_seed(int(seed))
        self.started_from_states = 0
        """How many episodes have started from a bank state so far."""

    def reset(self, *, seed=None, options: Optional[dict] = None):
        """As the env's ``reset``; then each env it started begins, with probability ``fraction``,
        from a bank state instead (a reset that restores given states is passed through)."""
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.env.unwrapped
        if options and "reset_to_env_states" in options or self.fraction == 0.0:
            return obs, info
        ids = normalize_env_ids((options or {}).get("env_idx"), base.num_envs)
        ids = ids[(torch.rand(len(ids), generator=self.generator) < self.fraction).numpy()]
        if not len(ids):
            return obs, info
        rows = torch.randint(len(self.bank), (len(ids),), generator=self.generator)
        chosen = torch.from_numpy(ids).to(base.device)
        states = self.bank.at(rows, base.env_origins[chosen])
        again, again_info = self.env.reset(options={"env_idx": ids, "reset_to_env_states": {"env_states": states}})
        mask = torch.zeros(base.num_envs, dtype=torch.bool, device=base.device)
        mask[chosen] = True
        self.started_from_states += len(ids)
        return _merge_rows(obs, again, mask), _merge_rows(info, again_info, mask)
