"""Distributions of a randomization table: ``Uniform``, ``LogUniform``, ``Gaussian``, ``Choice``.

Each draws the values of ONE env from that env's own ``numpy.random.Generator``, with the shape of
the parameter it randomizes (``()`` for a mass, ``(3,)`` for an RGB colour, ``(J,)`` for J
joints): scalar bounds apply to every element; array bounds broadcast against that shape (a
per-joint range, a per-channel colour range). Elements are drawn independently, except
``Choice``, which picks one whole entry per env. Each also states its support (``support``),
so a table can be checked against a parameter's valid range before anything is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np


def _array(value: Any, name: str) -> np.ndarray:
    try:
        out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    if not np.isfinite(out).all():
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


def _fits(array: np.ndarray, shape: tuple, name: str) -> None:
    try:
        np.broadcast_to(array, shape)
    except ValueError:
        raise ValueError(f"{name} of shape {array.shape} does not broadcast to the parameter's shape {shape}") from None


class Distribution:
    """Base class: ``sample(gen, shape)`` -> float64 ``shape``; ``support(shape)`` -> (low, high)."""

    def sample(self, gen: np.random.Generator, shape: tuple) -> np.ndarray:  # pragma: no cover - abstract
        """``shape``-shaped float64 draws from ``gen``."""
        raise NotImplementedError

    def support(self, shape: tuple) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        """``(low, high)``, each ``shape``-shaped: the smallest box holding every draw.

        Raises:
            ValueError: a parameter whose shape does not broadcast to ``shape``."""
        raise NotImplementedError

    def check(self, shape: tuple) -> None:
        """Raise ValueError if the distribution's parameters do not broadcast to ``shape``."""
        self.support(shape)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on ``[low, high)`` (``numpy.random.Generator.uniform``); ``low <= high``."""

    low: Any
    high: Any

    def __post_init__(self):
        low, high = _array(self.low, "Uniform.low"), _array(self.high, "Uniform.high")
        if (np.broadcast_to(low, np.broadcast_shapes(low.shape, high.shape))
                > np.broadcast_to(high, np.broadcast_shapes(low.shape, high.shape))).any():
            raise ValueError(f"Uniform needs low <= high, got low={self.low!r}, high={self.high!r}")

    def sample(self, gen, shape):
        return gen.uniform(np.asarray(self.low, np.float64), np.asarray(self.high, np.float64), shape)

    def support(self, shape):
        low, high = _array(self.low, "Uniform.low"), _array(self.high, "Uniform.high")
        _fits(low, shape, "Uniform.low")
        _fits(high, shape, "Uniform.high")
        return np.broadcast_to(low, shape), np.broadcast_to(high, shape)


@dataclass(frozen=True)
class LogUniform(Distribution):
    """``exp(Uniform(log low, log high))``: every factor of 2 within the range equally likely
    (gains, masses); ``0 < low <= high``."""

    low: Any
    high: Any

    def __post_init__(self):
        low, high = _array(self.low, "LogUniform.low"), _array(self.high, "LogUniform.high")
        if (low <= 0).any() or (high <= 0).any():
            raise ValueError(f"LogUniform needs low > 0 and high > 0, got low={self.low!r}, high={self.high!r}")
        Uniform(np.log(low), np.log(high))  # low <= high

    def sample(self, gen, shape):
        return np.exp(gen.uniform(np.log(np.asarray(self.low, np.float64)), np.log(np.asarray(self.high, np.float64)), shape))

    def support(self, shape):
        return Uniform(self.low, self.high).support(shape)


@dataclass(frozen=True)
class Gaussian(Distribution):
    """Normal with ``mean`` and standard deviation ``std`` (>= 0), clipped to ``clip = (low, high)``
    when given (needed where the parameter has a bounded range: a mass, a friction)."""

    mean: Any
    std: Any
    clip: Optional[tuple] = None

    def __post_init__(self):
        _array(self.mean, "Gaussian.mean")
        if (_array(self.std, "Gaussian.std") < 0).any():
            raise ValueError(f"Gaussian needs std >= 0, got {self.std!r}")
        if self.clip is not None:
            if not isinstance(self.clip, (tuple, list)) or len(self.clip) != 2:
                raise ValueError(f"Gaussian.clip must be (low, high), got {self.clip!r}")
            Uniform(*self.clip)

    def sample(self, gen, shape):
        out = gen.normal(np.asarray(self.mean, np.float64), np.asarray(self.std, np.float64), shape)
        if self.clip is not None:
            out = np.clip(out, np.asarray(self.clip[0], np.float64), np.asarray(self.clip[1], np.float64))
        return out

    def support(self, shape):
        mean, std = _array(self.mean, "Gaussian.mean"), _array(self.std, "Gaussian.std")
        _fits(mean, shape, "Gaussian.mean")
        _fits(std, shape, "Gaussian.std")
        if self.clip is not None:
            return Uniform(*self.clip).support(shape)
        inf = np.full(shape, math.inf)
        return -inf, inf


@dataclass(frozen=True)
class Choice(Distribution):
    """One of ``values`` per env, with probabilities ``weights`` (default equal). Each value is a
    number or an array of the parameter's shape (a whole RGB colour, a whole joint vector)."""

    values: Sequence
    weights: Optional[Sequence[float]] = None

    def __post_init__(self):
        if isinstance(self.values, (str, bytes)) or not hasattr(self.values, "__len__") or not len(self.values):
            raise ValueError(f"Choice needs a non-empty sequence of values, got {self.values!r}")
        object.__setattr__(self, "values", tuple(self.values))
        for value in self.values:
            _array(value, "Choice value")
        if self.weights is not None:
            weights = _array(self.weights, "Choice.weights")
            if weights.shape != (len(self.values),) or (weights < 0).any() or weights.sum() <= 0:
                raise ValueError(f"Choice.weights must be {len(self.values)} numbers >= 0 with a positive sum, "
                                 f"got {self.weights!r}")
            object.__setattr__(self, "weights", tuple(float(w) for w in weights))

    def _table(self, shape):
        rows = []
        for value in self.values:
            value = _array(value, "Choice value")
            _fits(value, shape, "Choice value")
            rows.append(np.broadcast_to(value, shape))
        return np.stack(rows)

    def sample(self, gen, shape):
        p = None if self.weights is None else np.asarray(self.weights) / sum(self.weights)
        return self._table(shape)[gen.choice(len(self.values), p=p)].copy()

    def support(self, shape):
        table = self._table(shape)
        return table.min(axis=0), table.max(axis=0)
