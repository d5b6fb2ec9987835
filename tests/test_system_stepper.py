"""The PhysX systems stepper's automatic thread count (``simulo_envs/sim/system_stepper.py``):
chosen by timing, probed again, and every system stepped once per substep whatever the choice."""

from __future__ import annotations

import threading

import pytest

from simulo_envs.sim import system_stepper
from simulo_envs.sim.system_stepper import AUTO_PROBE_INTERVAL, AUTO_WINDOW, SystemStepper


class _System:
    """Counts its steps and the threads that stepped it."""

    def __init__(self):
        self.steps = 0
        self.threads = set()

    def step(self):
        self.steps += 1
        self.threads.add(threading.get_ident())


class _Clock:
    """A clock whose step on ``slow`` threads takes ``slow_s`` and any other ``fast_s`` (per call pair)."""

    def __init__(self, stepper_ref, slow: int, slow_s: float = 2.0, fast_s: float = 1.0):
        self.now, self.started, self.ref, self.slow, self.slow_s, self.fast_s = 0.0, False, stepper_ref, slow, slow_s, fast_s

    def __call__(self):
        if self.started:  # the end of a step: advance by its cost on the thread count in use
            self.now += self.slow_s if self.ref[0].threads == self.slow else self.fast_s
        self.started = not self.started
        return self.now


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(system_stepper, "usable_cores", lambda: 2)


@pytest.mark.parametrize("slow", [1, 2])
def test_automatic_choice_takes_the_faster_count_and_probes_the_other(two_cores, slow):
    systems = [_System() for _ in range(4)]
    ref = [None]
    stepper = ref[0] = SystemStepper(systems, 0, clock=_Clock(ref, slow))
    used = []
    for _ in range(2 * AUTO_PROBE_INTERVAL):
        stepper.step(3)
        used.append(stepper.threads)
    stepper.close()
    fast = 3 - slow
    warmup = 2 * (AUTO_WINDOW // 2 + 1)
    assert used[:warmup] == [1, 2] * (AUTO_WINDOW // 2 + 1)
    probes = [k for k in range(warmup, len(used)) if used[k] == slow]
    assert probes == [AUTO_PROBE_INTERVAL - 1, 2 * AUTO_PROBE_INTERVAL - 1]  # steps 50 and 100
    assert all(system.steps == 3 * 2 * AUTO_PROBE_INTERVAL for system in systems)
    assert used.count(fast) == len(used) - warmup // 2 - len(probes)
    assert len(stepper.timings[slow]) == AUTO_WINDOW // 2 + 1 + len(probes)


def test_fixed_counts_and_one_system_take_no_timings(two_cores):
    one = SystemStepper([_System()], 0)
    assert (one.automatic, one.threads) == (False, 1)
    systems = [_System() for _ in range(3)]
    fixed = SystemStepper(systems, 5)
    assert (fixed.automatic, fixed.threads, fixed.timings) == (False, 3, {})
    fixed.step(2)
    fixed.close()
    assert [system.steps for system in systems] == [2, 2, 2]
