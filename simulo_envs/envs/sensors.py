"""Camera configurations: defaults per task, user overrides, and the texture set of an obs mode."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Mapping, Optional, Sequence

from simulo_envs.authoring.camera import CameraConfig, look_at, matrix_to_quat  # noqa: F401  (re-exported)

TEXTURES = ("rgb", "depth", "segmentation", "normal", "albedo")
SENSOR_DATA_TEXTURES = ("rgb", "depth", "segmentation")
"""What ``obs_mode="sensor_data"`` renders."""
STATE_OBS_MODES = ("state", "state_dict", "none")
POINTCLOUD_TEXTURES = frozenset({"rgb", "position", "segmentation"})
"""The camera textures ``obs_mode="pointcloud"`` fuses (``simulo_envs/envs/pointcloud.py``)."""


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


def parse_obs_mode(obs_mode: str) -> frozenset:
    """The textures an obs mode asks for: empty for state modes; ``"rgbd"`` is rgb + depth,
    ``"sensor_data"`` rgb + depth + segmentation, ``"pointcloud"`` rgb + position +
    segmentation, and ``+`` joins textures (``"rgb+normal"``, ``"albedo+depth"``).

    Raises:
        ValueError: an unknown mode (the message lists the valid ones).
    """
    if obs_mode in STATE_OBS_MODES:
        return frozenset()
    if obs_mode == "pointcloud":
        return POINTCLOUD_TEXTURES
    parts = obs_mode.split("+") if isinstance(obs_mode, str) else []
    textures = set()
    for part in parts:
        if part == "rgbd":
            textures |= {"rgb", "depth"}
        elif part == "sensor_data":
            textures |= set(SENSOR_DATA_TEXTURES)
        elif part in TEXTURES:
            textures.add(part)
        else:
            raise ValueError(f"obs_mode {obs_mode!r} not supported: use one of {STATE_OBS_MODES + ('pointcloud',)}, "
                             f"or textures {TEXTURES} / 'rgbd' / 'sensor_data' joined with '+'")
    return frozenset(textures)
