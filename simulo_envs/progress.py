"""Progress of a training or an evaluation, on tqdm: a live bar on a terminal, plain lines elsewhere.

On a terminal the bar redraws itself in place (carriage returns). Written to a file or a pipe
(a redirected log, a batch job), carriage returns would pile every redraw into one huge line, so
there each update is a plain line of its own, at most one every ``line_interval_s`` seconds, and
a last one when the bar closes; its rate is the average since the start (tqdm's moving average,
sampled once per line, would stick at the first lines' rate).

With a wall-clock cap (``deadline_s``: seconds from the bar's start, ``--max-minutes``), the time
estimate is the smaller of what the remaining units need at the current rate and what is left of
the cap: a training stopped by its cap ends then, whatever is left of its step budget.
"""

from __future__ import annotations

import sys
from typing import IO, Optional

from tqdm import tqdm

__all__ = ["ProgressBar", "is_terminal"]

TERMINAL_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
LINE_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit}s ({percentage:.0f}%) [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


def is_terminal(stream: IO) -> bool:
    """True when ``stream`` is an interactive terminal."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Lines:
    """A file for tqdm that turns each in-place redraw (``"\\r" + text``) into a line of its own."""

    def __init__(self, stream: IO):
        self.stream = stream

    def write(self, text: str) -> None:
        line = text.replace("\r", "").rstrip()
        if line:
            self.stream.write(line + "\n")

    def flush(self) -> None:
        self.stream.flush()


class ProgressBar(tqdm):
    """``tqdm`` with the behaviour of the module docstring.

    Args:
        total: units to do (env steps, episodes).
        desc, unit, unit_scale: as tqdm's.
        deadline_s: a wall-clock cap [s] from the bar's start, or None.
        file: where to write (default ``sys.stderr``).
        line_interval_s: seconds between plain lines when ``file`` is not a terminal.
        disable: show nothing.
        initial: units already done (a resumed training); the rate counts from here.
    """

    def __init__(self, total: Optional[int], desc: str = "", unit: str = "it", unit_scale: bool = False,
                 deadline_s: Optional[float] = None, file: Optional[IO] = None, line_interval_s: float = 30.0,
                 disable: bool = False, initial: int = 0):
        stream = sys.stderr if file is None else file
        self.deadline_s = deadline_s
        if is_terminal(stream):
            super().__init__(total=total, desc=desc, unit=unit, unit_scale=unit_scale, file=stream,
                             dynamic_ncols=True, bar_format=TERMINAL_FORMAT, disable=disable, initial=initial)
        else:
            super().__init__(total=total, desc=desc, unit=unit, unit_scale=unit_scale, file=_Lines(stream),
                             mininterval=line_interval_s, maxinterval=line_interval_s, bar_format=LINE_FORMAT,
                             disable=disable, initial=initial, smoothing=0)

    @property
    def format_dict(self) -> dict:
        """tqdm's, with ``remaining`` (the time estimate) capped by what is left of ``deadline_s``."""
        values = super().format_dict
        if not hasattr(self, "unit"):   # disabled from the start: tqdm keeps no state
            return values
        remaining = self.remaining_s(values)
        values["remaining"] = "?" if remaining is None else self.format_interval(remaining)
        return values

    def remaining_s(self, values: Optional[dict] = None) -> Optional[float]:
        """Seconds still to go: the remaining units at the current rate, at most what is left of
        ``deadline_s``; None while the rate is unknown and there is no deadline."""
        values = super().format_dict if values is None else values
        total, n, elapsed = values["total"], values["n"], values["elapsed"]
        done = n - values.get("initial", 0)
        rate = values["rate"] or (done / elapsed if done and elapsed else None)
        by_units = (total - n) / rate if rate and total else None
        if self.deadline_s is None:
            return by_units
        left = max(self.deadline_s - elapsed, 0.0)
        return left if by_units is None else min(by_units, left)
