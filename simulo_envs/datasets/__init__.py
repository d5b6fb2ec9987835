"""Demonstration datasets: record episodes, write them as LeRobot v3.0 or ManiSkill-style HDF5,
read either back as torch tensors.

Reading (what a training script needs)::

    from simulo_envs.datasets import load_dataset

    ds = load_dataset("demos/FrankaLift-v1")       # either format; the layout is checked first
    ds.env_id, ds.obs_mode, ds.control_mode, ds.fps, ds.robot_type, ds.task
    ds.state_names, ds.action_names, ds.cameras    # per-column names, camera -> (H, W, 3)
    ds.seeds, ds.lengths, ds.successes             # per episode
    ds.action_noise_std                            # > 0: recorded with noise on the executed actions
    ds.stats["observation.state"]["mean"]          # normalisation statistics (torch)
    ep = ds[0]                                     # EpisodeData, frames t = 0 .. T-1
    ep.observation_state, ep.action                # float32 (T, D), (T, A)
    ep.images["base_camera"]                       # uint8 (T, H, W, 3)
    ep.reward, ep.done, ep.success                 # (T,)
    batch = ds.concatenated(images=False)          # every frame stacked, with episode_index

Writing: ``LeRobotWriter`` / ``HDF5Writer`` (``open_writer`` picks one) take ``Episode``
objects (numpy, ``episode.py``) and write each atomically. Recording them from envs:
``scripts/collect_demos.py`` and ``scripts/replay.py``.

Formats: ``lerobot.py`` (LeRobot v3.0 layout), ``hdf5.py`` (ManiSkill's trajectory layout).
"""

from __future__ import annotations

import os

from simulo_envs.datasets.dataset import Dataset, EpisodeData
from simulo_envs.datasets.episode import Episode
from simulo_envs.datasets.errors import (DatasetError, DatasetExistsError, DatasetLayoutError, DatasetWriteError,
                                         SchemaMismatchError)
from simulo_envs.datasets.folder import detect_format
from simulo_envs.datasets.hdf5 import HDF5Writer, read_hdf5
from simulo_envs.datasets.lerobot_reader import read_lerobot
from simulo_envs.datasets.lerobot_writer import LeRobotWriter
from simulo_envs.datasets.schema import DatasetSchema, schema_from_env

FORMATS = ("lerobot", "hdf5")


def load_dataset(path: str) -> Dataset:
    """Open the dataset at ``path`` (a LeRobot v3.0 folder, or an HDF5 trajectory folder or its
    ``.h5``/``.json`` file) as a ``Dataset``.

    Raises:
        FileNotFoundError: nothing at ``path``.
        DatasetLayoutError: ``path`` is not a dataset of either format, or a file of it does not
            follow its layout (the message names it).
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"no dataset at {path}")
    if os.path.isfile(path) and path.endswith((".h5", ".json")):
        return read_hdf5(path)
    fmt = detect_format(path) if os.path.isdir(path) else None
    if fmt == "lerobot":
        return read_lerobot(path)
    if fmt == "hdf5":
        return read_hdf5(path)
    raise DatasetLayoutError(f"{path} is not a dataset: no meta/info.json (LeRobot v3.0) and no trajectory.json "
                             "(HDF5 trajectories)")


def open_writer(fmt: str, path: str, schema: DatasetSchema, append: bool = False, **options):
    """A writer of format ``fmt`` (``"lerobot"`` or ``"hdf5"``) for ``path``; ``options`` go to
    its constructor. Raises ValueError for another format; the writers' own errors otherwise."""
    if fmt == "lerobot":
        return LeRobotWriter(path, schema, append=append, **options)
    if fmt == "hdf5":
        return HDF5Writer(path, schema, append=append, **options)
    raise ValueError(f"unknown dataset format {fmt!r}; choose from {list(FORMATS)}")


__all__ = ["Dataset", "EpisodeData", "Episode", "DatasetSchema", "schema_from_env", "load_dataset", "open_writer",
           "LeRobotWriter", "HDF5Writer", "read_lerobot", "read_hdf5", "DatasetError", "DatasetLayoutError",
           "DatasetExistsError", "SchemaMismatchError", "DatasetWriteError", "FORMATS"]
