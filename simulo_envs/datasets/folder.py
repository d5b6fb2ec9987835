"""Output folders of the dataset writers: what a folder holds and whether it may be written.

A writer's folder may be missing or empty (a new dataset), or hold a dataset of the same format
and schema when appending is asked for. Anything else is refused before the first write:
a file, a folder holding other things ("not a dataset"), a dataset of the other format, a
dataset when appending was not asked for, a dataset of another schema.
"""

from __future__ import annotations

import os
from typing import Callable, Optional

from simulo_envs.datasets.errors import DatasetExistsError, SchemaMismatchError
from simulo_envs.datasets import atomic
from simulo_envs.datasets.schema import DatasetSchema
from simulo_envs.output_paths import OutputError, check_output_dir

LEROBOT_MARK = os.path.join("meta", "info.json")
HDF5_MARK = "trajectory.json"


def detect_format(path: str) -> Optional[str]:
    """``"lerobot"`` (``meta/info.json``, or a ``meta/`` caught between the two renames of a
    folder swap: ``atomic.interrupted_swap``), ``"hdf5"`` (``trajectory.json``) or None."""
    if os.path.isfile(os.path.join(path, LEROBOT_MARK)) or atomic.interrupted_swap(os.path.join(path, "meta")):
        return "lerobot"
    if os.path.isfile(os.path.join(path, HDF5_MARK)):
        return "hdf5"
    return None


def check_output(path: str, fmt: str, schema: DatasetSchema, append: bool,
                 read_schema: Callable[[str], DatasetSchema]) -> bool:
    """Decide how a writer of format ``fmt`` may use ``path``; returns True to append to the
    dataset there, False to start a new one. Writes nothing.

    Raises:
        DatasetExistsError: ``path`` is a file or lies under one, a folder that is not a dataset,
            a dataset of the other format, or a dataset while ``append`` is False.
        SchemaMismatchError: ``append`` to a dataset of another schema (the differences listed).
        DatasetLayoutError: (from ``read_schema``) the dataset there is damaged.
        PermissionError: the folder (or its parent) cannot be written (said as the other
            outputs say it: ``output_paths.check_output_dir``).
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise DatasetExistsError(f"{path} is a file, not a dataset folder; nothing was written")
    if not os.path.isdir(path) or not os.listdir(path):
        parent = path if os.path.isdir(path) else _existing_parent(path)
        if not os.path.isdir(parent):
            raise DatasetExistsError(f"cannot write a dataset to {path}: {parent} is a file, not a folder; "
                                     "nothing was written")
        _check_writable(path)
        return False
    found = detect_format(path)
    if found is None:
        raise DatasetExistsError(f"{path} exists and is not a dataset (it holds {_sample(path)}); choose a new or "
                                 "empty folder; nothing was written")
    if found != fmt:
        raise DatasetExistsError(f"{path} holds a {found} dataset; this writer writes {fmt}; nothing was written")
    existing = read_schema(path)
    if not append:
        raise DatasetExistsError(f"{path} already holds a {fmt} dataset of {existing.env_id}; pass --append "
                                 "(append=True) to add episodes to it, or choose a new folder; nothing was written")
    differences = existing.differences(schema)
    if differences:
        raise SchemaMismatchError(f"{path} holds episodes of another schema; cannot append: "
                                  + "; ".join(differences) + " (dataset != new episodes); nothing was written")
    _check_writable(path)
    return True


def _check_writable(path: str) -> None:
    """Try what the writer will do (``output_paths.check_output_dir``: create the folder's parents
    and a file in it), so a read-only or special file system is refused before the first write, in
    the words the other outputs use: ``cannot write dataset folder '<path>': <the system's reason>``."""
    try:
        check_output_dir(path, "dataset folder")
    except OutputError as error:
        raise PermissionError(f"{error}; nothing was written") from None


def _existing_parent(path: str) -> str:
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    return parent


def _sample(path: str) -> str:
    names = sorted(os.listdir(path))
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return shown
