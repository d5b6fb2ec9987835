"""``LeRobotWriter``: episodes into a LeRobot v3.0 dataset, atomically, one commit per call.

The layout, the spec it follows and the order of the writes: ``simulo_envs/datasets/lerobot.py``.
``add(episode)`` commits one episode; ``add_many(episodes)`` commits several with one write per
file (a file's fsync costs about 10 ms here, so a writer thread that drains a queue of finished
episodes keeps up with any collection rate).
"""

from __future__ import annotations

import json
import os
from typing import Optional, Sequence

import numpy as np

from simulo_envs.datasets import atomic, stats, video
from simulo_envs.datasets.episode import Episode
from simulo_envs.datasets.errors import DatasetWriteError, SchemaMismatchError
from simulo_envs.datasets.folder import check_output
from simulo_envs.datasets.lerobot import (CHUNKS_SIZE, CODEBASE_VERSION, DATA_FILES_SIZE_IN_MB, DATA_PATH, ENV_PATH,
                                          EPISODES_PATH, EPISODES_PER_FILE, INFO_PATH, META_DIR, STATS_PATH, TASKS_PATH,
                                          VIDEO_FILES_SIZE_IN_MB, VIDEO_PATH, committed_episode_rows, committed_stats, features_of,
                                          image_key, load_json, next_file, read_schema, read_tasks, trim_uncommitted,
                                          write_tasks)
from simulo_envs.datasets.schema import DatasetSchema

PARQUET_OPTIONS = {"compression": "snappy", "use_dictionary": True}
"""LeRobot's parquet settings (``pq.ParquetWriter(..., compression="snappy", use_dictionary=True)``)."""


