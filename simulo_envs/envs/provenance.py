"""Provenance: what reproduces a result (a dataset episode, a checkpoint, an evaluation report).

``provenance(env, ...)`` returns one JSON-ready dict, written beside every artifact the project
makes::

    {"format": 1,
     "software": {"simulo_envs": "0.1.0", "sapien": "3.0.3", "physx": "5.3.1", "torch": "2.13.0",
                  "numpy": "...", "gymnasium": "...", "python": "3.11.2"},
     "repository": {"commit": "<40 hex digits>", "dirty": false} or null,
     "env": {"env_id": "FrankaLift-v1", "env_kwargs": {...}, "num_envs": 16, "sim_backend": "physx_cpu",
             "sim_config": {...every SimConfig field...}, "sim_freq": 100, "control_freq": 20,
             "control_mode": "pd_ee_delta_pos", "obs_mode": "state", "reward_mode": "dense",
             "max_episode_steps": 100, "isolate_envs": true},
     "seeds": [...], ...}

- ``software``: the versions that decide the numbers (PhysX is the one bundled with SAPIEN,
  ``simulo_envs.sim.engine_versions``).
- ``repository``: the git commit of the checkout the package runs from, and whether it had
  uncommitted changes (``git status --porcelain``); null for an installed wheel or where git is
  missing. Nothing is fetched.
- ``env``: the settings the env runs with, read from the env itself (not only what the caller
  passed): every ``SimConfig`` field (so a default that changes later is still on record), the
  frequencies [Hz], the control, observation and reward modes, the backend, and
  ``env_kwargs``: the keywords the caller made it with (JSON values as they are, other objects
  through ``json_value``).
- ``seeds``: what the caller says seeded the result (episode seeds, a training seed).

``same_software(a, b)`` lists the differences between two records' ``software`` (what a replay
or a re-evaluation warns about: bitwise equality is promised on the same versions only).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import platform
import subprocess
from importlib import metadata
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import torch

from simulo_envs.sim import engine_versions

__all__ = ["FORMAT", "provenance", "software_versions", "repository_commit", "env_settings", "json_value",
           "same_software", "file_sha256"]

FORMAT = 1
"""Version of the record's layout (module docstring)."""

_PACKAGES = ("simulo_envs", "torch", "numpy", "gymnasium")


def _version(distribution: str) -> Optional[str]:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def software_versions() -> dict:
    """``{"simulo_envs", "sapien", "physx", "torch", "numpy", "gymnasium", "python"}`` -> version
    string (None where a distribution is not installed). Cached per process."""
    out = {name: _version(name.replace("_", "-")) for name in _PACKAGES}
    out["torch"] = str(torch.__version__)  # a TorchVersion pickles as a class weights_only loads refuse
    out["numpy"] = np.__version__
    out.update(engine_versions())
    out["python"] = platform.python_version()
    return out


