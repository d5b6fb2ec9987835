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