class LeRobotWriter:
    """Write episodes as a LeRobot v3.0 dataset, each commit atomic (``lerobot.py``).

    Args:
        root: the dataset folder (created; see ``folder.check_output`` for what is refused).
        schema: what every episode shares (``schema_from_env``).
        append: add to the dataset at ``root`` (same schema) instead of refusing it.
        episodes_per_file: cap of episodes per data, video and episode-metadata file.
        vcodec / crf: video codec and quality (``video.py``; LeRobot's defaults).

    Raises:
        DatasetExistsError, SchemaMismatchError, PermissionError: ``root`` may not be written
            (nothing is written). DatasetLayoutError: appending to a damaged dataset.
        ValueError: a camera with an odd width or height, ``episodes_per_file < 1``.
    """

    def __init__(self, root: str, schema: DatasetSchema, append: bool = False,
                 episodes_per_file: int = EPISODES_PER_FILE, vcodec: str = video.DEFAULT_CODEC,
                 crf: int = video.DEFAULT_CRF):
        if episodes_per_file < 1:
            raise ValueError(f"episodes_per_file must be >= 1, got {episodes_per_file}")
        for cam, (height, width, _) in schema.cameras.items():
            if height % 2 or width % 2:
                raise ValueError(f"camera {cam!r}: LeRobot videos ({video.PIX_FMT}) need an even width and height, "
                                 f"got {width}x{height}")
        if append:  # a commit killed between the two renames of a folder swap left no meta/: put it back
            atomic.recover_folder(os.path.join(root, META_DIR))
        appending = check_output(root, "lerobot", schema, append, read_schema)
        self.root, self.schema = root, schema
        self.episodes_per_file, self.vcodec, self.crf = episodes_per_file, vcodec, crf
        self._video_keys = [image_key(c) for c in schema.cameras]
        self._kinds = ["data", "meta"] + self._video_keys
        if appending:
            self._resume()
        else:
            self._start()
        self._types = _arrow_types(self.info["features"])

    # ------------------------------------------------------------------ state
    def _start(self) -> None:
        self.info = {"codebase_version": CODEBASE_VERSION, "robot_type": self.schema.robot_type, "total_episodes": 0,
                     "total_frames": 0, "total_tasks": 0, "chunks_size": CHUNKS_SIZE,
                     "data_files_size_in_mb": DATA_FILES_SIZE_IN_MB, "video_files_size_in_mb": VIDEO_FILES_SIZE_IN_MB,
                     "fps": self.schema.fps, "splits": {}, "data_path": DATA_PATH,
                     "video_path": VIDEO_PATH if self._video_keys else None, "features": features_of(self.schema)}
        self.tasks: list[str] = []
        self.dataset_stats: Optional[dict] = None
        self._open_files({})
        os.makedirs(self.root, exist_ok=True)
        with atomic.FolderSwap(os.path.join(self.root, META_DIR)) as meta:  # a valid dataset of 0 episodes
            for rel, obj in ((ENV_PATH, self.schema.to_json()), (INFO_PATH, self.info)):
                with meta.write(_rel(rel)) as path:
                    _write_json(path, obj)
            meta.commit()

    def _resume(self) -> None:
        atomic.recover_folder(os.path.join(self.root, META_DIR))
        atomic.remove_stale_temporaries(self.root)
        self.info = load_json(self.root, INFO_PATH)
        trim_uncommitted(self.root, self.info)
        rows = committed_episode_rows(self.root, self.info)
        self.tasks = read_tasks(self.root)
        self.dataset_stats = committed_stats(self.root, self.info) if rows else None  # stats.json may be a commit ahead
        files = {}
        if rows:  # as LeRobot does when it resumes: every kind of file moves on to a new file
            last = rows[-1]
            files = {"data": next_file(last["data/chunk_index"], last["data/file_index"]),
                     "meta": next_file(last["meta/episodes/chunk_index"], last["meta/episodes/file_index"])}
            for key in self._video_keys:
                files[key] = next_file(last[f"videos/{key}/chunk_index"], last[f"videos/{key}/file_index"])
        self._open_files(files)

    def _open_files(self, files: dict) -> None:
        """Per kind ("data", "meta", each video key): the current (chunk, file), empty."""
        self._files = {k: files.get(k, (0, 0)) for k in self._kinds}
        self._counts = {k: 0 for k in self._kinds}  # episodes in the current file
        self._frames_in = {k: 0 for k in self._kinds}  # frames in the current file
        self._tables = {"data": None, "meta": None}  # the current parquet files' content

    @property
    def num_episodes(self) -> int:
        """Episodes written so far (``meta/info.json``'s ``total_episodes``)."""
        return int(self.info["total_episodes"])

    @property
    def num_frames(self) -> int:
        """Frames written so far, all episodes together (``total_frames``)."""
        return int(self.info["total_frames"])

    # ------------------------------------------------------------------ writing
    def add(self, episode: Episode) -> int:
        """Commit ``episode``; returns its episode index. See ``add_many``."""
        return self.add_many([episode])[0]

    def add_many(self, episodes: Sequence[Episode]) -> list[int]:
        """Commit ``episodes`` together (atomically, see ``lerobot.py``); returns their indices.

        Raises:
            SchemaMismatchError: an episode's state, action or image shapes differ from the
                schema (checked before anything is written).
            DatasetWriteError: a file could not be written (full disk, ...); the dataset still
                holds every episode committed before, and none of these.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        frames = [self._frames(ep) for ep in episodes]
        if not episodes:
            return []
        saved = (dict(self._files), dict(self._counts), dict(self._frames_in), dict(self._tables))
        first = self.num_episodes
        staged: dict = {}  # path -> ("parquet", table) | ("video", [parts])
        temporaries: list[str] = []
        try:
            tasks = self.tasks if self.schema.task in self.tasks else self.tasks + [self.schema.task]
            total = self.dataset_stats
            frame_count = self.num_frames
            meta_rows = []
            for offset, (episode, ep_frames) in enumerate(zip(episodes, frames)):
                index, length = first + offset, episode.length
                row = {"episode_index": index, "tasks": [self.schema.task], "length": length}
                for key in self._video_keys:
                    row.update(self._stage_video(key, index, ep_frames[key], staged, temporaries))
                columns = {"observation.state": ep_frames["observation.state"], "action": ep_frames["action"]}
                if self.schema.next_features:
                    columns.update({"next.reward": episode.rewards.astype(np.float32),
                                    "next.done": (episode.terminated | episode.truncated).astype(bool),
                                    "next.success": episode.success.astype(bool)})
                columns.update({
                    "timestamp": (np.arange(length) / self.schema.fps).astype(np.float32),
                    "frame_index": np.arange(length, dtype=np.int64), "episode_index": np.full(length, index, np.int64),
                    "index": np.arange(frame_count, frame_count + length, dtype=np.int64),
                    "task_index": np.full(length, tasks.index(self.schema.task), np.int64)})
                table = pa.table({k: _arrow_column(v, self._types[k]) for k, v in columns.items()})
                row.update(self._stage_parquet("data", table, staged))
                row.update(dataset_from_index=frame_count, dataset_to_index=frame_count + length)
                episode_stats = {k: stats.vector_stats(v) for k, v in columns.items()}
                episode_stats.update({k: stats.image_stats(ep_frames[k]) for k in self._video_keys})
                row.update({f"stats/{f}/{s}": v for f, d in episode_stats.items() for s, v in d.items()})
                row.update(seed=int(episode.seed), success=episode.succeeded,
                           provenance=json.dumps(episode.provenance, sort_keys=True))
                meta_rows.append(row)
                total = episode_stats if total is None else stats.aggregate([total, episode_stats])
                frame_count += length
            for row in meta_rows:
                row.update(self._stage_parquet("meta", _meta_table([row]), staged, meta=True))
            self._flush({p: c for p, c in staged.items() if not _is_meta(self.root, p)})
            atomic.sync_folders([p for p in staged if not _is_meta(self.root, p)])  # durable before the commit
            info = dict(self.info, total_episodes=first + len(episodes), total_frames=frame_count,
                        total_tasks=len(tasks), splits={"train": f"0:{first + len(episodes)}"})
            with atomic.FolderSwap(os.path.join(self.root, META_DIR)) as meta:  # the commit: meta/ whole
                for path, (_, table) in staged.items():
                    if _is_meta(self.root, path):
                        with meta.write(os.path.relpath(path, os.path.join(self.root, META_DIR))) as target:
                            pq.write_table(table, target, **PARQUET_OPTIONS)
                if tasks is not self.tasks:
                    with meta.write(_rel(TASKS_PATH)) as target:
                        write_tasks(target, tasks)
                with meta.write(_rel(STATS_PATH)) as target:
                    _write_json(target, stats.to_json(total), indent=None)
                with meta.write(_rel(INFO_PATH)) as target:
                    _write_json(target, info)
                meta.commit()
        except OSError as error:
            self._files, self._counts, self._frames_in, self._tables = saved
            for key in self._video_keys:  # a video file may now end with frames of these episodes: move on
                if self._counts[key]:
                    self._files[key], self._counts[key], self._frames_in[key] = next_file(*self._files[key]), 0, 0
            raise DatasetWriteError(f"could not write episodes {first}..{first + len(episodes) - 1} to {self.root}: "
                                    f"{error}; the dataset holds the {first} episodes written before, complete") from error
        finally:
            for path in temporaries:
                if os.path.exists(path):
                    os.unlink(path)
        self.info, self.tasks, self.dataset_stats = info, tasks, total
        return list(range(first, first + len(episodes)))

    def close(self) -> None:
        """Nothing is pending once ``add`` returns; here for the writers' common interface."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ pieces
    def _frames(self, episode: Episode) -> dict:
        """The episode's frame arrays (t = 0 .. T-1), checked against the schema."""
        episode.check()
        length = episode.length
        state = episode.state_vector()[:length]
        out = {"observation.state": state, "action": episode.actions.astype(np.float32)}
        problems = []
        if state.shape[1] != self.schema.state_dim:
            problems.append(f"observation.state has {state.shape[1]} columns, the dataset {self.schema.state_dim}")
        if out["action"].shape[1] != self.schema.action_dim:
            problems.append(f"action has {out['action'].shape[1]} columns, the dataset {self.schema.action_dim}")
        images = episode.rgb()
        for cam, shape in self.schema.cameras.items():
            frames = images.get(self.schema.env_camera(cam))
            if frames is None or tuple(frames.shape[1:]) != tuple(shape) or frames.dtype != np.uint8:
                got = None if frames is None else f"{frames.dtype} {tuple(frames.shape[1:])}"
                problems.append(f"camera {cam!r}: expected uint8 {tuple(shape)} images, got {got}")
            else:
                out[image_key(cam)] = frames[:length]
        if problems:
            raise SchemaMismatchError(f"episode (seed {episode.seed}) does not fit {self.root}: " + "; ".join(problems))
        return out

    def _path(self, kind: str) -> str:
        chunk, file = self._files[kind]
        if kind == "data":
            return os.path.join(self.root, DATA_PATH.format(chunk_index=chunk, file_index=file))
        if kind == "meta":
            return os.path.join(self.root, EPISODES_PATH.format(chunk_index=chunk, file_index=file))
        return os.path.join(self.root, VIDEO_PATH.format(video_key=kind, chunk_index=chunk, file_index=file))

    def _advance(self, kind: str, limit_mb: int, staged: dict) -> None:
        """Move ``kind`` to a new file when its current one is full (episodes or size on disk)."""
        if self._counts[kind] == 0:
            return
        path = self._path(kind)
        size = os.path.getsize(path) if os.path.exists(path) and path not in staged else 0
        if self._counts[kind] >= self.episodes_per_file or size >= limit_mb * 1024 * 1024:
            self._files[kind], self._counts[kind], self._frames_in[kind] = next_file(*self._files[kind]), 0, 0
            if kind in self._tables:
                self._tables[kind] = None

    def _stage_parquet(self, kind: str, table, staged: dict, meta: bool = False) -> dict:
        import pyarrow as pa

        self._advance(kind, DATA_FILES_SIZE_IN_MB, staged)
        chunk, file = self._files[kind]
        if meta:
            table = table.set_column(table.schema.get_field_index("meta/episodes/chunk_index"),
                                     "meta/episodes/chunk_index", pa.array([chunk], pa.int64()))
            table = table.set_column(table.schema.get_field_index("meta/episodes/file_index"),
                                     "meta/episodes/file_index", pa.array([file], pa.int64()))
        current = self._tables[kind]
        # promote: episodes written before a column existed (``provenance``) read it as null
        self._tables[kind] = table if current is None else pa.concat_tables([current, table], promote_options="default")
        self._counts[kind] += 1
        staged[self._path(kind)] = ("parquet", self._tables[kind])
        if meta:
            return {"meta/episodes/chunk_index": chunk, "meta/episodes/file_index": file}
        return {"data/chunk_index": chunk, "data/file_index": file}

    def _stage_video(self, key: str, index: int, frames: np.ndarray, staged: dict, temporaries: list) -> dict:
        self._advance(key, VIDEO_FILES_SIZE_IN_MB, staged)
        path = self._path(key)
        part = f"{atomic.temporary_path(path)}.episode{index}"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporaries.append(part)
        video.encode(part, frames, self.schema.fps, self.vcodec, self.crf)
        if path not in staged:
            staged[path] = ("video", [path] if self._frames_in[key] else [])
        staged[path][1].append(part)
        chunk, file = self._files[key]
        start = self._frames_in[key]
        self._frames_in[key] += len(frames)
        self._counts[key] += 1
        return {f"videos/{key}/chunk_index": chunk, f"videos/{key}/file_index": file,
                f"videos/{key}/from_timestamp": video.duration_s(start, self.schema.fps),
                f"videos/{key}/to_timestamp": video.duration_s(self._frames_in[key], self.schema.fps)}

    def _flush(self, staged: dict) -> None:
        """Write every staged video and data file atomically in place: videos first, then data."""
        import pyarrow.parquet as pq

        order = sorted(staged, key=lambda p: (staged[p][0] != "video", p))
        for path in order:
            kind, content = staged[path]
            with atomic.atomic_path(path, sync_folder=False) as tmp:
                if kind == "parquet":
                    pq.write_table(content, tmp, **PARQUET_OPTIONS)
                elif len(content) == 1:
                    os.replace(content[0], tmp)
                else:
                    video.concatenate(tmp, content)
        for key in self._video_keys:
            features = self.info["features"][key]
            if "info" not in features and os.path.exists(self._path(key)):
                features["info"] = video.video_info(self._path(key), self.vcodec, self.crf)


