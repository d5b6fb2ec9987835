"""Normalisation statistics per feature, as LeRobot computes and stores them.

Source: LeRobot 0.4.4 ``lerobot/datasets/compute_stats.py`` (``compute_episode_stats``,
``aggregate_stats``); written here from its documented behaviour, no code copied.

- Each statistic dict holds ``min``, ``max``, ``mean``, ``std`` (population), ``count`` (int64
  ``(1,)``: the number of frames) and the quantiles ``q01 q10 q50 q90 q99``.
- Vector features ``(T, D)``: statistics over time, each ``(D,)``; scalar features ``(T,)``
  count as ``(T, 1)``, statistics ``(1,)``.
- Image and video features ``(T, H, W, 3)`` uint8: per channel over frames and pixels, divided
  by 255, each ``(3, 1, 1)`` (channel first, as LeRobot's tensors are). LeRobot samples at most
  about 100 frames per episode and downsizes frames wider than 300 px; here every frame counts at
  full size, so the numbers are exact rather than estimated.
- Across episodes (``aggregate``): min of mins, max of maxes, the count-weighted mean, the pooled
  variance ``sum(n_i (var_i + (mean_i - mean)^2)) / sum(n_i)``, and quantiles averaged with the
  counts as weights (LeRobot's approximation; exact quantiles of the union are not kept).

Per-episode quantiles are exact (``numpy.quantile``, linear interpolation) where LeRobot's
running histogram estimates them.
"""

from __future__ import annotations

import numpy as np

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
QUANTILE_KEYS = tuple(f"q{int(round(q * 100)):02d}" for q in QUANTILES)
STAT_KEYS = ("min", "max", "mean", "std", "count") + QUANTILE_KEYS


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """Statistics of a ``(T,)`` or ``(T, D)`` feature over its ``T`` frames (module docstring).

    Raises:
        ValueError: no frames.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    data = data.reshape(data.shape[0], -1)
    if data.shape[0] == 0:
        raise ValueError("statistics need at least one frame")
    out = {"min": data.min(0), "max": data.max(0), "mean": data.mean(0), "std": data.std(0),
           "count": np.array([data.shape[0]], dtype=np.int64)}
    for key, q in zip(QUANTILE_KEYS, np.quantile(data, QUANTILES, axis=0)):
        out[key] = q
    return out


def image_stats(frames: np.ndarray) -> dict[str, np.ndarray]:
    """Per-channel statistics of uint8 ``(T, H, W, C)`` frames, in [0, 1], each ``(C, 1, 1)``."""
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[0] == 0:
        raise ValueError(f"image statistics need (T >= 1, H, W, C) frames, got {frames.shape}")
    channels = frames.shape[-1]
    pixels = frames.reshape(-1, channels).astype(np.float64) / 255.0
    stats = vector_stats(pixels)
    stats = {k: (v if k == "count" else v.reshape(channels, 1, 1)) for k, v in stats.items()}
    stats["count"] = np.array([frames.shape[0]], dtype=np.int64)
    return stats


def aggregate(stats_list: list[dict[str, dict[str, np.ndarray]]]) -> dict[str, dict[str, np.ndarray]]:
    """Combine per-episode statistics ``[{feature: {stat: array}}]`` into dataset statistics
    (module docstring); a feature missing from some episodes is combined over the others."""
    keys: list[str] = []
    for stats in stats_list:
        keys += [k for k in stats if k not in keys]
    return {key: _aggregate_feature([s[key] for s in stats_list if key in s]) for key in keys}


def _aggregate_feature(items: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    counts = np.array([float(s["count"][0]) for s in items])
    total = counts.sum()
    shape = (-1,) + (1,) * (np.asarray(items[0]["mean"]).ndim)
    weights = (counts / total).reshape(shape)
    means = np.stack([s["mean"] for s in items])
    mean = (weights * means).sum(0)
    var = (weights * (np.stack([s["std"] for s in items]) ** 2 + (means - mean) ** 2)).sum(0)
    out = {"min": np.stack([s["min"] for s in items]).min(0), "max": np.stack([s["max"] for s in items]).max(0),
           "mean": mean, "std": np.sqrt(var), "count": np.array([int(total)], dtype=np.int64)}
    for key in QUANTILE_KEYS:
        if all(key in s for s in items):
            out[key] = (weights * np.stack([s[key] for s in items])).sum(0)
    return out


def to_json(stats: dict) -> dict:
    """``{feature: {stat: list}}`` for ``json.dump``."""
    return {k: {s: np.asarray(v).tolist() for s, v in d.items()} for k, d in stats.items()}


def from_json(data: dict) -> dict:
    """Inverse of ``to_json``: arrays (``count`` int64, the rest float64)."""
    return {k: {s: np.asarray(v, dtype=np.int64 if s == "count" else np.float64) for s, v in d.items()}
            for k, d in data.items()}
