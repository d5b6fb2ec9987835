"""Replaying recorded episodes into another observation mode or control mode.

Each source episode is re-simulated in a batched env of the target modes, from its initial
state: the env slot is reset with the episode's seed (which also redraws what the env state
does not hold, such as a goal) and the recorded initial state is checked against it. Then:

- same control mode (``obs_mode`` conversion): the recorded actions are applied;
- ``use_env_states``: no physics at all: the env is set to each recorded state in turn and
  observed (exact observations of the recorded trajectory; rewards and flags are the recorded
  ones), the fastest way to add images to episodes collected state-only;
- another control mode: a source env in the recorded mode replays the recorded actions first
  (``source_targets``: the drive targets its controller set and the states it went through),
  then the target env reproduces them (``follow.Follower``, ``convert.ActionConverter``): one
  target step per recorded step where the target mode can set the recorded drive targets, and
  extra steps following the recorded states where it cannot (a delta joint mode whose per-step
  bound is smaller than the recorded motion), so a converted episode can be longer than the
  recorded one.

An episode ends at the target env's termination, or after as many steps as the recorded one
(obs conversion; then truncated), or after the last recorded step and ``follow.SETTLE_STEPS``
more (control conversion; then truncated). It "still succeeds" when the task reports success at its last step. The
replayed episodes go to a dataset (``LeRobotWriter`` / ``HDF5Writer``) as they finish; without
``keep_failures`` only those that still succeed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np
import torch

from simulo_envs.datasets.convert import ActionConverter, as_tensor, drive_targets, joint_positions
from simulo_envs.datasets.episode import Episode
from simulo_envs.datasets.errors import SchemaMismatchError
from simulo_envs.datasets.follow import Follower
from simulo_envs.datasets.rollout import (EpisodeRecorder, check_frames_mode, fresh_scenes, local_state_dict,
                                          seeded_resets_per_env, set_local_state_dict)

INITIAL_STATE_TOLERANCE = 1e-4
"""Largest difference [m, rad, m/s] between a recorded initial state and ``reset(seed)``'s
accepted as the same state (float32 rounding of env origins is ~1e-7)."""


@dataclass
class Recorded:
    """What a replay needs of a recorded episode (from either format).

    Attributes: ``index`` in its dataset, ``seed``, ``actions`` float32 (T, A); ``env_states``
    (T + 1 rows, env-local; None for LeRobot sources); ``rewards``, ``terminated``,
    ``truncated``, ``success`` (T,).
    """

    index: int
    seed: int
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    success: np.ndarray
    env_states: Optional[dict] = None
    targets: Optional[np.ndarray] = None
    """float32 (T, dof): the drive targets the recorded controller set at each step (filled by
    ``source_targets`` for a control conversion)."""
    source_qpos: Optional[np.ndarray] = None
    """float32 (T + 1, dof): the joint positions of the source replay (with ``targets``)."""
    source_positions: Optional[np.ndarray] = None
    """float32 (T + 1, K, 3): the source replay's object (actor) positions, env-local [m]."""
    drift: Optional[float] = None
    """After a control conversion: the largest distance [m] between an object's position in the
    converted episode and in the source replay at the same recorded step."""
    attempt: int = 1
    """Which try of its replay this is (``max_retries``)."""
    state_obs: Optional[np.ndarray] = None
    """float32 (T + 1, D): the recorded flat state observation (HDF5 sources)."""

    @property
    def length(self) -> int:
        """The episode's env steps (rows of ``actions``)."""
        return int(self.actions.shape[0])


def preflight(env, recorded: Recorded, name: str, check_actions: bool = True) -> None:
    """Check before anything is written that ``recorded`` fits ``env`` (``check_states_fit``)
    and that ``reset(seed)`` of env 0 gives its recorded initial state; resets env 0.

    Raises:
        SchemaMismatchError: it does not (the message says what differs).
    """
    check_states_fit(env, recorded, name, check_actions)
    env.reset(seed=[recorded.seed] * env.num_envs)
    _check_initial_state(local_state_dict(env), 0, recorded, name)


