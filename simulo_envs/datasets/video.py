"""MP4 video files of camera frames, with PyAV (FFmpeg's libraries): encode, append, decode.

Encoding follows LeRobot's defaults (0.4.4 ``lerobot/datasets/video_utils.py``,
``encode_video_frames``): AV1 by SVT-AV1 (``libsvtav1``, preset 12), ``yuv420p``, a key frame
every 2 frames (``g=2``, so any frame decodes quickly), constant quality ``crf=30``. Frame ``k``
of a file written at ``fps`` has the timestamp ``k / fps`` seconds (time base ``1 / (512 fps)``).

Appending (``concatenate``) copies the compressed packets of several files into one, shifting
each file's timestamps by the duration of the ones before it, without re-encoding: the episodes
of a LeRobot video file follow each other, episode ``e`` starting at ``from_timestamp`` = the
frames before it ``/ fps``. ``yuv420p`` needs even widths and heights.

Loss: the codec is lossy. On FrankaLift-v1's 128x128 camera images the decoded frames differ from
the rendered ones by about 1-2 levels of 255 on average (``docs/datasets.md`` gives the measured
figures; ``tests/test_datasets_lerobot.py`` bounds them).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
from fractions import Fraction
from typing import Sequence

import numpy as np

DEFAULT_CODEC = "libsvtav1"
DEFAULT_CRF = 30
DEFAULT_GOP = 2
PIX_FMT = "yuv420p"
TICKS_PER_FRAME = 512
"""Stream time base = 1 / (TICKS_PER_FRAME * fps): every frame timestamp is exact."""


def _av():
    import av  # PyAV: imported where video is used, so state-only datasets never need it

    return av


@contextlib.contextmanager
def _scheduling_kept():
    """Restore the calling thread's scheduling policy on exit. SVT-AV1 switches the thread that
    opens an encoder to ``SCHED_FIFO`` when it is permitted to (running as root, as in many
    containers); every process started afterwards would inherit a real-time policy."""
    if not hasattr(os, "sched_getscheduler"):
        yield
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        yield
    finally:
        if os.sched_getscheduler(0) != policy:
            try:
                os.sched_setscheduler(0, policy, param)
            except OSError:
                pass


def encode(path: str, frames: np.ndarray, fps: int, codec: str = DEFAULT_CODEC, crf: int = DEFAULT_CRF,
           gop: int = DEFAULT_GOP) -> None:
    """Write uint8 ``(T, H, W, 3)`` RGB ``frames`` to the MP4 file ``path`` (any name: the
    container is chosen explicitly), frame ``k`` at ``k / fps`` s.

    Raises:
        ValueError: not uint8 ``(T >= 1, H, W, 3)``, or an odd ``H`` or ``W``.
        OSError: the file could not be written (e.g. ENOSPC), or FFmpeg failed while encoding or
            muxing (EIO, FFmpeg's error in the message and as ``__cause__``), so a caller that
            rolls back on OSError rolls back on both.
    """
    frames = np.asarray(frames)
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[0] < 1:
        raise ValueError(f"video frames must be uint8 (T >= 1, H, W, 3), got {frames.dtype} {frames.shape}")
    height, width = frames.shape[1:3]
    if height % 2 or width % 2:
        raise ValueError(f"{PIX_FMT} video needs an even width and height, got {width}x{height}")
    av = _av()
    os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner to stderr unless told (errors only)
    options = {"g": str(gop), "crf": str(crf)}
    if codec == "libsvtav1":
        options["preset"] = "12"
    buffer = io.BytesIO()  # muxed in memory, written by Python: a full disk is an OSError (ENOSPC)
    try:
        with _scheduling_kept(), av.open(buffer, "w", format="mp4") as container:
            stream = container.add_stream(codec, rate=fps, options=options)
            stream.width, stream.height, stream.pix_fmt = width, height, PIX_FMT
            stream.time_base = Fraction(1, TICKS_PER_FRAME * fps)
            for k, image in enumerate(frames):
                frame = av.VideoFrame.from_ndarray(image, format="rgb24")
                frame.pts, frame.time_base = k * TICKS_PER_FRAME, stream.time_base
                for packet in stream.encode(frame):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
    except av.error.FFmpegError as error:
        raise OSError(errno.EIO, f"FFmpeg could not encode the video for {path}: {error}") from error
    _write(path, buffer)


def _write(path: str, buffer: io.BytesIO) -> None:
    """Write ``buffer``'s bytes to ``path``. FFmpeg reports a failed write to a file it opened
    itself as a generic error (EINVAL), so the files are muxed in memory and written here."""
    with open(path, "wb") as f:
        f.write(buffer.getbuffer())


def concatenate(path: str, parts: Sequence[str]) -> None:
    """Write the MP4 ``path`` holding the frames of ``parts`` one after another (packets copied,
    timestamps shifted; the parts must share codec, size and frame rate)."""
    av = _av()
    buffer = io.BytesIO()  # as ``encode``: a full disk raises OSError
    with av.open(buffer, "w", format="mp4") as out:
        stream, offset = None, 0
        for part in parts:
            with av.open(part) as source:
                src = source.streams.video[0]
                if stream is None:
                    stream = out.add_stream_from_template(src, opaque=True)
                    stream.time_base = src.time_base
                elif src.time_base != stream.time_base:
                    raise ValueError(f"{part}: time base {src.time_base} differs from {stream.time_base}")
                last = offset
                for packet in source.demux(src):
                    if packet.dts is None:
                        continue
                    packet.pts += offset
                    packet.dts += offset
                    last = max(last, packet.pts + (packet.duration or 0))
                    packet.stream = stream
                    out.mux(packet)
                offset = last
    _write(path, buffer)


def frame_count(path: str) -> int:
    """Number of frames of the first video stream of ``path``."""
    with _av().open(path) as container:
        return sum(1 for packet in container.demux(container.streams.video[0]) if packet.dts is not None)


def decode(path: str, start_s: float = 0.0, count: int = -1, fps: int = 0) -> np.ndarray:
    """uint8 ``(count, H, W, 3)``: the frames of ``path`` from timestamp ``start_s`` on (all frames
    when ``count`` is -1). ``fps`` (with ``count``) checks that the frames are consecutive.

    Raises:
        ValueError: fewer than ``count`` frames from ``start_s``, or a gap in their timestamps.
    """
    av = _av()
    out, stamps = [], []
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        if start_s > 0:
            container.seek(int(start_s / stream.time_base), stream=stream, backward=True, any_frame=False)
        for frame in container.decode(stream):
            t = float(frame.pts * stream.time_base)
            if t < start_s - 1e-6:
                continue
            out.append(frame.to_ndarray(format="rgb24"))
            stamps.append(t)
            if count >= 0 and len(out) == count:
                break
    if count >= 0 and len(out) < count:
        raise ValueError(f"{path}: {len(out)} frames from {start_s:.4f} s, expected {count}")
    if fps and len(stamps) > 1 and not np.allclose(np.diff(stamps), 1.0 / fps, atol=1e-4):
        raise ValueError(f"{path}: frames from {start_s:.4f} s are not spaced 1/{fps} s apart")
    if not out:
        return np.zeros((0, 0, 0, 3), np.uint8)
    return np.stack(out)


def video_info(path: str) -> dict:
    """LeRobot's ``info`` of a video feature (0.4.4 ``get_video_info``): ``video.height``,
    ``video.width``, ``video.codec``, ``video.pix_fmt``, ``video.is_depth_map``, ``video.fps``,
    ``video.channels``, ``has_audio``."""
    with _av().open(path) as container:
        stream = container.streams.video[0]
        return {"video.height": stream.height, "video.width": stream.width,
                "video.codec": stream.codec_context.codec.canonical_name, "video.pix_fmt": stream.pix_fmt,
                "video.is_depth_map": False, "video.fps": int(stream.base_rate or stream.average_rate),
                "video.channels": 3, "has_audio": len(container.streams.audio) > 0}


def duration_s(frames: int, fps: int) -> float:
    """Seconds ``frames`` frames last at ``fps``: the next file's timestamp offset."""
    return frames / float(fps)
