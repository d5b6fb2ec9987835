"""The sections of ``scripts/benchmark.py``, one module each.

A section module defines:

- ``NAME``: its key in the ``--json`` report;
- ``USAGE``: its lines in ``benchmark.py --help`` (flag, then what it measures);
- ``add_arguments(parser)``: its command-line flags;
- ``requested(args)``: True when the command line asks for it;
- ``run(args)``: measure (each measurement in a subprocess, ``common.run_worker``), print its
  table, return its rows;
- ``MEASUREMENTS``: ``{kind: function(args) -> result}``, what ``benchmark.py --worker kind`` runs
  in the subprocess (the result is printed as JSON).

Adding a section: a new module here, and its name in ``SECTION_NAMES``. The ManiSkill table
(``maniskill``) is not in the list: it runs when no section is asked for.
"""

from __future__ import annotations

import importlib

SECTION_NAMES = ("workers", "raw", "stages", "contacts", "isolation", "render", "tasks", "limits", "visual_dr")
"""The sections a command line can ask for, in the order they run and appear in the report."""

DEFAULT = importlib.import_module(f"{__name__}.maniskill")
SECTIONS = tuple(importlib.import_module(f"{__name__}.{name}") for name in SECTION_NAMES)


def measurements() -> dict:
    """Every subprocess measurement kind (``--worker``) of every section -> its function."""
    out = dict(DEFAULT.MEASUREMENTS)
    for section in SECTIONS:
        out.update(section.MEASUREMENTS)
    return out
