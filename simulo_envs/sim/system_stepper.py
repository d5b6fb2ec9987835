"""Stepping many independent PhysX CPU systems (``SimConfig.isolate_envs``) on several threads.

With one ``PhysxCpuSystem`` per env, a physics step is N small solves instead of one. SAPIEN
3.0.3 releases Python's GIL inside ``PhysxCpuSystem.step`` (measured: two threads stepping 8
systems each finish in about half the time of one thread stepping all 16), and PhysX lets
threads simulate different scenes at the same time (PhysX 5 guide, "Threading": objects of
different scenes may be accessed from different threads). So the systems are handed out to
``threads`` threads, each taking the next unstepped system until none is left (a thread the OS
delays holds up at most one system).

Threads pay only where a core is free for them: each step hands work to the pool and waits for
its last system, and a pool thread that the OS preempts for another process's time slice holds
the whole step up for that slice. Measured on 2 cores with one core busy with other work (SAPIEN
3.0.3, FrankaLift-v1 at 16 envs): two threads ran 0.64x the shared system's env steps/s where
one thread ran 0.88x. So by default (``threads=0``) the stepper chooses by measurement: it times
its own steps (wall clock per system and substep) on one thread and on one thread per usable
core, alternating until each has ``AUTO_WINDOW // 2 + 1`` timings, then steps with whichever has
the lower median of its last ``AUTO_WINDOW`` timings, and every ``AUTO_PROBE_INTERVAL`` steps
takes one step with the other, so the choice follows the machine's load as it changes.

Results do not depend on the thread count: a system's step reads and writes only that system,
its PhysX solve runs on the thread that calls ``step`` (``SimConfig.num_threads = 0``), and each
system is stepped by one thread at a time, its substeps in order. Stepping system by system
(all substeps of one system, then the next) instead of substep by substep keeps each system's
data in the CPU cache (about 10 % less physics time at 16 and 64 envs, measured with SAPIEN
3.0.3); it is used when nothing runs between substeps.
"""

from __future__ import annotations

import collections
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional, Sequence

__all__ = ["AUTO_PROBE_INTERVAL", "AUTO_WINDOW", "SystemStepper", "usable_cores"]

AUTO_WINDOW = 5
"""Timings per thread count whose median decides the automatic choice."""

AUTO_PROBE_INTERVAL = 50
"""Steps between two probes of the thread count not chosen (automatic choice)."""


def usable_cores() -> int:
    """CPU cores this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` where
    the platform has no affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class SystemStepper:
    """Steps a list of independent PhysX CPU systems, on one thread or several at once.

    Args:
        systems: the systems (one per env with ``isolate_envs``).
        threads: threads stepping at once, >= 0 (the calling thread is one of them), capped at
            ``len(systems)``: 1 steps every system on the calling thread; 0 (automatic) chooses
            between 1 and ``usable_cores()`` by timing the steps (module docstring).
        clock: seconds, monotonic (``time.perf_counter``; a test may pass its own).

    ``threads`` (attribute): the count the last step used. ``automatic``: whether it is chosen
    by measurement. ``timings``: ``{count: deque of seconds per system and substep}``, the
    automatic choice's last ``AUTO_WINDOW`` timings per count (empty when fixed).
    """

    def __init__(self, systems: Sequence, threads: int = 0, clock: Callable[[], float] = time.perf_counter):
        self.systems = list(systems)
        self.automatic = int(threads) == 0
        most = max(1, min(usable_cores() if self.automatic else int(threads), len(self.systems)))
        self.threads = 1 if self.automatic else most
        self._counts = (1, most) if self.automatic and most > 1 else (self.threads,)
        self.automatic = len(self._counts) > 1
        self.timings = {count: collections.deque(maxlen=AUTO_WINDOW) for count in self._counts} if self.automatic else {}
        self._medians = {count: float("inf") for count in self._counts}  # median of each count's timings
        self._clock = clock
        self._steps = 0
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_size = max(self._counts) - 1
        self._lock = threading.Lock()

    def _choose(self) -> int:
        """The thread count for the next step (automatic choice; module docstring)."""
        fewest = min(self._counts, key=lambda count: len(self.timings[count]))
        if len(self.timings[fewest]) <= AUTO_WINDOW // 2:
            return fewest
        best = min(self._counts, key=self._medians.__getitem__)
        if self._steps % AUTO_PROBE_INTERVAL == 0:
            return next(count for count in self._counts if count != best)
        return best

    def step(self, substeps: int = 1) -> None:
        """Advance every system by ``substeps`` PhysX steps (each system's substeps in order).

        Raises the first exception a system's step raised, after every thread has finished."""
        if not self.automatic:
            if self.threads == 1:  # _step_on's one-thread loop, inline (every step of a shared system)
                for system in self.systems:
                    for _ in range(substeps):
                        system.step()
            else:
                self._step_on(self.threads, substeps)
            return
        self._steps += 1
        count = self.threads = self._choose()
        start = self._clock()
        self._step_on(count, substeps)
        timings = self.timings[count]
        timings.append((self._clock() - start) / (len(self.systems) * substeps))
        # Only this count's timings changed: its median is taken again, the other's is kept (one
        # median per step, not one per count in every _choose).
        self._medians[count] = statistics.median(timings)

    def _step_on(self, threads: int, substeps: int) -> None:
        systems = self.systems
        if threads == 1:
            if substeps == 1:
                for system in systems:
                    system.step()
            else:
                for system in systems:
                    for _ in range(substeps):
                        system.step()
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._pool_size, thread_name_prefix="simulo-physx")
        order = iter(range(len(systems)))

        def work() -> None:
            while True:
                with self._lock:
                    k = next(order, None)
                if k is None:
                    return
                system = systems[k]
                for _ in range(substeps):
                    system.step()

        futures = [self._pool.submit(work) for _ in range(threads - 1)]
        error = None
        try:
            work()
        except BaseException as exc:  # the other threads finish first, then it propagates
            error = exc
        for future in futures:
            try:
                future.result()
            except BaseException as exc:
                error = error or exc
        if error is not None:
            raise error

    def close(self) -> None:
        """Stop the threads (the systems stay usable, stepped on the calling thread)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.threads = 1
        self.automatic = False
        self._counts = (1,)
