"""Helpers for the tests that run ``scripts/*.py`` in-process and read the run folders they write."""

from __future__ import annotations

import csv
import importlib.util
import os

from simulo_envs.training.run_files import PROGRESS_COLUMNS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name: str):
    """``scripts/<name>.py`` imported as a module (its ``main`` is then callable with an argv list)."""
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table(log_dir) -> list[dict]:
    """The rows of ``log_dir/progress.csv``, after checking its header is ``PROGRESS_COLUMNS``."""
    with open(os.path.join(log_dir, "progress.csv"), newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames) == PROGRESS_COLUMNS
        return list(reader)
