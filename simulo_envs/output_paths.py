"""Output paths of the scripts and recorders, checked writable before any work.

``check_output_dir`` / ``check_output_file`` try what the program will do later (create the
folder's missing parents, create a file in it) and remove what they made, so a read-only folder,
a full or read-only file system or a path through a file is refused at once, with the path and
the operating system's reason, before minutes of work (file permissions alone would not do: they
let root write anywhere). What is made when missing: a folder option's folder with its parents;
a file option's folder only in an existing folder; no new folder at the file system's root.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import tempfile
from typing import Iterable

__all__ = ["error_line", "OutputError", "check_output_dir", "check_output_file", "check_not_foreign_dir",
           "missing_folders", "remove_empty_folders"]


class OutputError(ValueError):
    """An output path cannot be written; the message names the path and why."""


def check_output_dir(path: str, what: str = "output folder", parents: bool = True) -> str:
    """Check that files can be created in folder ``path``. A missing ``path`` is made later: with
    its missing parents (``parents``: the folder options, ``--log-dir``, ``--video-dir``,
    ``--out``), else only when the folder above it exists (a file's folder: ``check_output_file``);
    never a new folder at the file system's root (``/nonexistent/dir``: a typo, or a disk not
    mounted). Nothing is left behind. Returns ``path``.

    Raises:
        OutputError: naming ``what``, the path and the reason: a file in the way, a missing folder
            that would not be made, a folder that exists but is not writable (no permission, a
            read-only or virtual file system such as ``/proc``).
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise OutputError(f"{what}: expected a folder path, got {path!r}")
    path = os.fspath(path)
    existing, missing = os.path.abspath(path), []
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        missing.append(existing)
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise OutputError(f"cannot write {what} {path!r}: {existing!r} is a file, not a folder")
    if missing and os.path.dirname(existing) == existing:
        raise OutputError(f"cannot write {what} {path!r}: {missing[-1]!r} does not exist, and no folder is made "
                          f"at the file system's root: create it first if it is meant")
    if len(missing) > 1 and not parents:
        raise OutputError(f"cannot write {what} {path!r}: {missing[-1]!r} does not exist (a file's folder is made "
                          f"only in an existing folder): create it first if it is meant")
    try:
        with tempfile.TemporaryDirectory(dir=existing, prefix=".write-check-"):
            pass   # making (and removing) a folder there is what creating path's missing folders needs
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".write-check-"):
            pass
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.EPERM):   # a folder that exists, of a virtual file system (/proc, /sys)
            where = "it" if existing == os.path.abspath(path) else repr(existing)
            raise OutputError(f"cannot write {what} {path!r}: {where} is not writable") from None
        raise OutputError(f"cannot write {what} {path!r}: {error.strerror or error}") from None
    return path


def check_not_foreign_dir(path: str, run_patterns: Iterable[str], what: str) -> None:
    """Refuse a folder that already holds files or folders and none a run of this kind writes
    (names matching ``run_patterns``, shell-style), so a training never mixes its files into a
    dataset, a source tree or someone's notes. Hidden names (``.DS_Store``) do not count. A
    missing or empty folder passes, and so does one holding a run (which the caller judges).

    Raises:
        OutputError: naming ``what``, the path and up to 4 of the names found.
    """
    if not os.path.isdir(path):
        return
    names = sorted(name for name in os.listdir(path) if not name.startswith("."))
    if names and not any(fnmatch.fnmatch(name, pattern) for name in names for pattern in run_patterns):
        listed = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        raise OutputError(f"{what} {path!r} holds something else than a training ({listed}): choose a new or "
                          f"empty folder")


def check_output_file(path: str, what: str = "output file") -> str:
    """Check that file ``path`` can be written (created, or replaced if it exists; its folder made
    if missing, when the folder above it exists: ``check_output_dir`` with ``parents=False``).
    Nothing is changed. Returns ``path``.

    Raises:
        OutputError: naming ``what``, the path and the reason.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise OutputError(f"{what}: expected a file path, got {path!r}")
    path = os.fspath(path)
    if os.path.isdir(path):
        raise OutputError(f"cannot write {what} {path!r}: it is a folder")
    check_output_dir(os.path.dirname(os.path.abspath(path)), what=f"{what} {path!r}: its folder", parents=False)
    if os.path.exists(path):
        try:
            with open(path, "r+b"):
                pass
        except OSError as error:
            raise OutputError(f"cannot write {what} {path!r}: {error.strerror or error}") from None
    return path


def missing_folders(path: str) -> list[str]:
    """The folders that making folder ``path`` (with its parents) would create: ``path`` and its
    missing parents, deepest first, as absolute paths; ``[]`` when it exists. Taken before a run,
    they let ``remove_empty_folders`` take back what a run stopped midway made and left empty."""
    folders = []
    folder = os.path.abspath(path)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folders.append(folder)
        folder = os.path.dirname(folder)
    return folders


def remove_empty_folders(folders: Iterable[str]) -> None:
    """Remove each of ``folders`` (deepest first, as ``missing_folders`` lists them) that exists
    and is empty; stop at the first that holds something (it and its parents stay)."""
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        try:
            os.rmdir(folder)
        except OSError:   # not empty (or not ours to remove): it and its parents stay
            return


def error_line(error: BaseException) -> str:
    """An exception as the one line a script prints for it: an ``OSError`` by its reason and file
    (its first argument is the error number: ``"No such file or directory: /proc/ds"``, not ``"2"``),
    any other by its first argument (its message), or its repr when it has none."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror + (f": {error.filename}" if error.filename else "")
    return str(error.args[0]) if error.args else repr(error)