def check_states_fit(env, recorded: Recorded, name: str, check_actions: bool = True) -> None:
    """Raise SchemaMismatchError when ``recorded``'s env states are not this env's (other
    objects, other widths) or (``check_actions``) its actions not of ``env``'s width."""
    base = env.unwrapped
    if check_actions and recorded.actions.shape[1] != base.single_action_space.shape[0]:
        raise SchemaMismatchError(f"{name}: actions have {recorded.actions.shape[1]} columns; {base.control_mode} of "
                                  f"this env takes {base.single_action_space.shape[0]}")
    if recorded.env_states is None:
        return
    mine = local_state_dict(base)
    for kind in ("actors", "articulations"):
        theirs = recorded.env_states.get(kind, {})
        if set(theirs) != set(mine[kind]):
            raise SchemaMismatchError(f"{name}: its env states hold {kind} {sorted(theirs)}; this env has "
                                      f"{sorted(mine[kind])}: a trajectory of another env")
        for key, rows in theirs.items():
            if rows.shape[1:] != mine[kind][key].shape[1:]:
                raise SchemaMismatchError(f"{name}: env state {kind}/{key} is {rows.shape[1:]} wide, this env's "
                                          f"{mine[kind][key].shape[1:]}: a trajectory of another env")


class _Feed:
    """The episodes still to replay: the source's, then the ones queued for another try."""

    def __init__(self, episodes: Iterator[Recorded]):
        self.episodes, self.retries = episodes, deque()

    def next(self) -> Optional[Recorded]:
        if self.retries:
            return self.retries.popleft()
        return next(self.episodes, None)


def source_targets(source, episodes: Iterator[Recorded]) -> Iterator[Recorded]:
    """Replay ``episodes`` by their actions in ``source`` (an env in their recorded control
    mode) and yield each with ``targets`` (the drive targets its controller set at every step),
    ``source_qpos`` and ``source_positions`` filled in, as each finishes."""
    n = source.num_envs
    fresh = fresh_scenes(source)
    per_env = seeded_resets_per_env(source) and not fresh
    slots: list = [None] * n
    active = np.zeros(n, dtype=bool)
    steps = np.zeros(n, dtype=np.int64)
    width = source.unwrapped.single_action_space.shape[0]
    record: dict = {}
    checked = False
    while True:
        if not active.any():  # the start, or the next wave
            slots = [next(episodes, None) for _ in range(n)]
            active = np.array([s is not None for s in slots])
            if not active.any():
                return
            source.reset(seed=[s.seed if s is not None else 0 for s in slots],
                         options={"reconfigure": True} if fresh else None)
            if not checked:
                check_states_fit(source, slots[np.flatnonzero(active)[0]], "trajectory")
                checked = True
            qpos, where = joint_positions(source), object_positions(source)
            record = {i: ([], [qpos[i]], [where[i]]) for i in np.flatnonzero(active)}
            steps[:] = 0
        action = np.zeros((n, width), np.float32)  # idle envs: a zero Cartesian delta holds
        for i in np.flatnonzero(active):
            action[i] = slots[i].actions[steps[i]]
        source.step(as_tensor(action, source))
        targets, qpos, where = drive_targets(source), joint_positions(source), object_positions(source)
        for i in np.flatnonzero(active):
            record[i][0].append(targets[i])
            record[i][1].append(qpos[i])
            record[i][2].append(where[i])
        steps[active] += 1
        finished = np.flatnonzero(active & (steps >= np.array([s.length if s else 0 for s in slots])))
        for i in finished:
            done = slots[i]
            done.targets, done.source_qpos, done.source_positions = (np.stack(rows) for rows in record[i])
            yield done
            active[i] = False
        if len(finished) and per_env:
            for i in finished:
                slots[i] = next(episodes, None)
                active[i], steps[i] = slots[i] is not None, 0
            restart = finished[active[finished]]
            if len(restart):
                source.reset(seed=[slots[i].seed for i in restart], options={"env_idx": restart})
                qpos, where = joint_positions(source), object_positions(source)
                for i in restart:
                    record[i] = ([], [qpos[i]], [where[i]])


