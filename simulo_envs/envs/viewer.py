"""``render_mode="human"``: SAPIEN's interactive viewer window (a mixin for ``BaseEnv``).

The viewer shows env 0's scene (every env with ``parallel_in_single_scene``), from the viewer
camera (``_default_viewer_camera_configs``, overridable with ``viewer_camera_configs``, pose in
env 0's frame). It opens at the first ``render()`` and closes with the env.

A window needs a display. Where none exists (no ``DISPLAY``/``WAYLAND_DISPLAY`` on Linux, or a
Vulkan device that cannot present, such as lavapipe), ``render_mode="human"`` is refused at
construction with ``HUMAN_HELP``, before anything is built.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from simulo_envs.sim.viewer import open_viewer, render_device_can_present

HUMAN_HELP = (
    "render_mode='human' opens SAPIEN's viewer window, which needs a display and a Vulkan device that can "
    "present to it; {why}. Use render_mode='rgb_array' and save videos instead "
    "(simulo_envs.wrappers.RecordEpisode, or gymnasium's RecordVideo on a single-env view), or run where a "
    "display exists (for example under xvfb-run with a GPU)."
)


def display_available() -> bool:
    """True where a window can be shown: Linux with ``DISPLAY`` or ``WAYLAND_DISPLAY`` set; always
    on macOS and Windows."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def device_can_present() -> bool:
    """True when the process's Vulkan render device can present to a window."""
    return render_device_can_present()


def check_human_render() -> None:
    """Raise unless SAPIEN's viewer can open here.

    Raises:
        RuntimeError: no display, or a render device that cannot present (the message says what
            to use instead).
    """
    if not display_available():
        raise RuntimeError(HUMAN_HELP.format(why="no display was found (DISPLAY and WAYLAND_DISPLAY are unset)"))
    if not device_can_present():
        raise RuntimeError(HUMAN_HELP.format(why="this machine's Vulkan device cannot present to a window"))


def human_render_available() -> bool:
    """True where ``render_mode="human"`` can open its window (``check_human_render`` passes)."""
    try:
        check_human_render()
    except RuntimeError:
        return False
    return True


class HumanViewerMixin:
    """The viewer half of ``BaseEnv``; expects ``self._backend``, ``self._viewer_camera_configs``."""

    _viewer: Any = None
    """SAPIEN's viewer window once ``render_human`` opened it (``viewer``)."""

    @property
    def viewer(self):
        """SAPIEN's ``Viewer`` once ``render()`` opened it in ``render_mode="human"``, else None."""
        return self._viewer

    def render_human(self):
        """Draw the current state in SAPIEN's viewer window (opened on first use); returns the viewer.

        Raises:
            RuntimeError: no display here (see ``check_human_render``).
        """
        if self._viewer is None:
            check_human_render()
            self._setup_viewer()
        self._backend.update_render()
        self._viewer.render()
        return self._viewer

    def _setup_viewer(self) -> None:
        """Open the viewer on env 0's scene, seen from the viewer camera (pose in env 0's frame)."""
        camera = next(iter(self._viewer_camera_configs.values()))
        pose = np.asarray(camera.pose.to_list(), dtype=np.float64)
        pose[:3] += self._backend.origins[0]
        self._viewer = open_viewer(self._backend.scenes[0], pose)

    def _close_viewer(self) -> None:
        """Close the viewer window, if open."""
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None
