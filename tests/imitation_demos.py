"""Test helper: a small dataset of expert demonstrations, written and read as a user's would be
(``simulo_envs.datasets``' collection, then ``load_demonstrations``)."""

from __future__ import annotations

import os

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.imitation.datasets_io import load_demonstrations


def expert_dataset(folder: str, env_id: str, episodes: int, obs_mode: str = "state", fmt: str = "lerobot",
                   num_envs: int = 4, seed: int = 0, env_kwargs=None) -> str:
    """Collect ``episodes`` successful expert episodes of ``env_id`` into ``folder`` (seeds from
    ``seed``); returns the folder."""
    summary = collect(CollectSettings(env_id=env_id, num_episodes=episodes, out=folder, fmt=fmt, num_envs=num_envs,
                                      seed=seed, obs_mode=obs_mode, env_kwargs=env_kwargs or {},
                                      record_states=False), progress=False)
    assert summary["episodes"] == episodes and os.path.isdir(folder), summary
    return folder


def expert_demos(folder: str, env_id: str, episodes: int, obs: str = "state", **kwargs):
    """``Demonstrations`` of ``env_id`` for a policy of kind ``obs``, through a dataset in ``folder``."""
    obs_mode = "rgb" if obs == "rgb" else "state"
    return load_demonstrations(expert_dataset(folder, env_id, episodes, obs_mode, **kwargs), obs)
