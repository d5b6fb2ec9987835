"""Read a LeRobot v3.0 dataset (layout: ``simulo_envs/datasets/lerobot.py``) as a ``Dataset``.

What is checked before anything is trusted, each failure a ``DatasetLayoutError`` naming the
file: ``meta/info.json`` (version, totals, features with dtype and shape, the path templates);
``meta/episodes`` (episodes ``0 .. total_episodes - 1``, each one's frame range and length
consistent with the one before); the frame table (``total_frames`` rows, the required columns
with the dtype and width ``info.json`` declares, each episode's rows numbered ``0 .. T-1``);
``meta/stats.json`` (a JSON object). Video frames are checked when an episode is read: the
episode's span of its file must decode to ``length`` frames spaced ``1 / fps`` apart.

A dataset without ``meta/simulo_env.json`` (written by another tool) reads too: its schema then
comes from ``info.json`` (env id and modes unknown: empty strings).
"""

from __future__ import annotations

import os

import numpy as np
import torch

from simulo_envs.datasets import atomic, stats, video
from simulo_envs.datasets.dataset import Dataset, EpisodeData
from simulo_envs.datasets.errors import DatasetLayoutError
from simulo_envs.datasets.lerobot import (CODEBASE_VERSION, DEFAULT_FEATURES, ENV_PATH, INFO_PATH, STATS_PATH,
                                          chunk_files, committed_episode_rows, committed_stats, load_json, read_parquet,
                                          read_schema, read_tasks)
from simulo_envs.datasets.schema import DatasetSchema

REQUIRED = ("observation.state", "action") + tuple(DEFAULT_FEATURES)
_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": bool}


def read_lerobot(root: str) -> Dataset:
    """Open the LeRobot v3.0 dataset at ``root`` (see the module docstring).

    Raises:
        DatasetLayoutError: a file that does not follow the layout (named in the message).
    """
    left = atomic.interrupted_swap(os.path.join(root, "meta"))
    if left:
        raise DatasetLayoutError(f"{root}: a commit was interrupted while it replaced meta/ (its versions are at "
                                 f"{', '.join(left)}); reopen the dataset with the writer (collect_demos.py --append) "
                                 "to put the last one back")
    info = _check_info(root)
    schema = read_schema(root) if os.path.isfile(os.path.join(root, ENV_PATH)) else _schema_from_info(root, info)
    rows = committed_episode_rows(root, info)
    table = _frame_table(root, info)
    features = {k: ft for k, ft in info["features"].items() if ft["dtype"] != "video"}
    if table is None:  # no frame yet
        arrays = {k: np.zeros((0, *([] if ft["shape"] == [1] else ft["shape"])), _DTYPES.get(ft["dtype"], np.float32))
                  for k, ft in features.items()}
    else:
        arrays = {k: _column(table, k, features[k]) for k in table.column_names}
    _check_episodes(root, rows, arrays, int(info["total_frames"]))
    video_keys = [k for k, ft in info["features"].items() if ft["dtype"] == "video"]
    fps = int(info["fps"])

    def load(i: int, with_images: bool = True) -> EpisodeData:
        row = rows[i]
        lo, hi = row["dataset_from_index"], row["dataset_to_index"]
        images = {}
        for key in video_keys if with_images else ():
            path = os.path.join(root, info["video_path"].format(video_key=key, chunk_index=row[f"videos/{key}/chunk_index"],
                                                                file_index=row[f"videos/{key}/file_index"]))
            if not os.path.isfile(path):
                raise DatasetLayoutError(f"{path} is missing (episode {i}'s {key} frames)")
            try:
                frames = video.decode(path, row[f"videos/{key}/from_timestamp"], hi - lo, fps)
            except ValueError as error:
                raise DatasetLayoutError(f"episode {i}: {error}") from None
            except Exception as error:  # PyAV's errors for a truncated or corrupt file
                raise DatasetLayoutError(f"{path} cannot be decoded (truncated or corrupt): {error}") from None
            images[key[len("observation.images."):]] = torch.from_numpy(frames)
        get = lambda k: torch.from_numpy(np.array(arrays[k][lo:hi])) if k in arrays else None  # noqa: E731
        return EpisodeData(index=i, seed=int(seeds[i]), observation_state=get("observation.state"),
                           action=get("action"), images=images, reward=get("next.reward"), done=get("next.done"),
                           success=get("next.success"))

    def dataset_stats() -> dict:
        """meta/stats.json; recomputed from the episodes' own statistics when it counts other
        frames than info.json (written by an add that did not commit)."""
        if os.path.isfile(os.path.join(root, STATS_PATH)):
            saved = stats.from_json(load_json(root, STATS_PATH))
            if saved.get("index", {}).get("count", np.zeros(1)).tolist() == [int(info["total_frames"])]:
                return saved
        return committed_stats(root, info)

    seeds = [r.get("seed") if r.get("seed") is not None else -1 for r in rows]
    successes = [bool(r.get("success")) if r.get("success") is not None else False for r in rows]
    return Dataset(root, "lerobot", schema, np.array(seeds, np.int64), np.array([r["length"] for r in rows], np.int64),
                   np.array(successes, bool), load, dataset_stats)


