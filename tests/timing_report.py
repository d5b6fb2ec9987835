"""The suite's time budget: every run ends with its slowest tests, its total and the budget.

``make test`` must stay under ``BUDGET_S`` on CI's fresh 2-core machine while features land
(goal: ``GOAL_S``). Each test's cost is measured twice: wall time (pytest's own phase durations,
setup + call + teardown) and CPU time (this process, its threads, and the child processes it
waited for: scripts run by ``subprocess``, worker processes of sharded envs). On a busy machine
wall time says little; CPU time barely moves, and total CPU / workers estimates the wall time
of the same run on quiet cores.

The few long end-to-end runs the suite keeps carry ``@pytest.mark.e2e``; the report totals them
apart. An unmarked test costing more than ``LONG_TEST_S`` of CPU is listed after the slowest: make
it cheaper (share its fixture per module, shorten its run) or mark it ``e2e`` and merge it with
its neighbours. ``SIMULO_TEST_TIMES=path.json`` also writes every test's figures to that file.

Registered by ``tests/conftest.py``; under pytest-xdist each worker measures its tests and the
figures travel to the controller on the test reports, which prints the summary.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

BUDGET_S = 600.0
"""CI's limit for ``make test`` on a fresh 2-core machine [s]."""
GOAL_S = 360.0
"""What ``make test`` aims for on that machine from a fresh clone, the build of ``.venv`` included
(``.venv-lerobot`` built before: its first build is apart), leaving room for the next features [s].
Measured 2026-12-07 on a quiet 2-core AMD EPYC (the other users' processes stopped, load average
1.7 at start), a fresh clone after ``make lerobot-setup``: ``make test`` 4 min 48 s of wall time
(the build of ``.venv`` about 45 s, then the main suite's 2,310 passed in 4 min 03 s; the LeRobot
plugins' 35 in 1 min 35 s beside them), 538 s of CPU (all its processes, a cgroup's count; 95 %
of the two cores busy)."""
LONG_TEST_S = 20.0
"""CPU time above which an unmarked test is listed as over its share [s]."""
SHOWN = 15
"""How many of the slowest tests the summary lists."""


def _cpu_s() -> float:
    """CPU time of this process (all its threads), of its waited-for children and of its fork
    server with the workers it forked and waited for [s]."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime + _fork_server_cpu_s()


def _fork_server_cpu_s() -> float:
    """CPU time of this process's multiprocessing fork server (``simulo_envs/workers/start_method.py``
    starts worker processes from one) and of the workers it has waited for, from
    ``/proc/<pid>/stat`` (utime, stime, cutime, cstime); 0 where there is none. The server is a
    child that lives until this process ends, so ``RUSAGE_CHILDREN`` counts it only then. Its pid
    is a private attribute of ``multiprocessing.forkserver`` (Python 3.8-3.13)."""
    from multiprocessing import forkserver

    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    if not pid:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:  # not Linux, or the server has exited (then RUSAGE_CHILDREN holds it)
        return 0.0
    return sum(int(ticks) for ticks in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _clock(s: float) -> str:
    return f"{int(s // 60)}m{s % 60:04.1f}s"


class TimingReport:
    """Measures each test phase's CPU time where the test runs; collects and prints where the
    session reports (the only process without xdist, the controller with it)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.tests: dict[str, dict] = {}
        self.started = time.perf_counter()
        self.load_at_start = os.getloadavg()[0]
        self.cpu_at_start = _cpu_s()

    # ------------------------------------------------------------ where the test runs
    def _measured(self, item: pytest.Item, when: str):
        begin = _cpu_s()
        yield
        item.stash.setdefault(_CPU, {})[when] = _cpu_s() - begin

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._measured(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._measured(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield from self._measured(item, "teardown")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        # A plain attribute travels with the report from an xdist worker (TestReport keeps extras).
        report.cpu_s = item.stash.get(_CPU, {}).get(call.when, 0.0)

    # ------------------------------------------------------------ where the session reports
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(report.nodeid, {"wall_s": 0.0, "cpu_s": 0.0, "e2e": False, "outcome": "passed"})
        node = getattr(report, "node", None)  # the xdist worker that ran it (on the controller only)
        if node is not None:
            entry["worker"] = node.gateway.id
        entry["wall_s"] += report.duration
        entry["cpu_s"] += getattr(report, "cpu_s", 0.0)
        entry["e2e"] = entry["e2e"] or "e2e" in report.keywords
        if report.outcome != "passed" and entry["outcome"] == "passed":
            entry["outcome"] = report.outcome

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if not self.tests or hasattr(config, "workerinput"):  # an xdist worker: the controller reports
            return
        wall = time.perf_counter() - self.started
        workers = len(getattr(config.option, "tx", None) or ()) or 1  # xdist's workers, after -n auto / --maxprocesses
        tests = self.tests
        cpu = sum(t["cpu_s"] for t in tests.values())
        e2e = [t for t in tests.values() if t["e2e"]]
        # Everything the run cost: collection and imports in every worker too, once xdist's workers
        # have exited (they are this process's children); a lower bound while they have not.
        run_cpu = max(_cpu_s() - self.cpu_at_start, cpu)
        write = terminalreporter.write_line
        terminalreporter.section("time budget")
        write(f"{len(tests)} tests in {_clock(wall)} wall with {workers} worker(s); budget {_clock(BUDGET_S)} "
              f"on CI's 2 cores, goal {_clock(GOAL_S)}; load average {self.load_at_start:.1f} at start, "
              f"{os.getloadavg()[0]:.1f} at end ({os.cpu_count()} cores)")
        write(f"CPU time: tests {_clock(cpu)}, whole run {_clock(run_cpu)} (about {_clock(run_cpu / workers)} "
              f"of wall time on {workers} quiet core(s)); e2e-marked: {len(e2e)} tests, "
              f"{_clock(sum(t['cpu_s'] for t in e2e))} CPU")
        if wall > BUDGET_S:
            write(f"over the budget by {_clock(wall - BUDGET_S)} of wall time (meaningful on a quiet machine "
                  "only: compare the CPU estimate above)", yellow=True, bold=True)
        ranked = sorted(tests.items(), key=lambda kv: -max(kv[1]["cpu_s"], kv[1]["wall_s"]))
        write(f"slowest {min(SHOWN, len(ranked))} tests (wall s, CPU s):")
        for nodeid, t in ranked[:SHOWN]:
            write(f"{t['wall_s']:8.1f} {t['cpu_s']:8.1f}  {nodeid}{'  [e2e]' if t['e2e'] else ''}")
        long = [(n, t) for n, t in ranked if not t["e2e"] and t["cpu_s"] > LONG_TEST_S]
        if long:
            write(f"over {LONG_TEST_S:.0f} s of CPU and not marked e2e (make them cheaper, or merge and mark them):",
                  yellow=True)
            for nodeid, t in long:
                write(f"{t['wall_s']:8.1f} {t['cpu_s']:8.1f}  {nodeid}", yellow=True)
        path = os.environ.get("SIMULO_TEST_TIMES")
        if path:
            with open(path, "w") as f:
                json.dump({"wall_s": wall, "run_cpu_s": run_cpu, "workers": workers, "load_at_start": self.load_at_start,
                           "load_at_end": os.getloadavg()[0], "tests": tests}, f, indent=1)
            write(f"per-test times written to {path}")


_CPU = pytest.StashKey[dict]()


def register(config: pytest.Config) -> None:
    """Register the report once per process (called from ``tests/conftest.py``)."""
    if not config.pluginmanager.has_plugin("simulo-timing-report"):
        config.pluginmanager.register(TimingReport(config), "simulo-timing-report")
