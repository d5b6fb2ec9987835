"""Stop signals at the two ends of a script: while it loads its libraries, and after its work is done.

The scripts handle Ctrl-C (SIGINT) and SIGTERM while they work (``simulo_envs.training.interrupt``),
but that module, like every ``simulo_envs`` module, loads torch, SAPIEN and the tasks first, which
takes seconds. ``loading`` covers those seconds: a stop signal then prints one line, ``interrupted by
SIGINT while loading: nothing was run or written``, instead of a traceback through the import
machinery, and the script exits at once with ``128 + the signal's number`` (130, 143), the
shell's convention. ``after_the_work`` covers the end: once every result is printed and written, a
stop signal prints what was kept and ends the process at once; in the last second, while Python
frees torch and SAPIEN after its exit functions, a stop signal is ignored and the process ends as
it would have (status 0: the work is complete).

Only this file's standard-library imports run before the handlers are in place; it is imported
by path (``scripts/`` is put on ``sys.path`` by the script itself), so it works the same from any
folder. A module imported by a test (``__name__`` is not ``"__main__"``) changes no handler.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _name(number: int) -> str:
    return signal.Signals(number).name


@contextlib.contextmanager
def loading(module_name: str) -> Iterator[None]:
    """Within the block (a script's imports), a stop signal prints one line on stderr and exits with
    ``128 + number``; Python's own handlers are back after it. Does nothing unless ``module_name``
    is ``"__main__"`` (the script run as a program, not imported by a test)."""
    if module_name != "__main__":
        yield
        return

    def stop(number, frame):
        print(f"interrupted by {_name(number)} while loading: nothing was run or written", file=sys.stderr, flush=True)
        os._exit(128 + number)   # at once: an exception raised here could be swallowed by a library's import

    before = {number: signal.signal(number, stop) for number in SIGNALS}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def after_the_work(kept: str) -> None:
    """From now on a stop signal prints ``interrupted by SIGINT after the work was done: <kept>`` on
    stderr and ends the process at once (``os._exit``, status ``128 + number``), skipping the rest of
    the clean-up: every result is already printed and written. ``kept`` says what, e.g. ``every
    result printed; runs/x.csv written``. After Python's exit functions the signals are ignored
    (module docstring)."""
    def stop(number, frame):
        sys.stdout.flush()
        print(f"interrupted by {_name(number)} after the work was done: {kept}", file=sys.stderr, flush=True)
        os._exit(128 + number)

    for number in SIGNALS:
        signal.signal(number, stop)
    atexit.register(_ignore_signals)


def _ignore_signals() -> None:
    """Python's last step after the exit functions gives every Python signal handler back to the
    system's default (which would end the process silently, by the signal) while torch and SAPIEN
    free their memory; an ignored signal stays ignored, so the process ends as it would have."""
    for number in SIGNALS:
        signal.signal(number, signal.SIG_IGN)
