"""Stopping a training cleanly on SIGINT (Ctrl-C) or SIGTERM (a scheduler, ``kill``, ``torchrun``
shutting its workers down).

``StopOnSignals`` replaces Python's default handlers while a training runs: the first signal only
records a request, which the training loop reads at its next safe point (between env steps, or
between PPO iterations when several ranks must stop together), then it saves a checkpoint and
returns. The same signal again within ``repeat_s`` seconds counts as the same request: ``torchrun``
forwards the signal a terminal already sent to every process of its group, so each rank sees
Ctrl-C twice. A second Ctrl-C after that raises ``KeyboardInterrupt`` at once (give up saving); a
second SIGTERM is ignored (the sender's own timeout, ``torchrun``'s 30 s, then kills the process).

Scripts that roll out episodes (``scripts/evaluate.py``, ``scripts/demo.py``) stop at once instead
(``stop_at_once``): the signal raises ``StopSignal`` (a ``KeyboardInterrupt``) where the program is,
the rollout notes the episodes finished so far on it (``note_finished``), its ``finally`` blocks
close the envs without writing a partial video, and the script prints one line
(``episodes_interrupted``) and exits with the signal's status; it writes no file it had not
finished.

Worker processes of a vector env ignore both signals (``simulo_envs/workers/worker.py``): the
training process closes them. The exit status of an interrupted script is ``128 + signal
number`` (130 for SIGINT, 143 for SIGTERM), the shell's convention.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from typing import Iterator, Optional

import torch
import torch.distributed as dist

__all__ = ["StopOnSignals", "TrainingInterrupted", "max_over_ranks", "exit_status", "evaluation_stopped_by_ctrl_c",
           "ctrl_c_while_starting", "loop_started", "nothing_saved", "StopSignal", "stop_at_once", "note_finished",
           "episodes_interrupted"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def nothing_saved(signal_name: str, when: str) -> str:
    """The one line a training script prints when a stop signal ended it before it saved anything
    in this session, e.g. ``interrupted by SIGINT while the training was starting: nothing new
    saved; the same command starts it again``: one wording whatever the moment (``when``) and the
    trainer."""
    return f"interrupted by {signal_name} {when}: nothing new saved; the same command starts it again"


_loop = {"started": False}
"""Whether a training loop that handles Ctrl-C itself has started since ``ctrl_c_while_starting``
was entered (``loop_started``; ``StopOnSignals`` on entry)."""


def loop_started() -> None:
    """Say that a training loop that handles Ctrl-C itself has started: from here on a
    ``KeyboardInterrupt`` passes through ``ctrl_c_while_starting`` (``StopOnSignals`` says it on
    entry; ``simulo_envs.imitation.trainer`` says it as its loop starts)."""
    _loop["started"] = True


@contextlib.contextmanager
def ctrl_c_while_starting() -> Iterator[None]:
    """Around a training script's start-up, from its plan line to its training loop (libraries
    imported, envs and networks built: seconds): a Ctrl-C there (``KeyboardInterrupt``) ends the
    script with one line on stderr and the exit status of SIGINT (130), instead of a traceback of
    whatever was loading. Nothing has been saved then, and the same command starts the run again
    (a folder without a checkpoint holds no run). Once the loop has started (``loop_started``),
    Ctrl-C is the loop's own, and a ``KeyboardInterrupt`` passes through.

    Raises:
        SystemExit: status 130, on ``KeyboardInterrupt`` before the loop started.
    """
    _loop["started"] = False
    try:
        yield
    except KeyboardInterrupt:
        if _loop["started"]:
            raise
        print(nothing_saved("SIGINT", "while the training was starting"), file=sys.stderr, flush=True)
        sys.exit(exit_status("SIGINT"))


class TrainingInterrupted(Exception):
    """Raised out of a training loop at a safe point after a stop signal; ``signal_name`` says which."""

    def __init__(self, signal_name: str):
        super().__init__(f"stopped by {signal_name}")
        self.signal_name = signal_name


class StopOnSignals:
    """Context manager: while inside, SIGINT and SIGTERM set ``requested`` (the signal's name)
    instead of ending the process (see the module docstring). Outside the main thread, where
    Python cannot install signal handlers, it does nothing.

    Args:
        repeat_s: a signal repeated within this many seconds of the first counts as the same request.
    """

    def __init__(self, repeat_s: float = 2.0):
        self.repeat_s = repeat_s
        self.requested: Optional[str] = None
        self._first_at = 0.0
        self._previous: dict = {}

    def __enter__(self) -> "StopOnSignals":
        loop_started()
        if threading.current_thread() is threading.main_thread():
            for number in SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _handle(self, number: int, frame) -> None:
        name = signal.Signals(number).name
        now = time.monotonic()
        if self.requested is None:
            self.requested, self._first_at = name, now
        elif number == signal.SIGINT and now - self._first_at > self.repeat_s:
            raise KeyboardInterrupt   # a second Ctrl-C: stop at once, without saving

    def check(self) -> None:
        """Raise ``TrainingInterrupted`` if a stop was requested."""
        if self.requested is not None:
            raise TrainingInterrupted(self.requested)


def max_over_ranks(values: list[float]) -> list[float]:
    """Each of ``values``, its maximum over the ranks of the process group (one all-reduce; every
    rank must call it), or ``values`` as they are without a group."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return [float(v) for v in values]
    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    tensor = torch.tensor([float(v) for v in values], device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return tensor.tolist()


def exit_status(signal_name: str) -> int:
    """The shell's exit status for a process ended by ``signal_name``: 128 + its number."""
    return 128 + int(signal.Signals[signal_name])


@contextlib.contextmanager
def evaluation_stopped_by_ctrl_c(checkpoint: str) -> Iterator[None]:
    """Around the evaluation a training script runs after training (``--eval-episodes``): a Ctrl-C
    there stops the script with one line on stderr naming the saved ``checkpoint`` and the command
    that evaluates it, and the exit status of SIGINT (130), instead of a traceback.

    Raises:
        SystemExit: status 130, on ``KeyboardInterrupt`` inside the block.
    """
    try:
        yield
    except KeyboardInterrupt:
        print(f"\nevaluation stopped by Ctrl-C; the model is saved: python scripts/evaluate.py --checkpoint "
              f"{checkpoint} evaluates it", file=sys.stderr, flush=True)
        sys.exit(exit_status("SIGINT"))


class StopSignal(KeyboardInterrupt):
    """Raised where the program is when SIGINT or SIGTERM arrives inside ``stop_at_once``;
    ``signal_name`` says which. A ``KeyboardInterrupt``, so every ``finally`` and ``except
    KeyboardInterrupt`` on the way treats a SIGTERM as it treats a Ctrl-C."""

    def __init__(self, signal_name: str):
        super().__init__(signal_name)
        self.signal_name = signal_name


@contextlib.contextmanager
def stop_at_once() -> Iterator[None]:
    """While inside (in the main thread), SIGINT and SIGTERM raise ``StopSignal``. The handlers
    are installed whatever they were before: a command started in the background of a
    non-interactive shell (``cmd &``) inherits SIGINT ignored, and would otherwise not stop on
    ``kill -INT``. Signals arriving after the first, while the ``finally`` blocks close the envs,
    are ignored. The handlers before are given back on exit. Outside the main thread it does
    nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = []

    def handle(number: int, frame) -> None:
        if not raised:
            raised.append(number)
            raise StopSignal(signal.Signals(number).name)

    previous = {number: signal.signal(number, handle) for number in SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def note_finished(stop: BaseException, successes) -> None:
    """Note on ``stop`` (a ``KeyboardInterrupt`` or ``StopSignal`` passing through a rollout) the
    success (bool) of each episode finished before it, as ``stop.finished``, for
    ``episodes_interrupted``. The first note (the innermost rollout's) is kept."""
    if getattr(stop, "finished", None) is None:
        stop.finished = [bool(success) for success in successes]


def episodes_interrupted(stop: BaseException, total: int) -> str:
    """The line a script prints when ``stop`` ended its rollout of ``total`` episodes: ``interrupted
    by SIGINT after 3 of 10 episodes: success so far 2 of 3 (66.7%)``; without a note of the finished
    episodes (``note_finished``), ``interrupted by SIGINT before the 10 episodes ended``."""
    name = getattr(stop, "signal_name", "SIGINT")
    finished = getattr(stop, "finished", None)
    if finished is None:
        return f"interrupted by {name} before the {total} episodes ended"
    line = f"interrupted by {name} after {len(finished)} of {total} episodes"
    if finished:
        line += f": success so far {sum(finished)} of {len(finished)} ({sum(finished) / len(finished):.1%})"
    return line
