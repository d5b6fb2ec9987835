"""LeRobot dataset format v3.0: the layout, declared once, and ``LeRobotWriter``.

Published spec: LeRobot 0.4.4 (the first release of v3.0), ``src/lerobot/datasets/utils.py``
(path templates, ``DEFAULT_FEATURES``, ``create_empty_dataset_info``, ``write_tasks``),
``src/lerobot/datasets/lerobot_dataset.py`` (``save_episode``, ``_save_episode_data``,
``_save_episode_video``, ``LeRobotDatasetMetadata._save_episode_metadata``),
``compute_stats.py`` and ``video_utils.py``; ``docs/source/lerobot-dataset-v3.mdx``. Written
from those files; no code copied. The ``lerobot`` package itself cannot be installed beside our
torch, so it is not used.

Layout under the dataset root::

    meta/info.json             codebase_version "v3.0", robot_type, fps (= control frequency),
                               total_episodes, total_frames, total_tasks, chunks_size (1000),
                               data_files_size_in_mb (100), video_files_size_in_mb (200),
                               splits {"train": "0:<episodes>"}, data_path, video_path (null
                               without cameras), features {key: {dtype, shape, names[, info]}}
    meta/stats.json            {feature: {min, max, mean, std, count, q01, q10, q50, q90, q99}}
    meta/tasks.parquet         task_index int64 + the task text as the pandas index
                               (column __index_level_0__), one row per task
    meta/episodes/chunk-CCC/file-FFF.parquet   one row per episode (EPISODE COLUMNS)
    meta/simulo_env.json       ours, ignored by LeRobot: the DatasetSchema (env id, modes, kwargs,
                               action noise)
    data/chunk-CCC/file-FFF.parquet            one row per frame (FRAME FEATURES), episodes in order
    videos/observation.images.<camera>/chunk-CCC/file-FFF.mp4   that camera's frames, episodes
                               in order (``simulo_envs/datasets/video.py``: AV1, yuv420p)

FRAME FEATURES (frame ``t = 0 .. T-1`` of an episode of ``T`` steps; the observation after the
last step is not stored, as in LeRobot):

====================================  =======  ========  =============================================
feature                               dtype    shape     meaning [unit]
====================================  =======  ========  =============================================
observation.state                     float32  (D,)      flat state observation at t; names: schema
observation.images.<camera>           video    (H,W,3)   RGB at t, in that camera's mp4 file
action                                float32  (A,)      action applied at t (clipped); names: schema;
                                                         with action noise: the expert's clean label
next.reward                           float32  (1,)      reward of step t (the env's reward mode)
next.done                             bool     (1,)      the episode ends with step t
next.success                          bool     (1,)      the task reports success after step t
timestamp                             float32  (1,)      t / fps [s]
frame_index                           int64    (1,)      t
episode_index                         int64    (1,)      the episode's number in the dataset
index                                 int64    (1,)      the frame's number in the dataset
task_index                            int64    (1,)      row of meta/tasks.parquet
====================================  =======  ========  =============================================

A ``(1,)`` feature is a scalar parquet column, a ``(D,)`` one a ``fixed_size_list<float32>[D]``.

EPISODE COLUMNS: ``episode_index``, ``tasks`` (list of strings), ``length``, ``data/chunk_index``,
``data/file_index``, ``dataset_from_index``, ``dataset_to_index`` (frames ``[from, to)`` of the
whole dataset), per camera ``videos/<key>/chunk_index``, ``videos/<key>/file_index``,
``videos/<key>/from_timestamp`` and ``videos/<key>/to_timestamp`` [s] in its file,
``meta/episodes/chunk_index``, ``meta/episodes/file_index``, ``stats/<feature>/<stat>`` (the
episode's statistics), and ours (extra columns LeRobot carries along): ``seed`` (int64, the
reset seed), ``success`` (bool, success at the last step) and ``provenance`` (string: the JSON
record of what reproduces the episode, ``simulo_envs.envs.provenance``; ``null`` when unknown).

Files: chunk ``CCC`` holds at most ``chunks_size`` files; a file takes episodes until it holds
``episodes_per_file`` of them or passes its size limit, then the next file starts (LeRobot also
starts a new file when a dataset is reopened to add episodes).

Atomic per commit (``add_many``): the videos and the data file an episode extends are
rewritten whole beside their targets, fsynced and renamed over them (``atomic.py``); their new
frames lie past every committed one, where no reader looks (LeRobot indexes frames below
``total_frames`` and, through ``meta/episodes``, the rows' ``dataset_from_index ..
dataset_to_index``). Then the whole ``meta/`` folder (episode rows, tasks, stats, info.json)
is replaced in one atomic exchange (``atomic.FolderSwap``), which is the commit: at no moment
does a reader see a ``meta/episodes`` row (LeRobot's ``EpisodeAwareSampler`` walks every row)
whose frames, video, task or totals are not committed, nor totals ahead of the rows. A crash or a
full disk leaves ``meta/`` at the last commit; frames of an uncommitted episode can sit after the
committed ones in the data and video files (``read_lerobot`` ignores them, and reopening to
append removes them).
"""