@functools.lru_cache(maxsize=1)
def repository_commit() -> Optional[dict]:
    """``{"commit": sha1 hex, "dirty": bool}`` of the git checkout holding this package's source,
    or None (an installed wheel, no git executable, or not a checkout). Cached per process."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10)
        status = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if commit.returncode != 0:
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip()) if status.returncode == 0 else None}


def json_value(value: Any) -> Any:
    """``value`` as JSON data: JSON values unchanged, numpy and torch values as (nested) lists or
    numbers, dataclasses (``SimConfig``, ``Randomize``, ``CameraConfig``, ...) as
    ``{"__type__": name, field: value}``, mappings and sequences element by element, and any
    other object as ``{"__repr__": repr(value)}`` (recorded for a reader, not rebuilt)."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    if isinstance(value, (np.ndarray, torch.Tensor)):
        return np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value).tolist()
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__type__": type(value).__name__,
                **{f.name: json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    return {"__repr__": repr(value)}


def _base_env(env):
    """The env under any wrapper: an RSL-RL or vector adapter (``venv``), a vector env
    (``base_env``), a Gymnasium wrapper (``unwrapped``); a ``BaseEnv`` or a ``ShardedEnv``."""
    for _ in range(8):
        inner = getattr(env, "venv", None) or getattr(env, "base_env", None)
        if inner is None:
            break
        env = inner
    return getattr(env, "unwrapped", env)


def env_settings(env, env_id: Optional[str] = None, env_kwargs: Optional[Mapping[str, Any]] = None) -> dict:
    """The ``"env"`` part of a record (module docstring) for ``env``: a ``BaseEnv``, a
    ``ShardedEnv`` (worker processes) or any wrapper or vector adapter of one. ``env_id``
    defaults to the registered id of the env's Gymnasium spec, else the class name. A setting
    the env does not expose here (a sharded env's agent lives in its workers) is read from
    ``env_kwargs``, else recorded as None."""
    base = _base_env(env)
    kwargs = dict(env_kwargs or {})
    spec = getattr(env, "spec", None) or getattr(base, "spec", None)
    agent = getattr(base, "agent", None)
    config = base.sim_config
    terms = getattr(getattr(base, "randomization", None), "terms", None)
    return {
        "env_id": env_id or (spec.id if spec is not None else type(base).__name__),
        "env_class": f"{type(base).__module__}.{type(base).__qualname__}",
        "env_kwargs": json_value(kwargs),
        "num_envs": int(base.num_envs),
        "sim_backend": getattr(base, "sim_backend", kwargs.get("sim_backend")),
        "sim_config": json_value(dataclasses.asdict(config)),
        "sim_freq": int(config.sim_freq),
        "control_freq": int(config.control_freq),
        "isolate_envs": bool(config.isolate_envs),
        "control_mode": getattr(agent, "control_mode", None) or kwargs.get("control_mode"),
        "obs_mode": getattr(base, "obs_mode", kwargs.get("obs_mode")),
        "reward_mode": getattr(base, "reward_mode", kwargs.get("reward_mode")),
        "max_episode_steps": getattr(base, "max_episode_steps", kwargs.get("max_episode_steps")),
        "randomization": json_value(list(terms)) if terms is not None else [],
    }


def provenance(env=None, *, env_id: Optional[str] = None, env_kwargs: Optional[Mapping[str, Any]] = None,
               seeds: Optional[Sequence[int]] = None, **extra: Any) -> dict:
    """The record of module docstring: software versions, repository commit, ``env``'s settings
    (``env_settings``; omitted when ``env`` is None) and ``seeds``; ``extra`` keywords are added
    as given (JSON-converted by ``json_value``)."""
    record = {"format": FORMAT, "software": dict(software_versions()), "repository": repository_commit()}
    if env is not None:
        record["env"] = env_settings(env, env_id, env_kwargs)
    elif env_id is not None or env_kwargs:
        record["env"] = {"env_id": env_id, "env_kwargs": json_value(dict(env_kwargs or {}))}
    record["seeds"] = None if seeds is None else [int(s) for s in seeds]
    record.update({k: json_value(v) for k, v in extra.items()})
    return record


def file_sha256(path: str) -> str:
    """SHA-256 hex digest of the file at ``path`` (a checkpoint an evaluation read).

    Raises:
        OSError: the file cannot be read."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def same_software(recorded: Mapping[str, Any], current: Optional[Mapping[str, Any]] = None) -> list[str]:
    """Differences between a record's ``software`` versions and this process's (or ``current``):
    ``["sapien 3.0.2 -> 3.0.3", ...]``; empty when they agree or the record has none."""
    current = current or software_versions()
    theirs = dict(recorded.get("software") or {}) if isinstance(recorded, Mapping) else {}
    return [f"{k} {theirs[k]} -> {current.get(k)}" for k in sorted(theirs) if theirs[k] != current.get(k)]
