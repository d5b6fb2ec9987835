"""``EpisodeRecorder``: cut a batched env's steps into ``Episode`` objects, env by env.

A batched env runs ``N`` episodes at once that start and end at different steps. The recorder
keeps the history of the batch (observation, env state, action, reward and flags per step, all
envs at once: one copy per step, not one per env) and, when env ``i`` finishes, slices its
episode out of it. Rows older than every running episode's start are dropped.

``run_expert`` drives an env with a batched policy, resets each finished env with the next seed
of a counter, and yields every finished episode; with ``action_noise`` the env executes the
policy's actions plus Gaussian noise while the episode records the policy's own (DART,
``action_noise.py``).
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import numpy as np
import torch

from simulo_envs.datasets.action_noise import ActionNoise, check_noise_std
from simulo_envs.datasets.episode import Episode


def local_state_dict(env) -> dict:
    """``env.get_state_dict()`` (numpy) with every pose translated into its env's frame (the env
    origin subtracted from the positions of actors and articulation roots): the state an env of
    a one-env batch (origin at 0) has, whatever slot of the batch recorded it. Orientations and
    velocities are the same in both frames."""
    state = to_numpy(env.get_state_dict())
    origins = env.unwrapped.scene.env_origins.cpu().numpy()
    for rows in list(state["actors"].values()) + list(state["articulations"].values()):
        rows[:, :3] -= origins
    return state


def set_local_state_dict(env, state: dict, env_ids) -> None:
    """Write env-local state rows (``local_state_dict``'s frame; rows = ``len(env_ids)``) into
    ``env_ids`` of ``env``, each translated to its env's origin."""
    ids = np.asarray(env_ids, dtype=np.int64)
    origins = env.unwrapped.scene.env_origins.cpu().numpy()[ids]
    world = {kind: {k: np.array(v, dtype=np.float32, copy=True) for k, v in state[kind].items()}
             for kind in ("actors", "articulations")}
    for rows in list(world["actors"].values()) + list(world["articulations"].values()):
        rows[:, :3] += origins
    env.unwrapped.set_state_dict(world, ids)


def to_numpy(value):
    """A (nested dict of) tensor(s) as numpy arrays (fresh copies)."""
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    return np.array(value, copy=True)


def _rows(value, index):
    if isinstance(value, dict):
        return {k: _rows(v, index) for k, v in value.items()}
    return value[index]


def _stack(items: list):
    if isinstance(items[0], dict):
        return {k: _stack([item[k] for item in items]) for k in items[0]}
    return np.stack(items)


def _set_rows(target, rows, source) -> None:
    if isinstance(target, dict):
        for k in target:
            _set_rows(target[k], rows, source[k])
        return
    target[rows] = source[rows]


class EpisodeRecorder:
    """History of a batched env's steps, sliced into per-env episodes (module docstring).

    Args:
        num_envs: N.
        record_states: also keep the env-local state per step (``Episode.env_states``).
    """

    def __init__(self, num_envs: int, record_states: bool = True):
        self.num_envs = num_envs
        self.record_states = record_states
        self._obs: list = []  # per history row: the batch's observation (numpy)
        self._states: list = []
        self._steps: list = []  # per step: (actions, rewards, terminated, truncated, success)
        self._first = 0  # history index of self._obs[0]
        self.start = np.zeros(num_envs, dtype=np.int64)  # history index of each env's first observation
        self.seeds = np.full(num_envs, -1, dtype=np.int64)

    def begin(self, obs, states: Optional[dict], env_ids: np.ndarray, seeds) -> None:
        """After a reset of ``env_ids`` (all envs at the start) with ``seeds``: ``obs`` / ``states``
        are the batch's values after that reset."""
        obs = to_numpy(obs)
        now = self._first + len(self._obs) - 1
        if now < self._first:  # first reset: the first history row
            self._obs.append(obs)
            self._states.append(states)
            now = self._first
        else:  # later resets: the reset envs' rows of the current row become their episode's first
            _set_rows(self._obs[-1], env_ids, obs)
            if states is not None:
                _set_rows(self._states[-1], env_ids, states)
        self.start[env_ids] = now
        self.seeds[env_ids] = np.asarray(seeds, dtype=np.int64)

    def step(self, action, obs, reward, terminated, truncated, success, states: Optional[dict]) -> None:
        """Record one step of every env (what ``env.step(action)`` returned)."""
        self._steps.append(tuple(to_numpy(v) for v in (action, reward, terminated, truncated, success)))
        self._obs.append(to_numpy(obs))
        self._states.append(states)

    def finish(self, env_id: int) -> Episode:
        """Env ``env_id``'s episode from its last ``begin`` to the last ``step``."""
        lo = int(self.start[env_id]) - self._first
        hi = len(self._obs)  # exclusive
        obs = _stack([_rows(o, env_id) for o in self._obs[lo:hi]])
        states = _stack([_rows(s, env_id) for s in self._states[lo:hi]]) if self.record_states else None
        steps = self._steps[lo:hi - 1]
        actions, rewards, terminated, truncated, success = (np.stack([s[k][env_id] for s in steps]) for k in range(5))
        return Episode(seed=int(self.seeds[env_id]), obs=obs, actions=actions.astype(np.float32),
                       rewards=rewards.astype(np.float32), terminated=terminated.astype(bool),
                       truncated=truncated.astype(bool), success=success.astype(bool), env_states=states)

    def trim(self, active: np.ndarray) -> None:
        """Drop history rows no running episode (``active`` bool (N,)) needs."""
        if not active.any():
            keep_from = self._first + len(self._obs) - 1
        else:
            keep_from = int(self.start[active].min())
        drop = keep_from - self._first
        if drop > 0:
            del self._obs[:drop], self._states[:drop], self._steps[:drop]
            self._first += drop


def seeded_resets_per_env(env) -> bool:
    """Whether envs of ``env`` may be reset one by one with seeds of their own; False when the
    env's randomization draws something at scene build for every env (a prop's scale) and its
    backend cannot rebuild some envs' bodies (PhysX's GPU system): then every env is reset
    together, with one seed each (``BaseEnv.reset``)."""
    base = env.unwrapped
    randomization = getattr(base, "randomization", None)
    if not (randomization is not None and getattr(randomization, "build_time_params", None)):
        return True
    return bool(getattr(getattr(base, "backend", None), "rebuilds_env_bodies", False))


def fresh_scenes(env) -> bool:
    """Whether episodes of ``env`` run in fresh physics: one PhysX system per env
    (``sim_config.isolate_envs``), rebuilt before each wave of episodes. PhysX keeps state from
    a system's earlier episodes (contact caches) that changes later ones at float level; with
    fresh systems an episode depends on its seed and actions alone, bit for bit, so a replay
    reproduces it exactly."""
    return bool(getattr(env.unwrapped.sim_config, "isolate_envs", False))


def check_frames_mode(env, frames) -> None:
    """Raise ValueError when ``frames`` (a ``robot_units.RealRobotFrames`` or None) records a
    real robot's schema from an env in another control mode than that robot's: its recorded
    actions would not be the executed ones, and would not replay the episode."""
    if frames is not None and env.unwrapped.control_mode != frames.control_mode:
        raise ValueError(f"a {frames.spec.robot_type} schema is recorded from an env in its control mode "
                         f"{frames.control_mode!r}, not {env.unwrapped.control_mode!r}: drive that mode "
                         "(joint_drive.JointDrive) or convert into it (scripts/replay.py)")


def run_expert(env, policy: Callable[[dict], torch.Tensor], next_seed: Callable[[], Optional[int]],
               record_states: bool = True, success_key: str = "success", frames=None,
               action_noise: float = 0.0, full_episodes: bool = False) -> Iterator[Episode]:
    """Run ``policy`` on every env of the batched ``env`` and yield each finished episode.

    Args:
        env: a batched in-process env (``BaseEnv``), never autoreset.
        policy: ``info -> (N, A) actions`` (an expert's ``act``; it restarts an env whose
            ``info["elapsed_steps"]`` is 0).
        next_seed: the seed of the next episode, or None when no new episode should start; an
            env that finishes then idles (it still steps, its rows are not recorded).
        record_states: keep env-local state rows (``Episode.env_states``, ``local_state_dict``).
        frames: None (record the observations as the env has them) or a map to another schema
            with ``obs(obs)`` (``robot_units.RealRobotFrames``; the env must run in its
            ``control_mode``). The policy's actions are recorded either way.
        action_noise: standard deviation of the Gaussian noise added to the executed actions
            (action units; ``action_noise.ActionNoise``: every column but the gripper's, clipped
            to the action space, drawn from a generator seeded by the episode's reset seed);
            the recorded actions stay the policy's. 0: none, the policy's actions are executed.
        full_episodes: ignore terminations (as ``SimuloVectorEnv(ignore_terminations=True)``):
            every episode runs to the env's time limit, its recorded ``terminated`` flags are all
            False, and ``Episode.succeeded`` is the task's success at that last step (what a
            policy that must hold the task's end state learns from).

    A finished env is reset at once with the next seed, or, where seeded resets must cover every
    env (``seeded_resets_per_env``) or episodes run in fresh physics (``fresh_scenes``), waits for
    the others: then all start again together (in a rebuilt scene for fresh physics).
    Stops when every env idles.

    Raises:
        ValueError: (at the first ``next``) a negative or non-finite ``action_noise``, or
            ``frames`` of another control mode than the env's.
    """
    noise_std = check_noise_std(action_noise)
    check_frames_mode(env, frames)
    n = env.num_envs
    noise = ActionNoise(env, noise_std) if noise_std else None
    fresh = fresh_scenes(env)
    per_env = seeded_resets_per_env(env) and not fresh
    active = np.zeros(n, dtype=bool)
    as_obs = frames.obs if frames is not None else (lambda o: o)
    recorder = EpisodeRecorder(n, record_states)
    info = None
    while True:
        if not active.any():  # the start, or the next wave
            seeds = [next_seed() for _ in range(n)]
            active = np.array([s is not None for s in seeds])
            if not active.any():
                return
            seeds = [s if s is not None else 0 for s in seeds]
            obs, info = env.reset(seed=seeds, options={"reconfigure": True} if fresh else None)
            recorder = EpisodeRecorder(n, record_states)
            recorder.begin(as_obs(obs), local_state_dict(env) if record_states else None, np.arange(n), seeds)
            if noise is not None:
                noise.begin(np.arange(n), seeds)
        action = policy(info)
        executed = noise.apply(action, active) if noise is not None else action
        obs, reward, terminated, truncated, info = env.step(executed)
        obs = as_obs(obs)
        if full_episodes:
            terminated = torch.zeros_like(terminated)
        success = info.get(success_key, torch.zeros(n, dtype=torch.bool))
        recorder.step(action, obs, reward, terminated, truncated, success,
                      local_state_dict(env) if record_states else None)
        done = ((terminated | truncated).cpu().numpy()) & active
        ids = np.flatnonzero(done)
        for i in ids:
            yield recorder.finish(int(i))
        active[ids] = False
        if len(ids) and per_env:
            drawn = [next_seed() for _ in ids]
            restart = np.array([i for i, s in zip(ids, drawn) if s is not None], dtype=np.int64)
            if len(restart):
                seeds = [s for s in drawn if s is not None]
                obs, info = env.reset(seed=seeds, options={"env_idx": restart})
                recorder.begin(as_obs(obs), local_state_dict(env) if record_states else None, restart, seeds)
                if noise is not None:
                    noise.begin(restart, seeds)
                active[restart] = True
        recorder.trim(active)
