"""Ctrl-C (SIGINT) or SIGTERM during scripts/evaluate.py or scripts/demo.py: one line with the
episodes finished and their success so far, the exit status 128 + the signal's number, and nothing
half-written (no CSV file or video, no folder the run made for them, no hidden partial file)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("rsl_rl")

import simulo_envs.training.evaluation as evaluation  # noqa: E402
from simulo_envs.output_paths import missing_folders, remove_empty_folders  # noqa: E402
from simulo_envs.progress import ProgressBar  # noqa: E402
from simulo_envs.training.interrupt import StopSignal, episodes_interrupted, note_finished  # noqa: E402
from script_runs import ROOT, load_script  # noqa: E402

CHECKPOINT = os.path.join(ROOT, "tasks", "franka_lift_ppo.pt")   # FrankaLift-v1: 9-step episodes, all succeed


def signal_after_episodes(monkeypatch, module, number: int, episodes: int) -> None:
    """Send this process signal ``number`` once ``module``'s progress bar counts ``episodes``."""
    class Signalling(ProgressBar):
        def update(self, n=1):
            super().update(n)
            if self.n >= episodes:
                os.kill(os.getpid(), number)

    monkeypatch.setattr(module, "ProgressBar", Signalling)


def handlers():
    return [signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)]


def test_the_line_counts_the_finished_episodes_and_their_successes():
    stop = StopSignal("SIGTERM")
    assert episodes_interrupted(stop, 10) == "interrupted by SIGTERM before the 10 episodes ended"
    note_finished(stop, [True, False, True])
    note_finished(stop, [True] * 5)   # an outer rollout's note does not replace the innermost's
    assert episodes_interrupted(stop, 10) == "interrupted by SIGTERM after 3 of 10 episodes: success so far 2 of 3 (66.7%)"
    stop = KeyboardInterrupt()
    note_finished(stop, [])
    assert episodes_interrupted(stop, 4) == "interrupted by SIGINT after 0 of 4 episodes"


def test_missing_folders_are_taken_back_only_while_empty(tmp_path):
    made = missing_folders(str(tmp_path / "a" / "b" / "c"))
    assert made == [str(tmp_path / "a" / "b" / "c"), str(tmp_path / "a" / "b"), str(tmp_path / "a")]
    os.makedirs(tmp_path / "a" / "b" / "c")
    (tmp_path / "a" / "keep.txt").write_text("x")
    remove_empty_folders(made)
    assert sorted(os.listdir(tmp_path / "a")) == ["keep.txt"] and missing_folders(str(tmp_path)) == []


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_evaluate_stopped_by_a_signal_says_what_finished_and_writes_nothing(tmp_path, capsys, monkeypatch, number):
    before = handlers()
    signal_after_episodes(monkeypatch, evaluation, number, 2)
    csv_path = tmp_path / "new" / "evaluations.csv"
    with pytest.raises(SystemExit) as stopped:
        load_script("evaluate").main(["--checkpoint", CHECKPOINT, "--episodes", "10", "--max-envs", "1",
                                      "--csv", str(csv_path)])
    name = signal.Signals(number).name
    assert stopped.value.code == 128 + number
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (f"interrupted by {name} after 2 of 10 episodes: success so far 2 of 2 "
                                            f"(100.0%); nothing written to {csv_path}")
    assert "Traceback" not in err and os.listdir(tmp_path) == []
    assert handlers() == before   # given back


def test_demo_stopped_by_a_signal_leaves_no_video_nor_the_folder_it_made(tmp_path, capsys, monkeypatch):
    demo = load_script("demo")
    signal_after_episodes(monkeypatch, demo, signal.SIGTERM, 2)
    video = tmp_path / "videos" / "demo.mp4"
    with pytest.raises(SystemExit) as stopped:
        demo.main(["--num-envs", "1", "--episodes", "5", "--policy", "random", "--env-id", "FrankaReach-v1",
                   "--video", str(video)])
    assert stopped.value.code == 143
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (f"interrupted by SIGTERM after 2 of 5 episodes: success so far 0 of 2 "
                                            f"(0.0%); no video written ({video})")
    assert os.listdir(tmp_path) == []


def _stopped_by(number: int, command: list[str], ignore_sigint: bool = False) -> tuple[int, str]:
    """Run ``command`` in a session of its own, send it ``number`` once its progress bar's first line
    is out, and return its exit status and stderr. ``ignore_sigint``: the command starts with
    SIGINT ignored, as a background job of a non-interactive shell does."""
    preexec = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=preexec)
    first = ""
    deadline = time.monotonic() + 120
    while "episodes" not in first and time.monotonic() < deadline and process.poll() is None:
        first = process.stderr.readline()
    os.killpg(process.pid, number)
    out, err = process.communicate(timeout=120)
    return process.returncode, first + err


@pytest.mark.e2e
def test_a_real_ctrl_c_reaches_demo_started_with_sigint_ignored(tmp_path):
    """A terminal's Ctrl-C to a new Python process that inherited SIGINT ignored: the handlers are
    installed all the same (``stop_at_once``, which scripts/evaluate.py shares; its stop by a real
    signal runs in process above, a new process costing seconds of CPU)."""
    video = tmp_path / "videos" / "demo.mp4"
    status, err = _stopped_by(signal.SIGINT, [sys.executable, "scripts/demo.py", "--num-envs", "1", "--episodes", "500",
                                              "--policy", "random", "--env-id", "FrankaReach-v1", "--video", str(video)],
                              ignore_sigint=True)
    assert status == 130 and "Traceback" not in err, err[-3000:]
    assert re.fullmatch(r"interrupted by SIGINT (before the 500 episodes ended|after \d+ of 500 episodes"
                        rf"(: success so far .*)?); no video written \({re.escape(str(video))}\)",
                        err.strip().splitlines()[-1]), err[-3000:]
    assert os.listdir(tmp_path) == []