def replay_episodes(target, episodes: Iterator[Recorded], source=None, use_env_states: bool = False,
                    name: str = "trajectory", max_retries: int = 0,
                    frames=None) -> Iterator[tuple[Recorded, Episode]]:
    """Replay ``episodes`` in the batched in-process env ``target`` (module docstring); yields
    ``(recorded, replayed)`` as each finishes (``recorded.attempt``: the tries it took).

    Args:
        source: an env in the recorded control mode, for a control conversion: the recorded
            actions are replayed there first (``source_targets``), then the target env
            reproduces each recorded step, in one step or more (``follow.Follower``); the
            yielded ``Recorded`` carries the episode's object ``drift``.
        use_env_states: observe the recorded states instead of simulating (same control mode).
        max_retries: replay an episode that succeeded when recorded but not here up to this many
            more times (later, in another env slot: contact-rich episodes replayed open loop can
            end otherwise from float-level differences, PhysX's state carried over from the
            slot's previous episodes included); the last try is yielded.
        frames: None, or a map of the replayed observations to a real robot's schema
            (``robot_units.RealRobotFrames``; ``target`` in its control mode), as ``run_expert``'s.

    Raises:
        SchemaMismatchError: an episode of another env (its states, its action width, or an
            initial state ``reset(seed)`` does not give).
    """
    n = target.num_envs
    check_frames_mode(target, frames)
    as_obs = frames.obs if frames is not None else (lambda o: o)
    fresh = fresh_scenes(target)
    per_env = seeded_resets_per_env(target) and not fresh
    converter = ActionConverter(target) if source is not None else None
    follower = Follower(converter, n) if converter is not None else None
    hold = None if source is not None else _holder(target)
    feed = _Feed(source_targets(source, episodes) if source is not None else episodes)
    slots: list = [None] * n
    active = np.zeros(n, dtype=bool)
    steps = np.zeros(n, dtype=np.int64)  # recorded steps consumed, per env (obs conversions)
    recorder = EpisodeRecorder(n, record_states=True)
    checked = source is not None  # a conversion's source env checked the fit already
    while True:
        if not active.any():  # the start, or the next wave
            slots = [feed.next() for _ in range(n)]
            active = np.array([s is not None for s in slots])
            if not active.any():
                return
            seeds = [s.seed if s is not None else 0 for s in slots]
            target.reset(seed=seeds, options={"reconfigure": True} if fresh else None)
            ids = np.flatnonzero(active)
            if not checked:
                check_states_fit(target, slots[ids[0]], f"{name} episode {slots[ids[0]].index}")
                checked = True
            steps[:] = 0
            if follower is not None:
                follower.begin(np.arange(n))
            recorder = EpisodeRecorder(n, record_states=True)
            recorder.begin(as_obs(_begin(target, slots, ids, use_env_states, name)), local_state_dict(target), ids,
                           [slots[i].seed for i in ids])
        live = np.flatnonzero(active)
        if use_env_states:
            set_local_state_dict(target, _rows_at(slots, live, steps[live] + 1), live)
            obs = _splice_state(target.get_obs(), slots, live, steps[live] + 1)
            action = np.zeros((n, slots[live[0]].actions.shape[1]), np.float32)
            reward, terminated, truncated, success = (np.zeros(n, dtype) for dtype in (np.float32, bool, bool, bool))
            for i in live:
                s, t = slots[i], steps[i]
                action[i], reward[i] = s.actions[t], s.rewards[t]
                terminated[i], truncated[i], success[i] = s.terminated[t], s.truncated[t], s.success[t]
        else:
            if converter is not None:
                qpos = joint_positions(target)
                action = converter.actions(follower.targets(slots, live, qpos), qpos)
            else:
                action = hold.hold() if hold is not None else np.zeros((n, slots[live[0]].actions.shape[1]), np.float32)
                for i in live:
                    action[i] = slots[i].actions[steps[i]]
            obs, reward, terminated, truncated, info = target.step(as_tensor(action, target))
            success = info.get("success", torch.zeros(n, dtype=torch.bool))
            terminated, truncated, success = (v.cpu().numpy().copy() for v in (terminated, truncated, success))
        states = local_state_dict(target)
        if converter is None:
            steps[live] += 1
            lengths = np.array([s.length if s is not None else 0 for s in slots])
            truncated = truncated | (active & (steps >= lengths) & ~terminated)  # stopped: no recorded step left
        else:
            follower.advance(slots, live, joint_positions(target), _positions(states))
            truncated = truncated | (active & follower.exhausted(slots) & ~terminated)
        recorder.step(action, as_obs(obs), reward, terminated, truncated, success, states)
        finished = np.flatnonzero(active & (terminated | truncated))
        for i in finished:
            done, episode = slots[i], recorder.finish(int(i))
            active[i] = False
            if follower is not None:
                done.drift = float(follower.drift[i])
            if bool(done.success[-1]) and not episode.succeeded and done.attempt <= max_retries:
                done.attempt += 1
                feed.retries.append(done)
            else:
                yield done, episode
        if len(finished) and per_env:
            for i in finished:
                slots[i] = feed.next()
                active[i], steps[i] = slots[i] is not None, 0
            restart = finished[active[finished]]
            if len(restart):
                if follower is not None:
                    follower.begin(restart)
                seeds = [slots[i].seed for i in restart]
                target.reset(seed=seeds, options={"env_idx": restart})
                recorder.begin(as_obs(_begin(target, slots, restart, use_env_states, name)),
                               local_state_dict(target), restart, seeds)
        recorder.trim(active)


