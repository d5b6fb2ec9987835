"""Recording options that make a dataset merge with real recordings (LeRobot's ``lerobot-record``).

A real SO arm's dataset, as LeRobot 0.6's ``lerobot-record`` writes it, has ``fps`` 30, the
follower's ``robot_type`` (``so_follower``: the ``name`` of LeRobot's ``SOFollower``, which
``so100_follower`` and ``so101_follower`` both build; ``lerobot/robots/so_follower/so_follower.py``),
one ``observation.images.<name>`` per camera named in ``--robot.cameras`` (``front``, ``wrist``,
...; 640x480 in LeRobot's examples), and no ``next.*`` columns. LeRobot merges datasets only when
fps, robot_type and features agree (``lerobot/datasets/aggregate.py``, ``validate_all_metadata``).
``RecordingOptions`` sets each of those for a simulated collection or replay:

==================  =====================================  =====================================
option              what it changes                        CLI (``collect_demos.py``, ``replay.py``)
==================  =====================================  =====================================
``fps``             the env's ``control_freq`` [Hz] (one   ``--fps 30``
                    frame per env step); ``sim_freq`` must
                    be a multiple of it
``sim_freq``        the physics frequency [Hz]             ``--sim-freq 120``
``robot_type``      the dataset's ``robot_type``           ``--robot-type so_follower``
``cameras``         which sensor cameras are recorded,     ``--camera front=base_camera:640x480``
                    under which names, at which size       (repeatable)
``next_features``   False: no ``next.reward``,             ``--no-next`` (None: the default, with)
                    ``next.done``, ``next.success``
==================  =====================================  =====================================

Everything is checked before anything is written: the frequencies and names before any env is
built (``check_frequencies``: an fps the physics step does not divide), the cameras against the
first env built (``check_cameras``: a camera the env does not have).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Mapping, Optional

from simulo_envs.datasets.schema import DatasetSchema

__all__ = ["CameraRecord", "RecordingOptions", "parse_camera", "check_frequencies", "check_cameras", "check_format",
           "env_kwargs", "apply"]


@dataclass(frozen=True)
class CameraRecord:
    """One recorded camera: its ``name`` in the dataset, the env's sensor camera ``sensor`` it is
    rendered by, and an optional ``(width, height)`` [px] (None: the sensor's own size)."""

    name: str
    sensor: str
    size: Optional[tuple[int, int]] = None


@dataclass(frozen=True)
class RecordingOptions:
    """See the module docstring. None / empty: the env's own value (nothing changed)."""

    fps: Optional[int] = None
    sim_freq: Optional[int] = None
    robot_type: Optional[str] = None
    cameras: tuple = ()
    next_features: Optional[bool] = None

    @property
    def changes_anything(self) -> bool:
        """True when any option differs from its default (the recording differs from the env's own schema)."""
        return self != RecordingOptions()


_CAMERA = re.compile(r"^(?P<name>[A-Za-z0-9_\-]+)(?:=(?P<sensor>[A-Za-z0-9_\-]+))?(?::(?P<w>\d+)x(?P<h>\d+))?$")


def parse_camera(text: str) -> CameraRecord:
    """``NAME[=SENSOR][:WxH]`` -> ``CameraRecord`` (``front=base_camera:640x480``: the env's
    ``base_camera`` recorded as ``front`` at 640x480; ``base_camera``: under its own name).

    Raises:
        ValueError: another form, or a zero size.
    """
    match = _CAMERA.match(text or "")
    if not match:
        raise ValueError(f"camera {text!r}: expected NAME[=SENSOR][:WxH], e.g. front=base_camera:640x480")
    size = None
    if match.group("w"):
        size = (int(match.group("w")), int(match.group("h")))
        if min(size) < 1:
            raise ValueError(f"camera {text!r}: width and height must be >= 1 px")
    return CameraRecord(match.group("name"), match.group("sensor") or match.group("name"), size)


def check_frequencies(options: RecordingOptions, env_cls, user_sim_config=None, env_id: str = "") -> None:
    """Refuse frequencies and names that cannot apply to the task class ``env_cls`` (before any
    env is built).

    Args:
        user_sim_config: the user's ``sim_config`` keywords, if any.

    Raises:
        ValueError: an fps or sim_freq that is not an int >= 1, an fps that does not divide the
            physics frequency (the message gives the ones that do and a sim_freq that works), an
            empty robot type, a camera named twice.
    """
    names = [c.name for c in options.cameras]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"cameras {twice} are named twice")
    if options.robot_type is not None and not options.robot_type.strip():
        raise ValueError("robot_type must be a non-empty name (LeRobot's SO followers record 'so_follower')")
    for name in ("fps", "sim_freq"):
        value = getattr(options, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be an int >= 1 [Hz], got {value!r}")
    if options.fps is None and options.sim_freq is None:
        return
    sim = env_cls.default_sim_config.merged(dict(user_sim_config or {}))
    sim_freq = options.sim_freq or sim.sim_freq
    fps = options.fps or sim.control_freq
    if sim_freq % fps:
        dividers = [f for f in range(5, sim_freq + 1) if sim_freq % f == 0]
        raise ValueError(f"a recording at {fps} Hz needs a physics frequency that is a multiple of it: "
                         f"{env_id or env_cls.__name__} steps its physics at {sim_freq} Hz, which {fps} does not divide; "
                         f"choose --fps from {dividers}, or a --sim-freq that is a multiple of {fps} "
                         f"(e.g. --sim-freq {fps * -(-sim_freq // fps)})")


def check_cameras(options: RecordingOptions, env_cameras, obs_mode: str, env_id: str) -> None:
    """Refuse recorded cameras the env does not render (``env_cameras``: its RGB sensor cameras).

    Raises:
        ValueError: a sensor camera the env does not have (the message lists those it has), or
            cameras asked for in a state-only obs mode.
    """
    if options.cameras and obs_mode in ("state", "state_dict", "none"):
        raise ValueError(f"cameras are recorded in a visual obs mode (rgb, rgbd, ...), not {obs_mode!r}")
    unknown = [c.sensor for c in options.cameras if c.sensor not in env_cameras]
    if unknown:
        raise ValueError(f"camera {unknown[0]!r}: {env_id} has no such sensor camera; it has {sorted(env_cameras)}")


def check_format(options: RecordingOptions, fmt: str) -> None:
    """Refuse options the format cannot hold: the HDF5 layout is ManiSkill's, its observations
    keep the env's camera names and its steps their rewards and flags.

    Raises:
        ValueError: renamed cameras or ``next_features=False`` with ``fmt="hdf5"``.
    """
    if fmt != "hdf5":
        return
    renamed = [f"{c.sensor} as {c.name}" for c in options.cameras if c.name != c.sensor]
    if renamed:
        raise ValueError(f"the hdf5 format keeps the env's camera names (asked: {', '.join(renamed)}); rename cameras "
                         "in the lerobot format")
    if options.next_features is False:
        raise ValueError("leaving out next.* columns is for the lerobot format; hdf5 episodes always hold their "
                         "rewards and flags")


def env_kwargs(options: RecordingOptions, kwargs: dict) -> dict:
    """``kwargs`` (the env's keywords) with the options' ``sim_config`` frequencies and camera
    sizes merged in (a camera's own size over a size given for every camera)."""
    out = dict(kwargs)
    fields = {k: v for k, v in (("control_freq", options.fps), ("sim_freq", options.sim_freq)) if v is not None}
    if fields:
        out["sim_config"] = with_sim_fields(out.get("sim_config"), **fields)
    sized = [c for c in options.cameras if c.size is not None]
    if sized:
        sensors = dict(out.get("sensor_configs") or {})
        for cam in sized:
            sensors[cam.sensor] = {**dict(sensors.get(cam.sensor) or {}), "width": cam.size[0], "height": cam.size[1]}
        out["sensor_configs"] = sensors
    return out


def with_sim_fields(sim_config, **fields):
    """An env's ``sim_config`` keyword (None, a dict, or a ``SimConfig``) with ``fields`` set, in
    the same form."""
    if sim_config is not None and not isinstance(sim_config, Mapping):
        return replace(sim_config, **fields)
    return {**dict(sim_config or {}), **fields}


def apply(options: RecordingOptions, schema: DatasetSchema) -> DatasetSchema:
    """``schema`` with the options' robot type, recorded cameras (names and sources) and
    ``next_features`` (checked before by ``check_frequencies`` and ``check_cameras``)."""
    changes: dict = {}
    if options.next_features is not None:
        changes["next_features"] = options.next_features
    if options.robot_type is not None:
        changes["robot_type"] = options.robot_type
    if options.cameras:
        by_sensor = {schema.env_camera(name): shape for name, shape in schema.cameras.items()}
        changes["cameras"] = {c.name: by_sensor[c.sensor] for c in options.cameras}
        changes["camera_sources"] = {c.name: c.sensor for c in options.cameras if c.name != c.sensor}
    return replace(schema, **changes)


def describe_cameras(schema: DatasetSchema) -> list:
    """``["front <- base_camera 480x640", ...]`` for messages."""
    return [f"{n} <- {schema.env_camera(n)} {s[0]}x{s[1]}" for n, s in schema.cameras.items()]


