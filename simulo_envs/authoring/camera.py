"""``CameraConfig``: a camera as plain data (where it sits, what it sees), and ``look_at`` to aim
one. Nothing here touches SAPIEN; ``simulo_envs/envs/rendering.py`` builds the cameras."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from simulo_envs.authoring.pose import Pose


@dataclass(frozen=True)
class CameraConfig:
    """A camera in every env, fixed in the env-local frame or riding on a robot link.

    Attributes:
        name: unique camera name (the key in ``obs["sensor_data"]``).
        pose: env-local camera pose, or with ``mount`` the pose in the link's frame. SAPIEN's
            camera convention: the camera looks along its +x axis with +z up; build one with
            ``look_at``.
        width / height: image size [px].
        fov: vertical field of view [rad].
        near / far: clipping distances [m].
        shader_pack: SAPIEN shader pack (``"auto"``: the fastest that renders the camera's
            textures; ``"default"``, ``"minimal"``, ``"rt"``, ``"rt-fast"``
            or a shader directory; ``simulo_envs/sim/render_config.py``).
        mount: None (fixed in the env frame), or the link the camera rides on: a link name of
            the env's robot (``"gripper_link"``), or ``"<articulation path>:<link>"`` as in
            ``segmentation_id_map`` (``"/World/Robot:gripper_link"``); ManiSkill's ``mount``.
    """

    name: str
    pose: Pose
    width: int = 128
    height: int = 128
    fov: float = math.pi / 2
    near: float = 0.01
    far: float = 100.0
    shader_pack: str = "auto"
    mount: Optional[str] = None

    def __post_init__(self) -> None:
        if self.mount is not None and (not isinstance(self.mount, str) or not self.mount):
            raise ValueError(f"camera {self.name!r}: mount must be None or a link name, got {self.mount!r}")
        if not isinstance(self.pose, Pose):
            try:
                object.__setattr__(self, "pose", Pose(self.pose[:3], self.pose[3:7]))
            except (TypeError, IndexError) as exc:
                raise ValueError(f"camera {self.name!r}: pose must be a Pose or [x, y, z, qw, qx, qy, qz]: {exc}") from None
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"camera {self.name!r}: {name} must be an int >= 1 [px], got {value!r}")
        for name in ("fov", "near", "far"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not math.isfinite(value):
                raise ValueError(f"camera {self.name!r}: {name} must be a finite number, got {value!r}")
        if not 0 < self.fov < math.pi:
            raise ValueError(f"camera {self.name!r}: fov must be in (0, pi) rad, got {self.fov!r}")
        if not 0 < self.near < self.far:
            raise ValueError(f"camera {self.name!r}: need 0 < near < far, got near={self.near}, far={self.far}")


def look_at(eye: Sequence[float], target: Sequence[float], up: Sequence[float] = (0.0, 0.0, 1.0)) -> Pose:
    """Camera pose at ``eye`` looking at ``target`` (SAPIEN convention: +x forward, +z up).

    Raises:
        ValueError: ``eye == target`` or the view direction is parallel to ``up``.
    """
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    forward = target - eye
    if np.linalg.norm(forward) < 1e-9:
        raise ValueError("look_at: eye and target coincide")
    forward /= np.linalg.norm(forward)
    left = np.cross(up, forward)
    if np.linalg.norm(left) < 1e-9:
        raise ValueError("look_at: view direction is parallel to 'up'; pass another up vector")
    left /= np.linalg.norm(left)
    camera_up = np.cross(forward, left)
    return Pose(eye.tolist(), matrix_to_quat(np.stack([forward, left, camera_up], axis=1)).tolist())


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """Unit quaternion ``[qw, qx, qy, qz]`` of a 3x3 rotation matrix (Shepperd's method,
    J. Guidance and Control 1(3), 1978)."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q = np.asarray(q)
    return q / np.linalg.norm(q)


__all__ = ["CameraConfig", "look_at", "matrix_to_quat"]
