"""SAPIEN's interactive viewer window, for ``render_mode="human"`` (``simulo_envs/envs/viewer.py``
decides when it may open; this module is the SAPIEN side of it)."""

from __future__ import annotations

import numpy as np
import sapien

from simulo_envs.sim.render import keepalive_render_system

__all__ = ["render_device_can_present", "open_viewer"]


def render_device_can_present() -> bool:
    """True when the process's Vulkan render device can present to a window (False on
    lavapipe, SAPIEN's ``RenderSystem.device.can_present()``).

    Raises:
        RuntimeError: no Vulkan device at all (``require_vulkan``'s message).
    """
    return bool(keepalive_render_system().device.can_present())


def open_viewer(scene, camera_pose: np.ndarray):
    """Open SAPIEN's ``Viewer`` window on ``scene`` (a ``sapien.Scene``, e.g. ``backend.scenes[0]``)
    with its camera at ``camera_pose`` ``[x, y, z, qw, qx, qy, qz]`` (world frame, m; SAPIEN's
    camera convention: looks along +x, +z up). Returns the viewer; ``viewer.render()`` draws a
    frame and ``viewer.close()`` closes the window."""
    import sapien.utils  # the viewer's GUI modules cost about 80 ms to import: only when a window opens

    pose = np.asarray(camera_pose, dtype=np.float64).reshape(7)
    viewer = sapien.utils.Viewer()
    viewer.set_scene(scene)
    viewer.set_camera_pose(sapien.Pose(pose[:3], pose[3:7]))
    return viewer
