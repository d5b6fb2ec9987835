"""Atomic file writes: a file is either its old content or its new content, never a mix.

Every dataset file is written as a temporary file beside its target (``.<name>.tmp-<pid>``,
same folder, so the same file system), flushed to the disk (``os.fsync``), renamed over the
target (``os.replace``, atomic on POSIX) and the folder is synced so the rename itself
survives a power cut. When the write fails (a full disk, an interrupt), the temporary file is
removed and the target keeps its old content; the error is raised unchanged.

A folder of files that must change together (a LeRobot dataset's ``meta/``) is replaced whole
(``FolderSwap``): its next version is built beside it (``.<name>.tmp-<pid>``, unchanged files
hard-linked, changed ones written anew), synced, and exchanged with it in one rename
(``renameat2(..., RENAME_EXCHANGE)``, Linux 3.15+, glibc 2.28+), so a reader opening files of the
folder sees every file of the old version or every file of the new one. Where the file system
cannot exchange (another OS, a file system without it), the old folder is renamed away first and
the new one into place: a reader in between finds no folder (an error, never a mix), and a
writer killed in between leaves both versions, which ``recover_folder`` puts back.

Temporary names start with a dot and end in ``.tmp-<pid>``: LeRobot's loader (``*/*.parquet``)
and ManiSkill's tools never pick them up. ``remove_stale_temporaries`` deletes the ones a
killed writer left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
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
    """Delete the temporary files and folders a killed writer left under ``root`` (after
    ``recover_folder`` has put back a folder caught between two renames); returns how many."""
    count = 0
    for folder, dirs, names in os.walk(root):
        for name in list(dirs):
            if name.startswith(".") and TMP_MARK in name:
                shutil.rmtree(os.path.join(folder, name))
                dirs.remove(name)
                count += 1
        for name in names:
            if name.startswith(".") and TMP_MARK in name:
                os.unlink(os.path.join(folder, name))
                count += 1
    return count


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.EXDEV, errno.EPERM, getattr(errno, "ENOTSUP", errno.EINVAL)}


def exchange(a: str, b: str) -> bool:
    """Swap the paths ``a`` and ``b`` (both existing) in one atomic rename; False when this
    system or file system cannot (nothing changed then).

    Raises:
        OSError: the exchange failed for another reason (a missing path, ...).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), a)


def _sibling(path: str, tag: str) -> str:
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.{tag}{TMP_MARK}{os.getpid()}")


class FolderSwap:
    """The next version of the folder ``target``, replacing it whole on ``commit`` (module
    docstring). Every file of ``target`` starts out hard-linked (copied where links are not
    possible) into the staging folder; ``write(rel)`` hands out a fresh path to write a new or
    changed file (the link is removed first, so the live file is never written through it).

    Use as a context manager: an exception before ``commit`` removes the staging folder and
    leaves ``target`` untouched.
    """

    def __init__(self, target: str):
        self.target = os.path.abspath(target)
        self.stage = _sibling(self.target, "next")
        self.written: list[str] = []
        shutil.rmtree(self.stage, ignore_errors=True)
        if os.path.isdir(self.target):
            shutil.copytree(self.target, self.stage, copy_function=_link_or_copy)
        else:
            os.makedirs(self.stage)

    @contextlib.contextmanager
    def write(self, rel: str) -> Iterator[str]:
        """Yield the staging path of ``rel`` (relative to the folder), ready to be written anew;
        an exception propagates (the swap is then abandoned by ``__exit__``)."""
        path = os.path.join(self.stage, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.written.append(path)
        yield path

    def commit(self) -> None:
        """Sync what was written and put the staging folder in ``target``'s place, atomically
        where the file system can exchange two paths."""
        for path in self.written:
            fsync_path(path)
        for folder, dirs, _ in os.walk(self.stage, topdown=False):
            fsync_path(folder)
        parent = os.path.dirname(self.target)
        if os.path.isdir(self.target) and exchange(self.stage, self.target):
            shutil.rmtree(self.stage)  # the old version, now at the staging name
        else:
            old = _sibling(self.target, "old")
            if os.path.isdir(self.target):
                os.replace(self.target, old)
            os.replace(self.stage, self.target)
            shutil.rmtree(old, ignore_errors=True)
        fsync_path(parent)

    def __enter__(self) -> "FolderSwap":
        return self

    def __exit__(self, kind, *_):
        if kind is not None:
            shutil.rmtree(self.stage, ignore_errors=True)


def interrupted_swap(target: str) -> list:
    """The versions of the folder ``target`` that a ``FolderSwap`` killed between its two renames
    left beside it while ``target`` itself is missing (empty otherwise)."""
    target = os.path.abspath(target)
    folder, name = os.path.split(target)
    if os.path.isdir(target) or not os.path.isdir(folder):
        return []
    return sorted(n for n in os.listdir(folder) if n.startswith(f".{name}.") and TMP_MARK in n)


def recover_folder(target: str) -> bool:
    """Put a folder back that a writer killed between the two renames of a ``FolderSwap``
    without exchange left missing: its next version (complete: it was synced before the first
    rename) if there is one, else its old one. Returns whether anything was done."""
    target = os.path.abspath(target)
    if os.path.isdir(target):
        return False
    folder, name = os.path.split(target)
    if not os.path.isdir(folder):
        return False
    for tag in ("next", "old"):
        found = sorted(n for n in os.listdir(folder) if n.startswith(f".{name}.{tag}{TMP_MARK}"))
        if found:
            os.replace(os.path.join(folder, found[-1]), target)
            fsync_path(folder)
            return True
    return False


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
