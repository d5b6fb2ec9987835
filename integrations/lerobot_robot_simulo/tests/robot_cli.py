"""LeRobot's commands on the simulated follower: the cameras they give it, the trace it writes."""

from __future__ import annotations

import numpy as np
from lerobot_commands import run  # noqa: F401 - the tests' way to run a LeRobot command

SMALL_CAMERAS = ("{front: {type: simulo, camera: base_camera, width: 64, height: 48}, "
                 "wrist: {type: simulo, camera: wrist_camera, width: 64, height: 48}}")
"""The two cameras of an SO-101 setup, small: the tests check the loop, not the pictures."""


def trace(path: str) -> dict:
    """The robot's trace (``SimFollower.trace``) written at ``path``."""
    with np.load(path) as data:
        return {k: data[k] for k in data.files}