def _rel(path: str) -> str:
    """A ``meta/...`` layout path relative to the ``meta`` folder."""
    return os.path.relpath(path, META_DIR)


def _is_meta(root: str, path: str) -> bool:
    return os.path.commonpath([os.path.abspath(path), os.path.abspath(os.path.join(root, META_DIR))]) == \
        os.path.abspath(os.path.join(root, META_DIR))


def _write_json(path: str, obj, indent=4) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")


def _arrow_types(features: dict) -> dict:
    import pyarrow as pa

    types = {}
    for key, ft in features.items():
        if ft["dtype"] == "video":
            continue
        base = {"float32": pa.float32(), "float64": pa.float64(), "int64": pa.int64(), "bool": pa.bool_()}[ft["dtype"]]
        types[key] = base if list(ft["shape"]) == [1] else pa.list_(base, int(ft["shape"][0]))
    return types


def _arrow_column(values: np.ndarray, arrow_type):
    """A parquet column: scalars for (1,) features, ``fixed_size_list`` rows for (D,) ones."""
    import pyarrow as pa

    if isinstance(arrow_type, pa.FixedSizeListType):
        flat = np.ascontiguousarray(values, dtype=arrow_type.value_type.to_pandas_dtype()).reshape(-1)
        return pa.FixedSizeListArray.from_arrays(pa.array(flat, arrow_type.value_type), arrow_type.list_size)
    return pa.array(np.asarray(values).reshape(-1), arrow_type)