from __future__ import annotations

import json
import os
import numpy as np

from simulo_envs.datasets import atomic, stats
from simulo_envs.datasets.errors import DatasetLayoutError
from simulo_envs.datasets.schema import DatasetSchema

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000
DATA_FILES_SIZE_IN_MB = 100
VIDEO_FILES_SIZE_IN_MB = 200
EPISODES_PER_FILE = 100
"""Our default cap of episodes per data / video / episode-metadata file: each new episode
rewrites its files whole (the atomic write), so a file's size bounds the cost of one episode."""
CHUNK_FILE = "chunk-{chunk_index:03d}/file-{file_index:03d}"
META_DIR = "meta"
INFO_PATH = "meta/info.json"
STATS_PATH = "meta/stats.json"
TASKS_PATH = "meta/tasks.parquet"
ENV_PATH = "meta/simulo_env.json"
EPISODES_PATH = "meta/episodes/" + CHUNK_FILE + ".parquet"
DATA_PATH = "data/" + CHUNK_FILE + ".parquet"
VIDEO_PATH = "videos/{video_key}/" + CHUNK_FILE + ".mp4"
DEFAULT_FEATURES = {"timestamp": "float32", "frame_index": "int64", "episode_index": "int64", "index": "int64",
                    "task_index": "int64"}
"""The columns every LeRobot dataset has, all shape (1,) (LeRobot's ``DEFAULT_FEATURES``)."""
TASK_INDEX_COLUMN = "__index_level_0__"


def image_key(camera: str) -> str:
    """The feature key of a camera: ``observation.images.<camera>``."""
    return f"observation.images.{camera}"


NEXT_FEATURES = ("next.reward", "next.done", "next.success")
"""Our per-step outcome columns; left out where ``schema.next_features`` is False."""


def features_of(schema: DatasetSchema) -> dict:
    """``info.json``'s ``features`` for ``schema`` (before video ``info`` is known)."""
    out = {"observation.state": {"dtype": "float32", "shape": [schema.state_dim], "names": list(schema.state_names)}}
    for cam, shape in schema.cameras.items():
        out[image_key(cam)] = {"dtype": "video", "shape": list(shape), "names": ["height", "width", "channels"]}
    out["action"] = {"dtype": "float32", "shape": [schema.action_dim], "names": list(schema.action_names)}
    if schema.next_features:
        out["next.reward"] = {"dtype": "float32", "shape": [1], "names": None}
        out["next.done"] = {"dtype": "bool", "shape": [1], "names": None}
        out["next.success"] = {"dtype": "bool", "shape": [1], "names": None}
    for key, dtype in DEFAULT_FEATURES.items():
        out[key] = {"dtype": dtype, "shape": [1], "names": None}
    return out


def next_file(chunk: int, file: int, chunks_size: int = CHUNKS_SIZE) -> tuple[int, int]:
    """The file after ``(chunk, file)``: the next file index, or file 0 of the next chunk."""
    file += 1
    return (chunk + 1, 0) if file >= chunks_size else (chunk, file)


