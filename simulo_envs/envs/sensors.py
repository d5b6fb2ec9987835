"""Camera configurations: defaults per task, user overrides, and the texture set of an obs mode."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Mapping, Optional, Sequence

import numpy as np

from simulo_envs.authoring import Pose

TEXTURES = ("rgb", "depth", "segmentation", "normal", "albedo")
SENSOR_DATA_TEXTURES = ("rgb", "depth", "segmentation")
"""What ``obs_mode="sensor_data"`` renders."""
STATE_OBS_MODES = ("state", "state_dict", "none")
POINTCLOUD_TEXTURES = frozenset({"rgb", "position", "segmentation"})
"""The camera textures ``obs_mode="pointcloud"`` fuses (``simulo_envs/envs/pointcloud.py``)."""


@dataclass(frozen=True)
class CameraConfig:
    """A camera in every env, fixed in the env-local frame.

    Attributes:
        name: unique camera name (the key in ``obs["sensor_data"]``).
        pose: env-local camera pose. SAPIEN's camera convention: the camera looks along its +x
            axis with +z up; build one with ``look_at``.
        width / height: image size [px].
        fov: vertical field of view [rad].
        near / far: clipping distances [m].
        shader_pack: SAPIEN shader pack (``"auto"``: the fastest that renders the camera's
            textures; ``"default"``, ``"minimal"``, ``"rt"``, ``"rt-fast"``
            or a shader directory; ``simulo_envs/sim/render_config.py``).
    """

    name: str
    pose: Pose
    width: int = 128
    height: int = 128
    fov: float = math.pi / 2
    near: float = 0.01
    far: float = 100.0
    shader_pack: str = "auto"

    def __post_init__(self) -> None:
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


def apply_overrides(defaults: Sequence[CameraConfig], overrides: Optional[Mapping]) -> dict:
    """Camera configs with user overrides, keyed by name (ManiSkill's semantics).

    ``overrides`` maps a camera name to a dict of fields for that camera, or a field name to a
    value for every camera; camera-specific values win.

    Raises:
        ValueError: an unknown camera or field name, or an invalid resulting config.
    """
    configs = {c.name: c for c in defaults}
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ValueError(f"camera overrides must be a dict, got {type(overrides).__name__}")
    overrides = dict(overrides or {})
    field_names = {f.name for f in fields(CameraConfig)} - {"name"}
    common = {k: v for k, v in overrides.items() if k in field_names}
    specific = {k: v for k, v in overrides.items() if k not in field_names}
    for name, values in specific.items():
        if name not in configs:
            raise ValueError(f"camera override {name!r}: no such camera or field; cameras {sorted(configs)}, "
                             f"fields {sorted(field_names)}")
        if not isinstance(values, Mapping):
            raise ValueError(f"camera override {name!r}: expected a dict of fields, got {values!r}")
        bad = set(values) - field_names
        if bad:
            raise ValueError(f"camera override {name!r}: unknown fields {sorted(bad)}")
    out = {}
    for name, config in configs.items():
        values = {**common, **specific.get(name, {})}
        out[name] = replace(config, **values) if values else config
    return out


STATE_PARTS = ("state", "state_dict")
"""What an image obs mode may add with ``+`` (ManiSkill 3's spelling, ``"rgb+state"``): the
privileged state, flat under ``obs["state"]`` or as ``agent``/``extra`` dicts."""


def parse_obs_mode(obs_mode: str) -> frozenset:
    """The textures an obs mode asks for: empty for state modes; ``"rgbd"`` is rgb + depth,
    ``"sensor_data"`` rgb + depth + segmentation, ``"pointcloud"`` rgb + position +
    segmentation, and ``+`` joins textures (``"rgb+normal"``, ``"albedo+depth"``) and at most one
    of ``STATE_PARTS`` (``"rgb+state"``; ``obs_mode_state`` says which).

    Raises:
        ValueError: an unknown mode (the message lists the valid ones).
    """
    if obs_mode in STATE_OBS_MODES:
        return frozenset()
    parts = obs_mode.split("+") if isinstance(obs_mode, str) else []
    textures = set()
    for part in parts:
        if part == "rgbd":
            textures |= {"rgb", "depth"}
        elif part == "sensor_data":
            textures |= set(SENSOR_DATA_TEXTURES)
        elif part == "pointcloud":
            textures |= POINTCLOUD_TEXTURES
        elif part in TEXTURES:
            textures.add(part)
        elif part not in STATE_PARTS:
            raise ValueError(f"obs_mode {obs_mode!r} not supported: use one of {STATE_OBS_MODES + ('pointcloud',)}, "
                             f"or textures {TEXTURES} / 'rgbd' / 'sensor_data' / 'pointcloud' joined with '+', "
                             f"optionally with one of {STATE_PARTS} ('rgb+state')")
    state = [part for part in parts if part in STATE_PARTS]
    if len(state) > 1 or not textures:
        raise ValueError(f"obs_mode {obs_mode!r}: add at most one of {STATE_PARTS} to image textures ('rgb+state', "
                         f"'rgbd+state_dict'); the state alone is obs_mode 'state' or 'state_dict'")
    return frozenset(textures)


def obs_mode_state(obs_mode: str):
    """The state an obs mode carries beside its images: ``"state"`` (flat, ``obs["state"]``),
    ``"state_dict"`` (``agent`` and ``extra`` dicts) or None (the robot's proprioception only:
    ``BaseEnv.image_obs_extra``); for the state modes themselves their own name (None for
    ``"none"``). ``obs_mode`` must be valid (``parse_obs_mode``)."""
    if obs_mode in STATE_OBS_MODES:
        return None if obs_mode == "none" else obs_mode
    return next((part for part in obs_mode.split("+") if part in STATE_PARTS), None)


def is_pointcloud_mode(obs_mode: str) -> bool:
    """True when ``obs_mode`` fuses the cameras into ``obs["pointcloud"]`` (``"pointcloud"``,
    ``"pointcloud+state"``, ...)."""
    return isinstance(obs_mode, str) and "pointcloud" in obs_mode.split("+")
