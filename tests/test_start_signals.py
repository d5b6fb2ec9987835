"""A stop signal while a script loads its libraries, or after its work is done: one line, the
shell's exit status, no traceback (scripts/start_signals.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from script_runs import ROOT

SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
import start_signals  # noqa: E402


def catches(pid: int, number: int) -> bool:
    """Whether process ``pid`` has a handler of its own for signal ``number`` (/proc's SigCgt mask)."""
    with open(f"/proc/{pid}/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
    return bool(mask >> (number - 1) & 1)


@pytest.mark.parametrize("script, number", [("evaluate.py", signal.SIGINT), ("train.py", signal.SIGTERM)])
def test_a_stop_signal_while_the_libraries_load_prints_one_line(script, number):
    process = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, script), "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not catches(process.pid, signal.SIGTERM):   # Python catches SIGTERM only inside `loading`
        assert process.poll() is None and time.monotonic() < deadline, "the script never reached its imports"
        time.sleep(0.002)
    process.send_signal(number)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 128 + number and out == ""
    assert err == f"interrupted by {signal.Signals(number).name} while loading: nothing was run or written\n"


def run_python(body: str) -> tuple:
    """(exit status, stdout, stderr) of a fresh Python running ``body`` with start_signals importable."""
    code = "import atexit, os, signal, sys, time; sys.path.insert(0, sys.argv[1]); import start_signals\n" + body
    done = subprocess.run([sys.executable, "-c", code, SCRIPTS], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_a_stop_signal_after_the_work_says_what_was_kept():
    assert run_python("print('result'); start_signals.after_the_work('every result is printed and written')\n"
                      "os.kill(os.getpid(), signal.SIGINT); time.sleep(30)") == (
        130, "result\n", "interrupted by SIGINT after the work was done: every result is printed and written\n")


def test_loading_changes_no_handler_of_a_module_that_is_imported():
    before = [signal.getsignal(number) for number in start_signals.SIGNALS]
    with start_signals.loading("script_evaluate"):
        assert [signal.getsignal(number) for number in start_signals.SIGNALS] == before
    with start_signals.loading("__main__"):
        assert signal.getsignal(signal.SIGTERM) not in before
    assert [signal.getsignal(number) for number in start_signals.SIGNALS] == before


def test_a_stop_signal_while_loading_ends_the_process_even_where_a_library_swallows_exceptions():
    assert run_python("with start_signals.loading('__main__'):\n"
                      "    try:   # an import that catches everything, as some libraries' optional imports do\n"
                      "        os.kill(os.getpid(), signal.SIGTERM); time.sleep(30)\n"
                      "    except BaseException:\n"
                      "        pass\n"
                      "print('went on')") == (
        143, "", "interrupted by SIGTERM while loading: nothing was run or written\n")


def test_a_stop_signal_while_python_frees_the_libraries_is_ignored():
    assert run_python("atexit.register(os.kill, os.getpid(), signal.SIGINT)   # runs after those registered later\n"
                      "start_signals.after_the_work('everything is saved'); print('result')") == (0, "result\n", "")
