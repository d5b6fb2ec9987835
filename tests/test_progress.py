"""The progress bar of the scripts: its time estimate honours a wall-clock cap (--max-minutes),
and written to a file or a pipe it prints plain lines instead of redrawing with carriage returns;
collection, replay, imitation training and evaluation all show it."""

from __future__ import annotations

import io
import re

import pytest

from simulo_envs.progress import ProgressBar


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


def test_a_logged_line_shows_the_average_rate_since_the_start():
    # A training whose first iterations are slow (data loading) then fast: each line's rate is the
    # average so far (it stuck at the first lines' rate, 1.86 it/s, while the run did 40 it/s).
    stream, now = io.StringIO(), [0.0]
    bar = ProgressBar(total=2000, desc="training", unit="it", file=stream, line_interval_s=30.0)
    fake_clock(bar, now)
    for _ in range(100):                 # 100 iterations in 31 s
        now[0] += 0.31
        bar.update(1)
    for _ in range(1200):                # then 40 it/s for 30 s
        now[0] += 0.025
        bar.update(1)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("training: 1300/2000 its") and lines[-1].endswith(f"{1300 / 61:.2f}it/s]")
    during = [line for line in lines[1:-1] if "it/s" in line]
    assert during, lines
    for line in during:   # "training: N/2000 its (P%) [mm:ss<mm:ss, R it/s]": R = N / elapsed
        done = int(line.split(": ")[1].split("/")[0])
        minutes, seconds = line.split("[")[1].split("<")[0].split(":")
        rate = float(line.rsplit(", ", 1)[1].removesuffix("it/s]"))
        assert rate == pytest.approx(done / (60 * int(minutes) + int(seconds)), rel=0.05), line


def _lines(text: str, start: str) -> list[str]:
    assert "\r" not in text           # a log, not a terminal: no redraws piled into one line
    return [line for line in text.splitlines() if line.startswith(start)]


def test_a_collection_logs_plain_lines_with_its_frame_rate(tmp_path, capsys):
    from simulo_envs.datasets.collect import CollectSettings, collect

    summary = collect(CollectSettings("FrankaLift-v1", num_episodes=2, out=str(tmp_path / "ds"), num_envs=2))
    lines = _lines(capsys.readouterr().err, "FrankaLift-v1 -> ")
    assert lines[0].startswith(f"FrankaLift-v1 -> {tmp_path / 'ds'}: 0/2 eps (0%)")
    assert lines[-1].startswith(f"FrankaLift-v1 -> {tmp_path / 'ds'}: 2/2 eps (100%)")
    fps = float(re.search(r"fps=([0-9.]+)", lines[-1]).group(1))   # frames collected per second, from the start
    assert fps > 0 and abs(fps - summary["frames"] / summary["seconds"]) < 0.5 * fps


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("cap", ["max_minutes", "max_cpu_minutes"])
def test_training_logs_plain_lines_whose_estimate_keeps_to_the_time_cap(tmp_path, capsys, cap):
    from imitation_demos import expert_demos
    from simulo_envs.imitation import default_config
    from simulo_envs.imitation.trainer import train

    demos = expert_demos(str(tmp_path / "demos"), "FrankaPush-v1", 2, "state")
    capsys.readouterr()
    config = default_config("bc", "state", {"hidden": 32, "blocks": 1, "batch_size": 16, "iterations": 10_000_000})
    train(demos, config, str(tmp_path / "run"), log_every=10, **{cap: 0.05})   # 3 s of 10 million steps
    lines = _lines(capsys.readouterr().err, "bc FrankaPush-v1: ")
    assert len(lines) >= 2
    # [elapsed<remaining: never the hours 10 million steps would take; at most the cap (of CPU time, as
    # wall time at the run's share of a CPU: a loaded machine stretches it)
    limit = "00:03" if cap == "max_minutes" else "01:00"
    for line in lines[1:]:
        elapsed, remaining = re.search(r"\[(\d\d:\d\d)<(\d\d:\d\d)", line).groups()
        assert remaining <= limit and elapsed <= "01:00", line


def test_no_module_draws_its_own_tqdm_bar():
    """Every progress bar of the package, the scripts and the integrations is a ``ProgressBar``
    (plain lines off a terminal): a bare ``tqdm`` would write carriage returns into logs."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    files = [p for folder in ("simulo_envs", "scripts", "integrations", "tasks") for p in (root / folder).rglob("*.py")]
    assert len(files) > 100
    bare = [str(p.relative_to(root)) for p in files if p.name != "progress.py"
            and re.search(r"^\s*(from tqdm\b|import tqdm\b)", p.read_text(), re.MULTILINE)]
    assert bare == []


def test_a_replay_verification_logs_plain_lines(tmp_path, capsys):
    from simulo_envs.datasets.collect import CollectSettings, collect
    from simulo_envs.datasets.verify import verify

    collect(CollectSettings("FrankaLift-v1", num_episodes=2, out=str(tmp_path / "ds"), num_envs=2))
    capsys.readouterr()
    report = verify(str(tmp_path / "ds"), progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err and report["matched"] == 2
    lines = _lines(err, "verifying FrankaLift-v1")
    assert lines[-1].startswith("verifying FrankaLift-v1: 2/2 episodes (100%)")
