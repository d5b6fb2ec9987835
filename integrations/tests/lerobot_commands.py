"""Running LeRobot's commands (``lerobot-record``, ``lerobot-train`` ...) from the LeRobot plugins'
tests (``integrations/*/tests``, whose ``conftest.py`` puts this folder on ``sys.path``), in the
test's process.

A command runs as its console script does, minus the interpreter start: the ``main`` that
LeRobot's ``console_scripts`` entry point names, with the command line in ``sys.argv``, from the
repository's root. Each new Python process that imports LeRobot, torch and SAPIEN costs seconds of
CPU; what these tests check is what the command does with the plugins. Plugin discovery by a fresh
process is tested on its own (``test_lerobot_finds_the_*_by_the_distribution_name``, one process for
all of them: ``plugin_discovery.py``).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import logging
import os
import sys
import traceback

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(name: str, *args: str) -> str:
    """Run LeRobot's command ``name`` (``lerobot-record`` ...) with ``args`` in this process, as
    its console script would; returns what it printed and logged. Fails the test with that output
    when the command raises or exits non-zero. The root logger (which the command configures)
    and the working directory are given back afterwards."""
    (entry,) = importlib.metadata.entry_points(group="console_scripts", name=name)
    main = entry.load()
    root = logging.getLogger()
    handlers, level, argv, cwd = list(root.handlers), root.level, sys.argv, os.getcwd()
    out = io.StringIO()
    failure = None
    try:
        sys.argv = [name, *args]
        os.chdir(REPO)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                main()
            except SystemExit as exit_info:
                if exit_info.code not in (None, 0):
                    failure = f"exited {exit_info.code}"
            except Exception:  # noqa: BLE001 - reported with the command's output below
                failure = traceback.format_exc()
    finally:
        sys.argv = argv
        os.chdir(cwd)
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
    if failure is not None:
        pytest.fail(f"{name} {' '.join(args)}: {failure}\n--- output\n{out.getvalue()[-6000:]}")
    return out.getvalue()
