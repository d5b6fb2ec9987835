"""Training episodes that start from states of expert demonstrations (RL with demonstration starts).

A long task such as FrankaStack-v1 (grasp, carry, place, let go) pays its success only at the end
of a chain that random exploration rarely completes: PPO from the task's own initial states
learns the first links and never finds the last one. Starting some training episodes from states
an expert visited puts every link within reach of exploration. This is the "reset to
demonstration states" idea of Nair et al. 2018 (*Overcoming Exploration in Reinforcement Learning
with Demonstrations*, section 4.3) and Salimans & Chen 2018 (*Learning Montezuma's Revenge from a
Single Demonstration*); RFCL (Tao et al. 2024, *Reverse Forward Curriculum Learning*) trains
ManiSkill's tasks from a few demonstrations the same way.

- ``expert_start_states``: runs the task's scripted expert (``task_lookup.expert_for``) on a batch
  of seeded episodes and keeps every state of the episodes that succeed without failing, from the
  first step up to (not including) the success: a ``StartStateBank``.
- ``StartFromStates``: a Gymnasium wrapper around a simulo_envs env (below the vector env); each
  env that ``reset`` starts (all, or ``options["env_idx"]``: the vector env's autoresets) begins,
  with probability ``fraction``, from a state drawn uniformly from the bank instead of the task's
  own initial state. The task's reward, success and time limit are unchanged; the episode's step
  count starts at 0.
- ``check_start_states``: what a train config's ``"start_states"`` must be.

Only training uses it (a train config's ``"start_states"``, ``simulo_envs.training.rsl_rl_train``):
evaluation always starts from the task's own initial states, so evaluated success is the task's.
Training statistics (``progress.csv``'s success) count the episodes started from states too.
Only tasks that declare ``episodes_from_states`` (``BaseEnv``) take it: their episode is wholly in
``get_state_dict()``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional

import gymnasium as gym
import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.training.task_lookup import expert_for


def _is_fraction(value: Any) -> bool:
    """Whether ``value`` is a real number (numpy's too, not a bool) in [0, 1]."""
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            and 0.0 <= float(value) <= 1.0)


def check_start_states(env_cls: type, start: Any, num_workers: Any = 1) -> None:
    """Raise unless ``start`` (a train config's ``"start_states"``) is None or usable with
    ``env_cls``.

    Raises:
        ValueError: ``start`` is not ``{"fraction": number in [0, 1], "expert_episodes": int >= 1}``;
            the task does not declare ``episodes_from_states``; ``num_workers`` other than 1 (the
            wrapper runs where the envs are). KeyError: the task has no scripted expert.
    """
    if start is None:
        return
    if not isinstance(start, dict) or set(start) != {"fraction", "expert_episodes"}:
        raise ValueError(f"start_states must be {{'fraction': float, 'expert_episodes': int}}, got {start!r}")
    fraction, episodes = start["fraction"], start["expert_episodes"]
    if not _is_fraction(fraction):
        raise ValueError(f"start_states: fraction must be a number in [0, 1], got {fraction!r}")
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"start_states: expert_episodes must be an int >= 1, got {episodes!r}")
    if not getattr(env_cls, "episodes_from_states", False):
        raise ValueError(f"start_states: {env_cls.__name__} does not declare episodes_from_states (its episodes "
                         "depend on more than get_state_dict(), e.g. a goal drawn per episode)")
    if expert_for(env_cls) is None:
        raise KeyError(f"start_states needs a scripted expert; {env_cls.__name__} has none")
    if num_workers not in (None, 1):
        raise ValueError("start_states starts episodes in this process: train without worker processes")


