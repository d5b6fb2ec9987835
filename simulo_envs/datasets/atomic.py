"""Atomic file writes: a file is either its old content or its new content, never a mix.

Every dataset file is written as a temporary file beside its target (``.<name>.tmp-<pid>``,
same folder, so the same file system), flushed to the disk (``os.fsync``), renamed over the
target (``os.replace``, atomic on POSIX) and the folder is synced so the rename itself
survives a power cut. When the write fails (a full disk, an interrupt), the temporary file is
removed and the target keeps its old content; the error is raised unchanged.

Temporary names start with a dot and end in ``.tmp-<pid>``: LeRobot's loader (``*/*.parquet``)
and ManiSkill's tools never pick them up. ``remove_stale_temporaries`` deletes the ones a
killed writer left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Iterator

TMP_MARK = ".tmp-"


def temporary_path(path: str) -> str:
    """The temporary name ``path`` is written under before its rename."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}{TMP_MARK}{os.getpid()}")


def fsync_path(path: str) -> None:
    """Flush ``path`` (a file or a folder) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str, sync_folder: bool = True) -> Iterator[str]:
    """Yield a temporary path to write ``path``'s new content to; on a clean exit it is synced
    and renamed over ``path``, on an exception it is deleted and ``path`` is left as it was.
    The parent folder is created when missing. ``sync_folder=False`` leaves the folder's sync
    (which makes the rename itself durable) to a later ``sync_folders``, once for many files."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = temporary_path(path)
    try:
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, path)
        if sync_folder:
            fsync_path(folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def sync_folders(paths) -> None:
    """``fsync`` each folder of ``paths`` (folders, or files whose folder is meant), once each."""
    for folder in sorted({p if os.path.isdir(p) else os.path.dirname(p) for p in paths}):
        fsync_path(folder)


def write_bytes(path: str, data: bytes, sync_folder: bool = True) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path, sync_folder) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(data)


def write_json(path: str, obj, indent=4, sync_folder: bool = True) -> None:
    """Write ``obj`` as UTF-8 JSON (``indent`` as ``json.dumps``; None: compact, the fast
    encoder) to ``path`` atomically."""
    write_bytes(path, (json.dumps(obj, indent=indent, ensure_ascii=False) + "\n").encode("utf-8"), sync_folder)


def remove_stale_temporaries(root: str) -> int:
    """Delete the temporary files a killed writer left under ``root``; returns how many."""
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if name.startswith(".") and TMP_MARK in name:
                os.unlink(os.path.join(folder, name))
                count += 1
    return count
