"""A strip of evenly spaced frames of a video, side by side in one PNG (for a README or a doc).

    python scripts/video_strip.py docs/lift_policy.mp4 -o docs/lift_policy_strip.png --frames 5

Frames ``0, (n-1)/(k-1), ..., n-1`` of the ``n`` frames (the first and the last included), each
scaled by ``--scale`` (nearest pixel), joined left to right. Reads and writes with imageio.
"""

from __future__ import annotations

import argparse

import imageio.v3 as iio
import numpy as np


def frame_strip(frames: np.ndarray, count: int, scale: float = 1.0) -> np.ndarray:
    """``count`` evenly spaced frames of ``frames`` (uint8 (n, H, W, 3)) joined left to right:
    uint8 (h, count * w, 3) with ``h, w = round(H * scale), round(W * scale)``.

    Raises:
        ValueError: ``count`` < 1 or more than the video's frames, ``scale`` not > 0, or not a
            (n, H, W, C) array.
    """
    if frames.ndim != 4:
        raise ValueError(f"expected frames of shape (n, H, W, C), got {frames.shape}")
    if not 1 <= count <= len(frames):
        raise ValueError(f"count must be in [1, {len(frames)}] (the video's frames), got {count}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    picks = np.linspace(0, len(frames) - 1, count).round().astype(int)
    height, width = max(1, round(frames.shape[1] * scale)), max(1, round(frames.shape[2] * scale))
    rows = (np.arange(height) * frames.shape[1] / height).astype(int)
    cols = (np.arange(width) * frames.shape[2] / width).astype(int)
    return np.concatenate([frames[i][rows][:, cols] for i in picks], axis=1)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("video")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--frames", type=int, default=5, help="how many frames")
    parser.add_argument("--scale", type=float, default=1.0, help="size of each frame relative to the video's")
    args = parser.parse_args(argv)
    try:
        strip = frame_strip(iio.imread(args.video), args.frames, args.scale)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    iio.imwrite(args.output, strip)
    print(f"wrote {args.output}: {strip.shape[1]} x {strip.shape[0]} px")


if __name__ == "__main__":
    main()