def read_schema(root: str) -> DatasetSchema:
    """The ``DatasetSchema`` of the LeRobot dataset at ``root``.

    Raises:
        DatasetLayoutError: no readable ``meta/simulo_env.json`` / ``meta/info.json``, or another
            codebase version.
    """
    info = load_json(root, INFO_PATH)
    if info.get("codebase_version") != CODEBASE_VERSION:
        raise DatasetLayoutError(f"{root}: LeRobot codebase_version {info.get('codebase_version')!r}; this reader "
                                 f"reads {CODEBASE_VERSION!r}")
    try:
        return DatasetSchema.from_json(load_json(root, ENV_PATH))
    except (KeyError, TypeError, ValueError) as error:
        raise DatasetLayoutError(f"{os.path.join(root, ENV_PATH)}: {error}") from None


def load_json(root: str, rel: str) -> dict:
    """``root/rel`` parsed. Raises DatasetLayoutError naming the file when missing or not JSON."""
    path = os.path.join(root, rel)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise DatasetLayoutError(f"{path} is missing: not a LeRobot v3.0 dataset written here") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DatasetLayoutError(f"{path} is not valid JSON (truncated or corrupt): {error}") from None
    if not isinstance(data, dict):
        raise DatasetLayoutError(f"{path} must hold a JSON object")
    return data


