"""A training's log folder, never shared by two runs, and the files a run writes there.

Output paths are checked writable before any work (``check_output_dir`` / ``check_output_file``,
from ``simulo_envs.output_paths``, importable from here too).

A training's folder: ``run_files_in(log_dir)`` lists what an earlier run left there (checkpoints,
``progress.csv``, ``run.json``, TensorBoard events, evaluations); ``claim_log_dir`` refuses such
a folder unless the user continues that run (``--resume``) or deletes it first (``--overwrite``,
``delete_run_files``), so a plot never draws two runs as one.
"""

from __future__ import annotations

import csv
import fnmatch
import json
import os
import re
from typing import Optional

from simulo_envs.output_paths import OutputError, check_not_foreign_dir, check_output_dir, check_output_file

__all__ = ["OutputError", "check_output_dir", "check_output_file", "RUN_FILE_PATTERNS", "run_files_in",
           "CHECKPOINT_PATTERNS", "claim_log_dir", "unsaved_run_note", "delete_run_files", "free_numbered_dir",
           "latest_checkpoint", "PROGRESS_COLUMNS", "open_progress_csv", "progress_row", "write_json",
           "drop_stale_evaluation"]

RUN_FILE_PATTERNS = ("run.json", "progress.csv", "model_*.pt", "model.zip", "events.out.tfevents.*",
                     "evaluation.json", "evaluations.csv", "eval.json")
"""Files a training run (``scripts/train.py``, ``scripts/train_sb3.py``) or its evaluation writes
into its log folder."""


def run_files_in(log_dir: str) -> list[str]:
    """The names of the files an earlier run left in ``log_dir``, in ``RUN_FILE_PATTERNS`` order
    (sorted within a pattern); ``[]`` for a missing or empty folder."""
    if not os.path.isdir(log_dir):
        return []
    names = sorted(os.listdir(log_dir))
    return [name for pattern in RUN_FILE_PATTERNS for name in names if fnmatch.fnmatch(name, pattern)]


def free_numbered_dir(log_dir: str) -> str:
    """The first of ``log_dir-2``, ``log_dir-3``, ... that holds no run."""
    base = log_dir.rstrip("/\\")
    k = 2
    while run_files_in(f"{base}-{k}") or os.path.isfile(f"{base}-{k}"):
        k += 1
    return f"{base}-{k}"


CHECKPOINT_PATTERNS = ("model_*.pt", "model.zip")
"""The files that make a log folder's run resumable (``train.py``'s checkpoints, ``train_sb3.py``'s model)."""


def claim_log_dir(log_dir: str, resume: bool = False, overwrite: bool = False) -> list[str]:
    """Check that ``log_dir`` can be this training's folder: writable, and free of an earlier
    run unless this run continues it (``resume``) or will delete it (``overwrite``). An earlier
    run that saved no checkpoint (stopped before its first iteration ended: ``run.json`` and an
    empty log) holds nothing to continue or lose, so a new run takes its folder. Nothing is
    changed here. Returns the files the new run deletes (``delete_run_files``) once it is ready to
    write: the earlier run's with ``overwrite``, the leftovers of a run without a checkpoint, none
    when resuming.

    Raises:
        OutputError: the folder is not writable, holds files but none of a run
            (``output_paths.check_not_foreign_dir``), or holds an earlier run with a checkpoint and
            neither flag is set (the message names ``--resume``, ``--overwrite`` and a free
            numbered folder), or ``resume`` without a checkpoint to continue from.
        ValueError: both ``resume`` and ``overwrite``.
    """
    if resume and overwrite:
        raise ValueError("--resume continues the run in the log folder and --overwrite deletes it: give one")
    check_output_dir(log_dir, "log folder")
    check_not_foreign_dir(log_dir, RUN_FILE_PATTERNS, "log folder")
    earlier = run_files_in(log_dir)
    saved = [name for name in earlier if any(fnmatch.fnmatch(name, p) for p in CHECKPOINT_PATTERNS)]
    if resume and not earlier:
        raise OutputError(f"--resume: {log_dir!r} holds no earlier run to continue")
    if resume and not saved:
        raise OutputError(f"--resume: the run in {log_dir!r} stopped before its first iteration ended and saved "
                          f"no checkpoint: leave out --resume to start it again there (its {', '.join(earlier)} "
                          f"will be replaced)")
    if saved and not (resume or overwrite):
        listed = ", ".join(earlier[:4]) + (f" and {len(earlier) - 4} more" if len(earlier) > 4 else "")
        raise OutputError(f"{log_dir!r} holds an earlier run ({listed}): pass --resume to continue it, "
                          f"--overwrite to delete it and start again, or --log-dir {free_numbered_dir(log_dir)}")
    return [] if resume else earlier


