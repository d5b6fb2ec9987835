"""MP4 video files of camera frames, with PyAV (FFmpeg's libraries): encode, append, decode.

Encoding follows LeRobot's defaults (0.4.4 ``lerobot/datasets/video_utils.py``,
``encode_video_frames``): AV1 by SVT-AV1 (``libsvtav1``, preset 12), ``yuv420p``, a key frame
every 2 frames (``g=2``, so any frame decodes quickly), constant quality ``crf=30``. Frame ``k``
of a file written at ``fps`` has the timestamp ``k / fps`` seconds (time base ``1 / (512 fps)``).

Appending (``concatenate``) copies the compressed packets of several files into one, shifting
each file's timestamps by the duration of the ones before it, without re-encoding: the episodes
of a LeRobot video file follow each other, episode ``e`` starting at ``from_timestamp`` = the
frames before it ``/ fps``. ``yuv420p`` needs even widths and heights.

Every file is written "fast start" (the ``moov`` index box before the ``mdat`` media data, as
FFmpeg's ``-movflags faststart`` and LeRobot's own writer do): a reader streaming the file
(a browser, the Hub's viewer) finds the index without reading the whole file. FFmpeg's own
faststart pass reopens its output by name, which an in-memory output does not have, so
``faststart`` moves the box here (ISO/IEC 14496-12: the ``stco``/``co64`` chunk offsets of every
track shift by the size of the moved box).

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
    """Write ``buffer``'s bytes to ``path``, fast start. FFmpeg reports a failed write to a file
    it opened itself as a generic error (EINVAL), so the files are muxed in memory and written here."""
    with open(path, "wb") as f:
        f.write(faststart(buffer.getvalue()))


_CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta", b"mvex"}


def top_level_boxes(data: bytes) -> list[tuple[bytes, int, int]]:
    """``(type, start, size)`` of the top-level boxes of an MP4 file (ISO/IEC 14496-12 4.2).

    Raises:
        ValueError: a box that runs past the end of the data.
    """
    out, pos = [], 0
    while pos + 8 <= len(data):
        size, kind = int.from_bytes(data[pos:pos + 4], "big"), data[pos + 4:pos + 8]
        if size == 1:
            size = int.from_bytes(data[pos + 8:pos + 16], "big")
        elif size == 0:
            size = len(data) - pos
        if size < 8 or pos + size > len(data):
            raise ValueError(f"MP4 box {kind!r} at byte {pos} runs past the end of the file")
        out.append((kind, pos, size))
        pos += size
    return out


def faststart(data: bytes) -> bytes:
    """The MP4 ``data`` with its ``moov`` box moved before its first ``mdat`` box and every chunk
    offset (``stco``, ``co64``) shifted by the moved box's size; ``data`` unchanged when ``moov``
    already comes first.

    Raises:
        ValueError: no ``moov``/``mdat``, or a 32-bit offset that would overflow (files > 4 GB).
    """
    boxes = top_level_boxes(data)
    kinds = [b[0] for b in boxes]
    if b"moov" not in kinds or b"mdat" not in kinds:
        raise ValueError("not an MP4 file with moov and mdat boxes")
    moov = boxes[kinds.index(b"moov")]
    first_mdat = boxes[kinds.index(b"mdat")]
    if moov[1] < first_mdat[1]:
        return data
    index = bytearray(data[moov[1]:moov[1] + moov[2]])
    _shift_offsets(index, 0, len(index), moov[2])
    head = data[:first_mdat[1]]
    rest = data[first_mdat[1]:moov[1]] + data[moov[1] + moov[2]:]
    return head + bytes(index) + rest


def _shift_offsets(buf: bytearray, start: int, end: int, delta: int) -> None:
    """Add ``delta`` to every ``stco``/``co64`` entry in the boxes of ``buf[start:end]``."""
    pos = start + 8 if buf[start + 4:start + 8] == b"moov" and start == 0 else start
    while pos + 8 <= end:
        size, kind = int.from_bytes(buf[pos:pos + 4], "big"), bytes(buf[pos + 4:pos + 8])
        header = 8
        if size == 1:
            size, header = int.from_bytes(buf[pos + 8:pos + 16], "big"), 16
        if size < 8 or pos + size > end:
            raise ValueError(f"MP4 box {kind!r} at byte {pos} of moov runs past its parent")
        if kind in _CONTAINERS:
            _shift_offsets(buf, pos + header, pos + size, delta)
        elif kind in (b"stco", b"co64"):
            width = 4 if kind == b"stco" else 8
            count = int.from_bytes(buf[pos + header + 4:pos + header + 8], "big")
            for k in range(count):
                at = pos + header + 8 + k * width
                value = int.from_bytes(buf[at:at + width], "big") + delta
                if value >= 1 << (8 * width):
                    raise ValueError("a chunk offset overflows stco after moving moov (a file over 4 GB)")
                buf[at:at + width] = value.to_bytes(width, "big")
        pos += size


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


def video_info(path: str, codec: str = DEFAULT_CODEC, crf: int = DEFAULT_CRF, gop: int = DEFAULT_GOP) -> dict:
    """LeRobot 0.6's ``info`` of a video feature (``lerobot/datasets/video_utils.py``,
    ``get_video_info``): from the stream ``video.height``, ``video.width``, ``video.codec``,
    ``video.pix_fmt``, ``video.fps``, ``video.channels``, ``has_audio``; ``is_depth_map`` (False:
    RGB); and the encoder's settings as LeRobot records them (``video.g``, ``video.crf``,
    ``video.preset``, ``video.fast_decode``, ``video.video_backend``, ``video.extra_options``;
    ``lerobot/configs/video.py``, which LeRobot leaves out when it compares features to merge)."""
    with _av().open(path) as container:
        stream = container.streams.video[0]
        info = {"video.height": stream.height, "video.width": stream.width,
                "video.codec": stream.codec_context.codec.canonical_name, "video.pix_fmt": stream.pix_fmt,
                "video.fps": int(stream.base_rate or stream.average_rate), "video.channels": 3,
                "has_audio": len(container.streams.audio) > 0}
    info.update({"video.g": gop, "video.crf": crf, "video.preset": 12 if codec == "libsvtav1" else None,
                 "video.fast_decode": 0, "video.video_backend": "pyav", "video.extra_options": {},
                 "is_depth_map": False})
    return info


def duration_s(frames: int, fps: int) -> float:
    """Seconds ``frames`` frames last at ``fps``: the next file's timestamp offset."""
    return frames / float(fps)