def _begin(target, slots: list, ids: np.ndarray, use_env_states: bool, name: str):
    """After ``reset(seed)`` of ``ids``: check their initial states against the recorded ones;
    returns the batch's observation (re-observed when states were written)."""
    current = local_state_dict(target)
    for i in ids:
        _check_initial_state(current, i, slots[i], name)
    if use_env_states:
        live = np.array([i for i in ids if slots[i].env_states is not None], dtype=np.int64)
        if len(live):
            set_local_state_dict(target, _rows_at(slots, live, np.zeros(len(live), np.int64)), live)
            return _splice_state(target.get_obs(), slots, live, np.zeros(len(live), np.int64))
    return target.get_obs()


def _splice_state(obs, slots: list, ids: np.ndarray, times: np.ndarray):
    """``obs`` with the state part (flat obs or ``obs["state"]``, or the ``agent`` and ``extra``
    leaves) of envs ``ids`` replaced by their recorded state observation at ``times``: a state written without a physics
    step has no contacts yet, so contact-derived entries (``is_grasped``) would read false; the
    recorded ones are those of the same state. Left as is where nothing was recorded or the
    widths differ."""
    rows = [slots[i].state_obs[t] if slots[i].state_obs is not None else None for i, t in zip(ids, times)]
    if any(r is None for r in rows):
        return obs
    rows = torch.from_numpy(np.stack(rows))
    flat = obs if isinstance(obs, torch.Tensor) else obs.get("state")  # "state" / "rgb+state": flat
    if isinstance(flat, torch.Tensor):
        if flat.shape[1] == rows.shape[1]:
            flat[torch.from_numpy(ids)] = rows.to(flat.dtype)
        return obs
    leaves = [(part, key) for part in ("agent", "extra") for key in obs.get(part, {})]
    widths = [int(np.prod(obs[p][k].shape[1:])) if obs[p][k].ndim > 1 else 1 for p, k in leaves]
    if sum(widths) != rows.shape[1]:
        return obs
    col = 0
    index = torch.from_numpy(ids)
    for (part, key), width in zip(leaves, widths):
        leaf = obs[part][key]
        leaf[index] = rows[:, col:col + width].reshape(len(ids), *leaf.shape[1:]).to(leaf.dtype)
        col += width
    return obs


def _check_initial_state(current: dict, row: int, recorded: Recorded, name: str) -> None:
    """Raise SchemaMismatchError when row ``row`` of the env-local state ``current`` is not
    ``recorded``'s initial state (within INITIAL_STATE_TOLERANCE)."""
    if recorded.env_states is None:
        return
    gap, where = 0.0, ""
    for kind in ("actors", "articulations"):
        for key, rows in recorded.env_states[kind].items():
            diff = float(np.abs(rows[0] - current[kind][key][row]).max())
            if diff > gap:
                gap, where = diff, f"{kind}/{key}"
    if gap > INITIAL_STATE_TOLERANCE:
        raise SchemaMismatchError(
            f"{name} episode {recorded.index} (seed {recorded.seed}): reset(seed) of this env gives another initial "
            f"state than the recorded one ({where} differs by {gap:.3g}): the episode was recorded in another env "
            "or with other env keywords")


def object_positions(env) -> np.ndarray:
    """float32 (N, K, 3): the env-local positions of ``env``'s K actors (objects), in
    ``local_state_dict`` key order."""
    return _positions(local_state_dict(env))


def _positions(states: dict) -> np.ndarray:
    rows = [v[:, :3] for v in states["actors"].values()]
    if not rows:
        return np.zeros((len(next(iter(states["articulations"].values()))), 0, 3), np.float32)
    return np.stack(rows, axis=1)


def _rows_at(slots: list, ids: np.ndarray, times: np.ndarray) -> dict:
    """The recorded env-state rows of ``slots[ids]`` at ``times`` (one per id), as one state dict."""
    first = slots[ids[0]].env_states
    out = {}
    for kind in ("actors", "articulations"):
        out[kind] = {key: np.stack([slots[i].env_states[kind][key][t] for i, t in zip(ids, times)])
                     for key in first[kind]}
    return out


def _holder(target) -> Optional[ActionConverter]:
    """A converter giving the hold actions of joint-position modes; None for Cartesian modes,
    where a zero delta holds still."""
    try:
        return ActionConverter(target)
    except NotImplementedError:
        return None
