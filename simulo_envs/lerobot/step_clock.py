"""``StepClock``: how far a simulated follower advances its physics at each call of its driver.

A real follower arm moves on its own while the control loop renders, infers or sleeps; a
simulation moves only when it is stepped. Two ways to step it:

- real time (``real_time=True``, for a person teleoperating): at every call (an observation or
  an action) the simulation catches up with the wall clock, whole control periods at a time,
  holding the last joint targets. A driver calling faster than the control rate sees the sim
  advance on every other call; a slower one sees several periods per call, up to
  ``max_catch_up`` (time beyond that is dropped, so that a stall does not replay as a burst, and
  counted in ``dropped_s``).
- lockstep (``real_time=False``, for a policy or a replay): every action advances exactly one
  control period, however long the driver took to compute it and however fast it calls; an
  observation never advances. The sim never waits: it runs as fast as its driver.

The clock only counts; the follower (``follower.py``) does the stepping. Times are seconds of
``time.perf_counter`` (or the injected ``now``).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Optional


class StepClock:
    """Control periods due at each call (module docstring).

    Args:
        period: the control period [s] (1 / control rate).
        real_time: True: follow the wall clock; False: lockstep, one period per action.
        max_catch_up: the most periods one call advances in real time (>= 1).
        now: the wall clock [s] (``time.perf_counter``; tests pass their own).

    Raises:
        ValueError: ``period <= 0`` or ``max_catch_up < 1``.
    """

    def __init__(self, period: float, real_time: bool, max_catch_up: int = 5,
                 now: Callable[[], float] = time.perf_counter):
        if not period > 0:
            raise ValueError(f"period must be > 0 [s], got {period!r}")
        if int(max_catch_up) < 1:
            raise ValueError(f"max_catch_up must be >= 1 control period, got {max_catch_up!r}")
        self.period = float(period)
        self.real_time = bool(real_time)
        self.max_catch_up = int(max_catch_up)
        self._now = now
        self.dropped_s = 0.0
        """Wall-clock time the real-time sim skipped, since construction [s]."""
        self.restart()

    def restart(self) -> None:
        """A new episode: the next call anchors the sim's time 0 to the wall clock."""
        self._anchor: Optional[float] = None
        self.steps = 0
        """Control periods stepped since ``restart``."""

    @property
    def sim_time(self) -> float:
        """Simulated time since ``restart`` [s]."""
        return self.steps * self.period

    def due(self, action: bool) -> int:
        """Control periods to step now, at a call that brings an action (``action=True``) or asks
        for an observation; counted as stepped (the caller steps them)."""
        if not self.real_time:
            n = 1 if action else 0
        else:
            now = self._now()
            if self._anchor is None:
                self._anchor = now
            # to the nearest period, not down: a driver calling at the control rate with a little
            # jitter steps one period per call instead of alternating 0 and 2.
            n = max(0, math.floor((now - self._anchor) / self.period + 0.5) - self.steps)
            if n > self.max_catch_up:
                skipped = n - self.max_catch_up
                self._anchor += skipped * self.period
                self.dropped_s += skipped * self.period
                n = self.max_catch_up
        self.steps += n
        return n