def unsaved_run_note(log_dir: str, names: list[str], overwrite: bool) -> str:
    """The line a script prints when a new run takes a folder whose earlier run saved no checkpoint
    (``claim_log_dir`` returned its leftovers ``names``); ``""`` when there is nothing to say."""
    if overwrite or not names:
        return ""
    return (f"note: the earlier run in {log_dir} saved no checkpoint (it stopped before its first iteration "
            f"ended); this run starts there again and replaces its {', '.join(names)}")


def delete_run_files(log_dir: str, names: list[str]) -> None:
    """Delete the files ``names`` (from ``claim_log_dir``) in ``log_dir``.

    Raises:
        OutputError: one cannot be deleted (the message names it and why).
    """
    for name in names:
        path = os.path.join(log_dir, name)
        try:
            os.remove(path)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise OutputError(f"cannot delete {path!r}: {error.strerror or error}") from None


def latest_checkpoint(log_dir: str) -> Optional[str]:
    """The checkpoint a resumed run continues from: ``model_<iteration>.pt`` with the highest
    iteration, or ``model_final.pt`` when that is newer than all of them; None without one."""
    if not os.path.isdir(log_dir):
        return None
    numbered = []
    for name in os.listdir(log_dir):
        match = re.fullmatch(r"model_(\d+)\.pt", name)
        if match:
            numbered.append((int(match.group(1)), os.path.join(log_dir, name)))
    final = os.path.join(log_dir, "model_final.pt")
    candidates = [path for _, path in sorted(numbered)[-1:]]
    if os.path.isfile(final):
        candidates.append(final)
    if not candidates:
        return None
    return max(candidates, key=os.path.getmtime)


PROGRESS_COLUMNS = ("iteration", "env_steps", "wall_s", "episodes", "success_once", "success_at_end", "return",
                    "length", "collect_s", "learn_s")
"""``progress.csv``'s columns, one row per PPO iteration (both training scripts): the iteration's
index, env steps trained so far (all ranks), seconds since the first rollout, finished episodes so
far, the means over the last 100 finished episodes (empty while none finished), and the
iteration's seconds of rollout and of update."""


def open_progress_csv(path: str, keep_iterations: Optional[int] = None):
    """``(handle, csv writer)`` of ``progress.csv`` with its header written: a new file, or (a
    resumed training, ``keep_iterations`` = the iterations its checkpoint holds) the earlier file
    cut after that many iterations, so no row of a session that ended without saving is repeated."""
    kept = []
    if keep_iterations is not None and os.path.isfile(path):
        with open(path, newline="") as handle:
            rows = list(csv.reader(handle))
        if rows and tuple(rows[0]) == PROGRESS_COLUMNS:
            kept = [row for row in rows[1:] if row and int(row[0]) < keep_iterations]
    handle = open(path, "w", newline="")
    table = csv.writer(handle)
    table.writerow(PROGRESS_COLUMNS)
    table.writerows(kept)
    handle.flush()
    return handle, table


def progress_row(row: dict) -> list[str]:
    """A ``progress.csv`` row from a dict with ``PROGRESS_COLUMNS``' keys (None: unknown, empty)."""
    def cell(key: str) -> str:
        value = row[key]
        if value is None:
            return ""
        if key in ("iteration", "env_steps", "episodes"):
            return str(int(value))
        return f"{value:.1f}" if key == "wall_s" else f"{value:.3f}" if key.endswith("_s") else f"{value:.4f}"
    return [cell(key) for key in PROGRESS_COLUMNS]


def write_json(path: str, data, what: str = "output file") -> None:
    """Write ``data`` as JSON to file ``path``, checked first with ``check_output_file``.

    Raises:
        OutputError: naming ``what``, the path and the reason (also when the write fails).
    """
    check_output_file(path, what)
    try:
        with open(path, "w") as handle:
            json.dump(data, handle)
    except OSError as error:
        raise OutputError(f"cannot write {what} {path!r}: {error.strerror or error}") from None


def drop_stale_evaluation(log_dir: str) -> Optional[str]:
    """Delete ``log_dir/evaluation.json`` once a resumed session saved a newer checkpoint without
    evaluating it (the file described the model before). Returns the deleted path, or None.

    Raises:
        OutputError: it exists and cannot be deleted.
    """
    path = os.path.join(log_dir, "evaluation.json")
    if not os.path.isfile(path):
        return None
    delete_run_files(log_dir, ["evaluation.json"])
    return path
