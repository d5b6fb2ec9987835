"""Running LeRobot's console scripts of this venv from the tests."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SMALL_CAMERAS = ("{front: {type: simulo, camera: base_camera, width: 64, height: 48}, "
                 "wrist: {type: simulo, camera: wrist_camera, width: 64, height: 48}}")
"""The two cameras of an SO-101 setup, small: the tests check the loop, not the pictures."""


def run(name: str, *args: str, timeout: float = 420.0, check: bool = True) -> subprocess.CompletedProcess:
    """Run the console script ``name`` (``lerobot-record`` ...) of this venv with ``args``;
    fails the test with the output when it exits non-zero (``check``)."""
    command = [os.path.join(os.path.dirname(sys.executable), name), *args]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
                    f"--- stderr\n{proc.stderr[-6000:]}")
    return proc


def trace(path: str) -> dict:
    """The robot's trace (``SimFollower.trace``) written at ``path``."""
    with np.load(path) as data:
        return {k: data[k] for k in data.files}
