"""Checking that a dataset's episodes reproduce (``scripts/replay.py --verify``).

``verify(source)`` re-simulates every episode from its seed with its recorded actions, in envs of
the recorded settings (``DatasetSchema.env_kwargs``: obs and control mode, ``sim_config``), and
compares what it gets with what was recorded, step by step: the state observations
(``observation.state``; the joint readings in the robot's units for a real robot's LeRobot
schema), the rewards and, for HDF5 sources, the env states (poses, velocities, joint positions).

- A dataset recorded with one PhysX system per env (``sim_config.isolate_envs``, the default of
  ``scripts/collect_demos.py``) replays bit for bit: each wave of episodes runs in a rebuilt
  scene, and an episode matches when every compared value is equal (``bitwise``).
- A dataset recorded in a shared PhysX system replays to float noise: an episode matches when
  its largest deviation (``max_deviation``, in the units of each value: m, rad, m/s, the
  reward's) is at most ``tolerance``.

Bitwise equality is promised on the same software only: the report lists the differences
between the versions that recorded an episode (its ``provenance``) and these.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Optional

import numpy as np
import torch

from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.dataset import Dataset
from simulo_envs.datasets.hdf5 import episode_from_group, read_group
from simulo_envs.datasets.robot_units import real_robot_frames
from simulo_envs.datasets.rollout import EpisodeRecorder, local_state_dict
from simulo_envs.envs.provenance import same_software
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.progress import ProgressBar

__all__ = ["verify", "SHARED_TOLERANCE"]

SHARED_TOLERANCE = 1e-3
"""Default largest deviation accepted for a dataset recorded in a shared PhysX system. The envs of
one system couple at float-rounding level (about 1e-6 per step; SAPIEN 3.0.3), and contact
amplifies it: replayed in another batch than the recording's, a grasp can end otherwise. Measured
(FrankaLift-v1, 8 expert episodes recorded on 4 envs with ``--shared-physics``): replayed with
``--num-envs 4`` the first wave of 4 episodes reproduces bit for bit and the later ones deviate by
up to 2.8 (the block's angular velocity, rad/s; they started beside episodes at other stages than
in the recording); with ``--num-envs 3`` none is within 1e-3 (up to 15 rad/s, the block's
orientation by 1e-3). So a shared recording verifies only as far as its batch is replayed; record
with one PhysX system per env (the tools' default) for datasets that must verify."""


def _isolated(kwargs: dict) -> bool:
    config = kwargs.get("sim_config") or {}
    if dataclasses.is_dataclass(config):
        return bool(config.isolate_envs)
    return bool(config.get("isolate_envs", False))


def _recorded(ds: Dataset, index: int) -> dict:
    """Episode ``index``: ``seed``, ``actions`` (T, A), ``state`` (T or T + 1 rows), ``rewards``
    (T,), ``env_states`` (HDF5: T + 1 rows; else None), ``provenance`` (or None)."""
    if ds.format == "hdf5":
        main = os.path.join(ds.path, "trajectory.h5")
        ep = episode_from_group(read_group(main, index), int(ds.seeds[index]), f"{main}:traj_{index}")
        return {"seed": ep.seed, "actions": ep.actions, "state": ep.state_vector(), "rewards": ep.rewards,
                "env_states": ep.env_states, "provenance": _hdf5_provenance(ds.path, index)}
    ep = ds.episode(index, images=False)
    return {"seed": ep.seed, "actions": ep.action.numpy(), "state": ep.observation_state.numpy(),
            "rewards": ep.reward.numpy() if ep.reward is not None else None, "env_states": None,
            "provenance": None}


def _hdf5_provenance(folder: str, index: int) -> Optional[dict]:
    try:
        with open(os.path.join(folder, "trajectory.json")) as handle:
            records = json.load(handle)["episodes"]
        return records[index].get("provenance")
    except (OSError, ValueError, KeyError, IndexError):
        return None


def _leaves(tree, prefix=""):
    if isinstance(tree, dict):
        for key in sorted(tree):
            yield from _leaves(tree[key], f"{prefix}/{key}")
    else:
        yield prefix, np.asarray(tree)


def _compare(pairs) -> tuple[bool, float]:
    """``(every pair equal bit for bit, largest absolute difference)`` over ``(a, b)`` arrays."""
    equal, deviation = True, 0.0
    for a, b in pairs:
        if a.shape != b.shape:
            return False, float("inf")
        equal = equal and np.array_equal(a, b)
        if a.size:
            deviation = max(deviation, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    return equal, deviation


def verify(source: str, num_envs: int = 16, count: Optional[int] = None, tolerance: Optional[float] = None,
           progress: bool = False) -> dict:
    """Re-simulate the episodes of ``source`` and compare them with the recording (module
    docstring). ``num_envs`` envs step together (the result does not depend on it for an
    isolated recording); ``count``: the first ``count`` episodes only; ``tolerance``: the
    largest deviation accepted for a shared-system recording (default ``SHARED_TOLERANCE``).

    Returns ``{"source", "env_id", "isolate_envs", "episodes", "matched", "mismatched" (dataset
    indices), "max_deviation", "tolerance", "software_differences", "per_episode": [{"index",
    "seed", "steps", "bitwise", "max_deviation", "match"}], "error": None}``.

    Raises:
        FileNotFoundError / DatasetLayoutError: no dataset, or a damaged one. KeyError: an env
            that is not registered. ValueError: ``num_envs``/``count`` < 1, a negative
            ``tolerance``, or a dataset recorded with action noise (its actions are clean labels,
            not the executed ones).
    """
    ds = load_dataset(source)
    if ds.env_id not in REGISTERED:
        raise KeyError(f"{source} holds episodes of {ds.env_id!r}, which is not a registered env")
    for name, value in (("num_envs", num_envs), ("count", 1 if count is None else count)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if tolerance is not None and not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    if ds.schema.action_noise_std:
        raise ValueError(f"{source} was recorded with action noise: its actions are the expert's clean labels, not "
                         "the executed ones, so a replay of them cannot reproduce its episodes")
    tolerance = SHARED_TOLERANCE if tolerance is None else float(tolerance)
    total = len(ds) if count is None else min(count, len(ds))
    kwargs = {**ds.schema.env_kwargs, "obs_mode": ds.obs_mode, "control_mode": ds.control_mode}
    isolated = _isolated(kwargs)
    n = min(num_envs, total)
    env = REGISTERED[ds.env_id](num_envs=n, **kwargs)
    frames = real_robot_frames(env, "lerobot") if ds.schema.state_source == "robot" else None  # its units
    as_obs = frames.obs if frames is not None else (lambda o: o)
    rows, differences = [], set()
    bar = ProgressBar(total=total, unit="episode", desc=f"verifying {ds.env_id}", disable=not progress)
    try:
        for start in range(0, total, n):
            wave = [_recorded(ds, k) for k in range(start, min(start + n, total))]
            for rec in wave:
                if rec["provenance"]:
                    differences.update(same_software(rec["provenance"]))
            seeds = [rec["seed"] for rec in wave] + [wave[-1]["seed"]] * (n - len(wave))
            states = ds.format == "hdf5" and all(rec["env_states"] is not None for rec in wave)
            obs, _ = env.reset(seed=seeds, options={"reconfigure": True} if isolated else None)
            recorder = EpisodeRecorder(n, states)
            recorder.begin(as_obs(obs), local_state_dict(env) if states else None, np.arange(n), seeds)
            lengths = [len(rec["actions"]) for rec in wave]
            action_dim = wave[0]["actions"].shape[1]
            for t in range(max(lengths)):
                action = np.zeros((n, action_dim), np.float32)
                for i, rec in enumerate(wave):
                    if t < lengths[i]:
                        action[i] = rec["actions"][t]
                obs, reward, terminated, truncated, info = env.step(torch.from_numpy(action))
                success = info.get("success", torch.zeros(n, dtype=torch.bool))
                recorder.step(action, as_obs(obs), reward, terminated, truncated, success,
                              local_state_dict(env) if states else None)
                for i in [i for i, length in enumerate(lengths) if length == t + 1]:
                    rows.append(_check(recorder.finish(i), wave[i], start + i, isolated, tolerance))
                    bar.update(1)
    finally:
        bar.close()
        env.close()
    rows.sort(key=lambda r: r["index"])
    mismatched = [r["index"] for r in rows if not r["match"]]
    return {"source": os.path.abspath(source), "env_id": ds.env_id, "isolate_envs": isolated, "episodes": len(rows),
            "matched": len(rows) - len(mismatched), "mismatched": mismatched,
            "max_deviation": max((r["max_deviation"] for r in rows), default=0.0),
            "tolerance": None if isolated else tolerance, "software_differences": sorted(differences),
            "per_episode": rows, "error": None, "interrupted": False}


def _check(replayed, rec: dict, index: int, isolated: bool, tolerance: float) -> dict:
    steps = len(rec["actions"])
    pairs = [(replayed.state_vector()[:len(rec["state"])], rec["state"])]
    if rec["rewards"] is not None:
        pairs.append((replayed.rewards, rec["rewards"]))
    if rec["env_states"] is not None and replayed.env_states is not None:
        recorded = dict(_leaves(rec["env_states"]))
        pairs += [(value, recorded.get(key, np.empty(0))) for key, value in _leaves(replayed.env_states)]
    bitwise, deviation = _compare(pairs)
    match = bitwise if isolated else deviation <= tolerance
    return {"index": index, "seed": int(rec["seed"]), "steps": steps, "bitwise": bitwise,
            "max_deviation": deviation, "match": match}