def write_tasks(path: str, tasks: list[str]) -> None:
    """``meta/tasks.parquet`` (at ``path``, written as it is: the caller makes it atomic) as
    pandas writes LeRobot's task frame (``task_index`` column, task text as the unnamed index),
    pandas' parquet metadata included so ``pandas.read_parquet`` restores the index (pandas'
    "Storing pandas DataFrame objects in Apache Parquet format")."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = {"index_columns": [TASK_INDEX_COLUMN],
            "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
                                "metadata": {"encoding": "UTF-8"}}],
            "columns": [{"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
                         "numpy_type": "int64", "metadata": None},
                        {"name": None, "field_name": TASK_INDEX_COLUMN, "pandas_type": "unicode",
                         "numpy_type": "object", "metadata": None}],
            "creator": {"library": "pyarrow", "version": pa.__version__}, "pandas_version": "2.2.3"}
    table = pa.table({"task_index": pa.array(range(len(tasks)), pa.int64()),
                      TASK_INDEX_COLUMN: pa.array(tasks, pa.string())})
    table = table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})
    pq.write_table(table, path)


def read_tasks(root: str) -> list[str]:
    """The task strings of the LeRobot v3.0 dataset at ``root`` (``meta/tasks.parquet``), in task-index order."""
    import pyarrow.parquet as pq

    path = os.path.join(root, TASKS_PATH)
    if not os.path.exists(path):
        return []
    try:
        table = pq.read_table(path)
    except Exception as error:  # pyarrow raises ArrowInvalid / OSError for damaged files
        raise DatasetLayoutError(f"{path} is not a readable parquet file: {error}") from None
    # The task text is the frame's pandas index: unnamed (LeRobot 0.4's writer and ours) or named
    # "task" (LeRobot 0.6's ``write_tasks``).
    text = next((c for c in (TASK_INDEX_COLUMN, "task") if c in table.column_names), None)
    if text is None or "task_index" not in table.column_names:
        raise DatasetLayoutError(f"{path} must have the columns task_index and {TASK_INDEX_COLUMN} or task "
                                 "(the task text)")
    order = np.argsort(table["task_index"].to_numpy())
    texts = table[text].to_pylist()
    return [texts[i] for i in order]


def read_parquet(path: str, columns=None):
    """The arrow table of ``path``. Raises DatasetLayoutError naming the file when it is missing
    or not a readable parquet file (truncated, corrupt)."""
    import pyarrow.parquet as pq

    if not os.path.isfile(path):
        raise DatasetLayoutError(f"{path} is missing")
    try:
        return pq.read_table(path, columns=columns)
    except Exception as error:  # pyarrow raises ArrowInvalid / OSError for a damaged file
        raise DatasetLayoutError(f"{path} is not a readable parquet file (truncated or corrupt): {error}") from None


def chunk_files(root: str, folder: str, suffix: str) -> list[tuple[int, int, str]]:
    """``(chunk, file, path)`` of every ``<folder>/chunk-CCC/file-FFF<suffix>`` under ``root``, in order."""
    out = []
    base = os.path.join(root, folder)
    if not os.path.isdir(base):
        return out
    for chunk_name in sorted(os.listdir(base)):
        if not chunk_name.startswith("chunk-"):
            continue
        for name in sorted(os.listdir(os.path.join(base, chunk_name))):
            if name.startswith("file-") and name.endswith(suffix):
                out.append((int(chunk_name[6:]), int(name[5:-len(suffix)]), os.path.join(base, chunk_name, name)))
    return sorted(out)


def committed_episode_rows(root: str, info: dict) -> list[dict]:
    """The rows of ``meta/episodes`` for the committed episodes (``episode_index <
    total_episodes``), in order, without their ``stats/`` columns.

    Raises:
        DatasetLayoutError: a file is unreadable, or the committed episodes are not exactly
            ``0 .. total_episodes - 1``.
    """
    total = int(info["total_episodes"])
    rows = []
    for _, _, path in chunk_files(root, "meta/episodes", ".parquet"):
        table = read_parquet(path)
        keep = [c for c in table.column_names if not c.startswith("stats/")]
        rows += [r for r in table.select(keep).to_pylist() if r.get("episode_index", total) < total]
    rows.sort(key=lambda r: r["episode_index"])
    if [r["episode_index"] for r in rows] != list(range(total)):
        raise DatasetLayoutError(f"{root}: meta/episodes holds episodes {_ranges([r['episode_index'] for r in rows])}, "
                                 f"info.json says 0..{total - 1}")
    return rows


def committed_stats(root: str, info: dict) -> dict:
    """Dataset statistics aggregated from the committed episodes' ``stats/`` columns (what
    ``meta/stats.json`` holds after a clean commit; also right after an interrupted one)."""
    total = int(info["total_episodes"])
    per_episode = []
    for _, _, path in chunk_files(root, "meta/episodes", ".parquet"):
        table = read_parquet(path)
        columns = [c for c in table.column_names if c.startswith("stats/")]
        for row in table.select(columns + ["episode_index"]).to_pylist():
            if row["episode_index"] >= total:
                continue
            item: dict = {}
            for column in columns:
                _, feature, stat = column.split("/", 2)
                item.setdefault(feature, {})[stat] = np.asarray(row[column], dtype=np.int64 if stat == "count" else np.float64)
            per_episode.append(item)
    return stats.aggregate(per_episode) if per_episode else {}


def trim_uncommitted(root: str, info: dict) -> None:
    """Remove what an interrupted ``add`` left after the committed episodes: data and episode
    rows past ``total_frames`` / ``total_episodes`` (files rewritten atomically, or deleted when
    they hold nothing committed) and video files no committed episode uses."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rows = committed_episode_rows(root, info)
    for folder, column, limit in (("data", "index", int(info["total_frames"])),
                                  ("meta/episodes", "episode_index", int(info["total_episodes"]))):
        for _, _, path in chunk_files(root, folder, ".parquet"):
            table = read_parquet(path)
            keep = table.filter(pc.less(table[column], limit))
            if keep.num_rows == 0:
                os.unlink(path)
            elif keep.num_rows < table.num_rows:
                with atomic.atomic_path(path) as tmp:
                    pq.write_table(keep, tmp, compression="snappy", use_dictionary=True)
    for key, ft in info["features"].items():
        if ft.get("dtype") != "video":
            continue
        used = {(r[f"videos/{key}/chunk_index"], r[f"videos/{key}/file_index"]) for r in rows}
        for chunk, file, path in chunk_files(root, f"videos/{key}", ".mp4"):
            if (chunk, file) not in used and (not used or (chunk, file) > max(used)):
                os.unlink(path)


def _ranges(values: list[int]) -> str:
    if not values:
        return "none"
    return f"{values[0]}..{values[-1]} ({len(values)} rows)" if len(values) > 3 else str(values)
