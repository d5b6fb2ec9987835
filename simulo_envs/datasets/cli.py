"""Command-line parts the dataset scripts share (``scripts/collect_demos.py``, ``scripts/replay.py``):
the batch, camera-size and report options, and running a dataset job to its summary line and
exit status. Each script keeps its own options, their order and its summary line."""

from __future__ import annotations

import argparse
import json
from typing import Callable

from simulo_envs.datasets.errors import DatasetError
from simulo_envs.output_paths import error_line
from simulo_envs.envs.sensors import STATE_OBS_MODES

ERRORS = (KeyError, ValueError, TypeError, OSError, DatasetError)
"""What a dataset job raises for bad input (a script may add its own)."""


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    """``--num-envs`` (default 16) and ``--num-workers`` (default 1: in this process)."""
    parser.add_argument("--num-envs", type=int, default=16, help="envs stepping together (default 16)")
    parser.add_argument("--num-workers", type=int, default=1, help="worker processes (default 1: in this process)")


def add_camera_size_option(parser: argparse.ArgumentParser) -> None:
    """``--camera-size W H``: the sensor cameras' width and height [px]; read by ``camera_kwargs``."""
    parser.add_argument("--camera-size", type=int, nargs=2, metavar=("W", "H"), default=None,
                        help="sensor camera width and height for visual obs modes (default: the task's)")


def camera_kwargs(args: argparse.Namespace) -> dict:
    """The env keywords ``--camera-size W H`` asks for: ``{"sensor_configs": {"width": W, "height": H}}``
    (every sensor camera of the task), or ``{}`` without the option (the task's sizes)."""
    if args.camera_size is None:
        return {}
    return {"sensor_configs": {"width": args.camera_size[0], "height": args.camera_size[1]}}


def check_cameras_render(env_kwargs: dict, obs_mode: str, recording=None) -> None:
    """Raise ValueError when camera options are given for an ``obs_mode`` that renders no camera
    (``state``, ``state_dict``, ``none``): sizes of the sensor cameras in ``env_kwargs``
    (``sensor_configs``, what ``--camera-size`` sets) or recorded cameras in ``recording`` (a
    ``RecordingOptions``, what ``--camera`` sets) would be ignored without a word. The message
    names the options as typed; nothing is built first."""
    if obs_mode not in STATE_OBS_MODES:
        return
    given = [f"--camera-size {size['width']} {size['height']}" if {"width", "height"} <= set(size) else "--camera-size"
             for size in [env_kwargs.get("sensor_configs")] if size]
    given += [f"--camera {_camera_text(c)}" for c in getattr(recording, "cameras", ())]
    if given:
        it = "them" if len(given) > 1 else "it"
        raise ValueError(f"{' '.join(given)}: obs mode {obs_mode!r} records no camera image: add an image obs mode "
                         f"(--obs-mode rgb, or rgb+state to keep the whole state) or leave {it} out")


def _camera_text(camera) -> str:
    """A ``CameraRecord`` as ``--camera`` takes it (``NAME[=SENSOR][:WxH]``)."""
    text = camera.name if camera.sensor == camera.name else f"{camera.name}={camera.sensor}"
    return text + (f":{camera.size[0]}x{camera.size[1]}" if camera.size else "")


def add_recording_options(parser: argparse.ArgumentParser) -> None:
    """The options that make a dataset merge with real recordings (``recording.py``): ``--fps``,
    ``--sim-freq``, ``--robot-type``, ``--camera NAME[=SENSOR][:WxH]`` (repeatable), ``--no-next``;
    read by ``recording_options``."""
    group = parser.add_argument_group("recording (to merge with real recordings; LeRobot's lerobot-record uses 30 Hz)")
    group.add_argument("--fps", type=int, default=None,
                       help="frames per second = the env's control frequency [Hz] (default: the task's)")
    group.add_argument("--sim-freq", type=int, default=None, help="physics steps per second [Hz], a multiple of --fps")
    group.add_argument("--robot-type", default=None,
                       help="the dataset's robot_type (default: the robot's LeRobot name, e.g. so_follower)")
    group.add_argument("--camera", action="append", default=[], metavar="NAME[=SENSOR][:WxH]",
                       help="record the env's sensor camera SENSOR as observation.images.NAME, at W x H px "
                            "(repeatable; e.g. front=base_camera:640x480; default: every sensor camera, its own name)")
    group.add_argument("--no-next", action="store_true",
                       help="leave out the next.reward / next.done / next.success columns (real recordings have none)")


def recording_options(args: argparse.Namespace, parser: argparse.ArgumentParser):
    """The ``RecordingOptions`` of ``add_recording_options``' flags; a malformed ``--camera`` exits
    through ``parser.error``."""
    from simulo_envs.datasets.recording import RecordingOptions, parse_camera

    try:
        cameras = tuple(parse_camera(text) for text in args.camera)
    except ValueError as error:
        parser.error(str(error))
    return RecordingOptions(fps=args.fps, sim_freq=args.sim_freq, robot_type=args.robot_type, cameras=cameras,
                            next_features=False if args.no_next else None)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """``--no-progress`` and ``--json`` (the summary as one JSON line last)."""
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON line last")


def run_job(parser: argparse.ArgumentParser, args: argparse.Namespace, job: Callable, settings,
            describe: Callable[[dict], str], errors: tuple = ERRORS) -> int:
    """Run ``job(settings, progress=...)`` (a progress bar unless ``--no-progress`` or ``--json``),
    print ``describe(summary)`` and, with ``--json``, the summary as JSON; returns the exit status:
    1 when the job stopped on an error, 130 when interrupted, else 0. One of ``errors`` raised by
    the job (bad input) exits through ``parser.error`` (status 2, its message on one line)."""
    try:
        summary = job(settings, progress=not (args.no_progress or args.json))
    except errors as error:
        parser.error(error_line(error))
    print(describe(summary), flush=True)
    if args.json:
        print(json.dumps(summary), flush=True)
    return 1 if summary["error"] else (130 if summary["interrupted"] else 0)