def _nested_list(values: np.ndarray):
    """``list<...<double>>`` rows from a ``(rows, *shape)`` array (what ``pa.Table.from_pydict``
    infers from LeRobot's ``ndarray.tolist()`` stats, built without Python lists)."""
    import pyarrow as pa

    inner = pa.array(np.ascontiguousarray(values).reshape(-1))
    for size in reversed(values.shape[1:]):
        count = len(inner) // size
        inner = pa.ListArray.from_arrays(pa.array(np.arange(count + 1, dtype=np.int32) * size), inner)
    return inner


def _meta_table(rows: list[dict]):
    """The episode-metadata rows as an arrow table (stats columns as nested lists)."""
    import pyarrow as pa

    columns = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        if isinstance(values[0], np.ndarray):
            columns[key] = _nested_list(np.stack(values))
        elif key == "tasks":
            columns[key] = pa.array(values, pa.list_(pa.string()))
        elif isinstance(values[0], bool):
            columns[key] = pa.array(values, pa.bool_())
        elif isinstance(values[0], str):
            columns[key] = pa.array(values, pa.string())
        elif isinstance(values[0], (int, np.integer)):
            columns[key] = pa.array(values, pa.int64())
        else:
            columns[key] = pa.array(values, pa.float64())
    columns.setdefault("meta/episodes/chunk_index", pa.array([0] * len(rows), pa.int64()))
    columns.setdefault("meta/episodes/file_index", pa.array([0] * len(rows), pa.int64()))
    return pa.table(columns)
