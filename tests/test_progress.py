"""The progress bar of the scripts: its time estimate honours a wall-clock cap (--max-minutes),
and written to a file or a pipe it prints plain lines instead of redrawing with carriage returns."""

from __future__ import annotations

import io

from simulo_envs.training.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def fake_clock(bar: ProgressBar, now: list) -> None:
    bar._time = lambda: now[0]
    bar.start_t = bar.last_print_t = now[0]


def test_the_estimate_is_the_smaller_of_the_steps_left_and_the_time_left():
    bar = ProgressBar(total=1000, deadline_s=5.0, file=io.StringIO())
    values = {"rate": 10.0, "total": 1000, "n": 100, "elapsed": 2.0, "initial": 0}
    assert bar.remaining_s(values) == 3.0                       # 90 s of steps, 3 s of cap left
    assert bar.remaining_s({**values, "n": 990}) == 1.0         # 1 s of steps left
    assert bar.remaining_s({**values, "elapsed": 9.0}) == 0.0   # past the cap
    uncapped = ProgressBar(total=1000, file=io.StringIO())
    assert uncapped.remaining_s(values) == 90.0
    assert uncapped.remaining_s({**values, "rate": None}) == 18.0    # the mean rate: 100 done in 2 s, 900 left
    resumed = ProgressBar(total=1000, file=io.StringIO(), initial=600)
    assert resumed.remaining_s({**values, "rate": None, "n": 700, "initial": 600}) == 6.0   # 100 in 2 s
    for b in (bar, uncapped, resumed):
        b.close()


def test_a_capped_bar_shows_the_cap_in_its_line():
    stream, now = io.StringIO(), [100.0]
    bar = ProgressBar(total=10_000, desc="FrankaReach-v1", unit="step", deadline_s=60.0, file=stream,
                      line_interval_s=0.0)
    fake_clock(bar, now)
    now[0] += 20.0
    bar.update(100)          # 5 steps/s: 99 minutes of steps, but 40 s left of the cap
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) >= 2
    assert lines[-1].startswith("FrankaReach-v1: 100/10000 steps (1%) [00:20<00:40"), lines[-1]


def test_plain_lines_off_a_terminal_and_redraws_on_one():
    stream, now = io.StringIO(), [0.0]
    bar = ProgressBar(total=4, desc="evaluating", unit="episode", file=stream, line_interval_s=10.0)
    fake_clock(bar, now)
    for _ in range(4):
        now[0] += 1.0
        bar.update(1)        # within 10 s of the last line: no new line
    now[0] += 11.0
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and stream.getvalue().endswith("\n")
    assert lines[0].startswith("evaluating: 0/4 episodes (0%)") and lines[-1].startswith("evaluating: 4/4 episodes (100%)")
    assert len(lines) == 2

    terminal = Terminal()
    bar = ProgressBar(total=4, desc="evaluating", unit="episode", file=terminal)
    bar.update(4)
    bar.close()
    assert "\r" in terminal.getvalue() and "4/4" in terminal.getvalue()