@dataclass(frozen=True)
class StartStateBank:
    """States of expert episodes, env-local.

    Attributes:
        states: a ``get_state_dict()`` dict whose rows are states (M rows, on the env's device),
            with every position (actor poses, articulation root poses) env-local [m].
        steps: int64 (M,) on the CPU: each state's step index within its episode.
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
            value = (value if rows is None else value[rows.to(value.device)]).clone()
            value[:, :3] += offsets.to(value.device, value.dtype)
            out[group][key] = value
    return out


def expert_start_states(env_cls: type, num_episodes: int, seed: int,
                        env_kwargs: Optional[dict] = None) -> StartStateBank:
    """Run ``env_cls``'s scripted expert on ``num_episodes`` envs for one episode each and keep
    the states of those that succeed without failing first, every step before the success.

    Args:
        env_cls: the task's env class (its expert: ``task_lookup.expert_for``).
        num_episodes: expert episodes, one per env (int >= 1).
        seed: env ``i`` runs the episode of seed ``seed + i``.
        env_kwargs: the env's keywords; ``control_mode`` is set to ``pd_ee_delta_pos`` (the
            experts' mode) and ``obs_mode`` to ``state``; the states do not depend on either.

    Raises:
        KeyError: no scripted expert. ValueError: ``num_episodes`` < 1, or no episode succeeded.
    """
    expert_cls = expert_for(env_cls)
    if expert_cls is None:
        raise KeyError(f"start_states needs a scripted expert; {env_cls.__name__} has none")
    if isinstance(num_episodes, bool) or not isinstance(num_episodes, (int, np.integer)) or num_episodes < 1:
        raise ValueError(f"start_states: expert episodes must be an int >= 1, got {num_episodes!r}")
    kwargs = {**(env_kwargs or {}), "control_mode": "pd_ee_delta_pos", "obs_mode": "state"}
    env = env_cls(num_envs=int(num_episodes), **kwargs)
    try:
        expert = expert_cls(env)
        env.reset(seed=seed)
        origins = env.env_origins.clone()
        recorded, done = [], torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        succeeded = torch.zeros_like(done)
        for step in range(int(env.max_episode_steps or env.default_max_episode_steps or 1000)):
            live = ~done
            if not bool(live.any()):
                break
            recorded.append((step, live.clone(), env.get_state_dict()))
            _, _, _, _, info = env.step(expert.act())
            success = info["success"].to(torch.bool)
            failed = info["fail"].to(torch.bool) if "fail" in info else torch.zeros_like(success)
            succeeded |= success & ~failed & live
            done |= success | failed
    finally:
        env.close()
    if not bool(succeeded.any()):
        raise ValueError(f"start_states: the expert of {env_cls.__name__} succeeded in none of {num_episodes} episodes")
    parts, steps = [], []
    for step, live, state in recorded:
        keep = live & succeeded
        if bool(keep.any()):
            parts.append(_shift(state, keep.nonzero().squeeze(1), -origins[keep]))
            steps.append(torch.full((int(keep.sum()),), step, dtype=torch.long))
    states = {group: {key: torch.cat([p[group][key] for p in parts]) for key in parts[0][group]}
              for group in parts[0]}
    return StartStateBank(states, torch.cat(steps), int(succeeded.sum()))


def start_states_wrapper(env_cls: type, start: dict, seed, env_kwargs: Optional[dict] = None,
                         num_workers: Any = 1):
    """The ``env_wrapper`` (for ``make_vector_env``) a train config's ``start_states`` asks for:
    ``StartFromStates`` over a bank of ``start["expert_episodes"]`` expert episodes whose seeds are
    ``s + 2**20 ...``, ``s`` the first of ``seed`` (an int, a list of per-env seeds, or None: 0),
    far from any training or evaluation seed; under ``torchrun`` each rank has its own.

    Raises:
        As ``check_start_states`` and ``expert_start_states``.
    """
    check_start_states(env_cls, start, num_workers)
    first = seed if seed is None or isinstance(seed, (int, np.integer)) else list(seed)[0]
    first = (0 if first is None else int(first)) + 2 ** 20
    bank = expert_start_states(env_cls, start["expert_episodes"], first, env_kwargs)
    return partial(StartFromStates, bank=bank, fraction=start["fraction"], seed=first)


def _check_bank_fits(bank: StartStateBank, env_state: dict) -> None:
    """Raise ValueError unless ``bank``'s states name the same actors and articulations, with the
    same widths, as ``env_state`` (``get_state_dict()``)."""
    for group in ("actors", "articulations"):
        ours, theirs = env_state.get(group, {}), bank.states.get(group, {})
        if set(ours) != set(theirs):
            raise ValueError(f"start_states: the bank's {group} {sorted(theirs)} are not the env's {sorted(ours)} "
                             "(a bank of another task)")
        for key in ours:
            if tuple(ours[key].shape[1:]) != tuple(theirs[key].shape[1:]):
                raise ValueError(f"start_states: the bank's {group[:-1]} {key!r} has state width "
                                 f"{tuple(theirs[key].shape[1:])}, the env's {tuple(ours[key].shape[1:])}")


def _take_rows(into: Any, source: Any, mask: torch.Tensor) -> Any:
    """A copy of ``into`` with the rows in ``mask`` taken from ``source`` (tensors, nested dicts;
    other values are kept)."""
    if isinstance(into, dict):
        return {key: _take_rows(value, source[key], mask) if key in source else value for key, value in into.items()}
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
        seed: seeds the draws (which envs, which states); ``reset(seed=s)`` reseeds them from
            ``(seed, s)``. The env's own random streams are not touched.

    The first observation of an episode started from a state reads what contact gives only after
    a step (``is_grasped`` is 0 there); from the first step on it is the state's.

    Raises:
        ValueError: ``fraction`` outside [0, 1]; ``seed`` not an int; an empty bank; a bank whose
            actors and articulations are not the env's (another task's); an env that does not
            declare ``episodes_from_states`` (its episode depends on more than its state).
    """

    def __init__(self, env: gym.Env, bank: StartStateBank, fraction: float, seed: int = 0):
        super().__init__(env)
        if not _is_fraction(fraction):
            raise ValueError(f"start_states: fraction must be a number in [0, 1], got {fraction!r}")
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"start_states: seed must be an int, got {seed!r}")
        if len(bank) == 0:
            raise ValueError("start_states: the bank holds no state")
        base = env.unwrapped
        if not getattr(base, "episodes_from_states", False):
            raise ValueError(f"start_states: {type(base).__name__} does not declare episodes_from_states (its "
                             "episodes depend on more than get_state_dict(), e.g. a goal drawn per episode)")
        _check_bank_fits(bank, base.get_state_dict())
        self.bank, self.fraction, self.seed = bank, float(fraction), int(seed)
        self.generator = torch.Generator().manual_seed(self.seed)
        self.started_from_states = 0
        """How many episodes have started from a bank state so far."""

    def reset(self, *, seed=None, options: Optional[dict] = None):
        """As the env's ``reset``; each env it starts begins, with probability ``fraction``, from a
        bank state instead (a reset that restores given states is passed through). An unseeded
        partial reset resets each env once: the others as usual, the drawn ones from their states.

        Returns:
            ``(obs, info)`` for all envs, as the env's ``reset``.

        Raises:
            As the env's ``reset``; nothing changes then.
        """
        options = dict(options or {})
        if "reset_to_env_states" in options or self.fraction == 0.0:
            return self.env.reset(seed=seed, options=options or None)
        base = self.env.unwrapped
        ids = normalize_env_ids(options.get("env_idx"), base.num_envs, "options['env_idx']")
        if not len(ids):   # nothing starts: the env's answer (every env's obs)
            return self.env.reset(seed=seed, options=options)
        before = self.generator.get_state()
        try:
            return self._reset(ids, seed, options)
        except BaseException:
            self.generator.set_state(before)   # a refused reset draws nothing
            raise

    def _reset(self, ids: np.ndarray, seed, options: dict):
        base = self.env.unwrapped
        if seed is not None:   # a seeded reset draws the same start states every time
            first = seed if isinstance(seed, (int, np.integer)) else list(seed)[0]
            self.generator.manual_seed(hash((self.seed, int(first))) % 2 ** 63)
        drawn = (torch.rand(len(ids), generator=self.generator) < self.fraction).numpy()
        chosen, others = ids[drawn], ids[~drawn]
        split = seed is None and set(options) == {"env_idx"}
        obs = info = None
        if not split or len(others):
            obs, info = self.env.reset(seed=seed, options={**options, "env_idx": ids if not split else others})
        if not len(chosen):
            return obs, info
        rows = torch.randint(len(self.bank), (len(chosen),), generator=self.generator)
        where = torch.from_numpy(chosen).to(base.device)
        states = self.bank.at(rows, base.env_origins[where])
        again, again_info = self.env.reset(options={"env_idx": chosen, "reset_to_env_states": {"env_states": states}})
        self.started_from_states += len(chosen)
        if obs is None:
            return again, again_info
        mask = torch.zeros(base.num_envs, dtype=torch.bool, device=base.device)
        mask[where] = True
        merged_info = _take_rows(info, again_info, mask)
        return _take_rows(obs, again, mask), merged_info
