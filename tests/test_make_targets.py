"""What the Makefile says where it cannot go on: without Python 3.12 the LeRobot venv cannot be
built, and the message names the target that runs the main suite without it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from script_runs import ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_without_python_3_12_the_lerobot_setup_names_make_test_main(tmp_path):
    venv = tmp_path / "venv-lerobot"   # not the repository's: nothing there is touched
    run = subprocess.run(["make", "-s", "lerobot-setup", f"LEROBOT_VENV={venv}", "LEROBOT_PYTHON=/nonexistent/python3.12"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert run.stderr.splitlines()[-3:-1] == [
        "[lerobot-setup] LeRobot 0.6 needs Python 3.12: put python3.12 on PATH or set LEROBOT_PYTHON",
        "[lerobot-setup] (make test-main runs the main test suite alone, without the LeRobot venv)"], run.stderr
    assert not venv.exists()