def _check_info(root: str) -> dict:
    info = load_json(root, INFO_PATH)
    path = os.path.join(root, INFO_PATH)
    if info.get("codebase_version") != CODEBASE_VERSION:
        raise DatasetLayoutError(f"{path}: codebase_version {info.get('codebase_version')!r}, this reader reads "
                                 f"{CODEBASE_VERSION!r}")
    for key in ("fps", "total_episodes", "total_frames", "features", "data_path"):
        if key not in info:
            raise DatasetLayoutError(f"{path} lacks {key!r}")
    if not isinstance(info["fps"], int) or info["fps"] <= 0:
        raise DatasetLayoutError(f"{path}: fps must be a positive int, got {info['fps']!r}")
    features = info["features"]
    missing = [k for k in REQUIRED if k not in features]
    if missing:
        raise DatasetLayoutError(f"{path}: features lack {missing}")
    for key, ft in features.items():
        if not isinstance(ft, dict) or "dtype" not in ft or not isinstance(ft.get("shape"), list):
            raise DatasetLayoutError(f"{path}: feature {key!r} needs a dtype and a shape list")
    if any(ft["dtype"] == "video" for ft in features.values()) and not info.get("video_path"):
        raise DatasetLayoutError(f"{path}: video features but no video_path")
    return info


def _schema_from_info(root: str, info: dict) -> DatasetSchema:
    features = info["features"]
    cams = {k[len("observation.images."):]: tuple(ft["shape"]) for k, ft in features.items() if ft["dtype"] == "video"}
    names = lambda k: tuple(features[k].get("names") or [f"{k}.{i}" for i in range(features[k]["shape"][0])])  # noqa: E731
    tasks = read_tasks(root)
    return DatasetSchema(env_id="", obs_mode="", control_mode="", reward_mode="", fps=int(info["fps"]),
                         robot_type=str(info.get("robot_type") or ""), state_names=names("observation.state"),
                         action_names=names("action"), cameras=cams, task=tasks[0] if tasks else "",
                         next_features="next.done" in features)


def _frame_table(root: str, info: dict):
    import pyarrow as pa
    import pyarrow.compute as pc

    files = chunk_files(root, "data", ".parquet")
    columns = [k for k, ft in info["features"].items() if ft["dtype"] != "video"]
    tables = []
    for _, _, path in files:
        table = read_parquet(path)
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            raise DatasetLayoutError(f"{path} lacks the columns {missing} that meta/info.json declares")
        tables.append(table.select(columns))
    if not tables:
        if int(info["total_frames"]):
            raise DatasetLayoutError(f"{root}: no data/chunk-*/file-*.parquet, info.json says {info['total_frames']} frames")
        return None
    try:
        table = pa.concat_tables(tables)
    except pa.ArrowInvalid as error:
        raise DatasetLayoutError(f"{root}: the data files disagree on their columns: {error}") from None
    table = table.filter(pc.less(table["index"], int(info["total_frames"])))  # rows of an uncommitted episode
    if table.num_rows != int(info["total_frames"]):
        raise DatasetLayoutError(f"{root}/data holds {table.num_rows} committed frames, info.json says "
                                 f"{info['total_frames']} (a data file is missing or truncated)")
    return table


def _column(table, key: str, ft: dict) -> np.ndarray:
    import pyarrow as pa

    col = table[key].combine_chunks()
    dtype = _DTYPES.get(ft["dtype"])
    shape = list(ft["shape"])
    if dtype is None:
        raise DatasetLayoutError(f"feature {key!r}: dtype {ft['dtype']!r} is not read here")
    if shape == [1]:
        if pa.types.is_list(col.type) or pa.types.is_fixed_size_list(col.type):
            raise DatasetLayoutError(f"feature {key!r}: declared (1,) but stored as a list")
        return col.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    if not (pa.types.is_fixed_size_list(col.type) or pa.types.is_list(col.type)):
        raise DatasetLayoutError(f"feature {key!r}: declared {tuple(shape)} but stored as {col.type}")
    if table.num_rows == 0:
        return np.zeros((0, *shape), dtype)
    flat = col.flatten().to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    if flat.size != table.num_rows * int(np.prod(shape)):
        raise DatasetLayoutError(f"feature {key!r}: rows are not {tuple(shape)} wide")
    return flat.reshape(table.num_rows, *shape)


def _check_episodes(root: str, rows: list[dict], arrays: dict, total_frames: int) -> None:
    start = 0
    for row in rows:
        e, lo, hi = row["episode_index"], row["dataset_from_index"], row["dataset_to_index"]
        if lo != start or hi - lo != row["length"] or hi > total_frames:
            raise DatasetLayoutError(f"{root}: episode {e} spans frames [{lo}, {hi}) with length {row['length']}; "
                                     f"expected to start at {start}")
        if not (np.all(arrays["episode_index"][lo:hi] == e)
                and np.array_equal(arrays["frame_index"][lo:hi], np.arange(hi - lo))):
            raise DatasetLayoutError(f"{root}: the frames [{lo}, {hi}) are not episode {e}'s frames 0..{hi - lo - 1}")
        start = hi
    if start != total_frames:
        raise DatasetLayoutError(f"{root}: the episodes cover {start} frames, info.json says {total_frames}")
