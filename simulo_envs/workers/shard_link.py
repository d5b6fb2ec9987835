"""The parent's link to the worker processes of a ``ShardedEnv``: how many workers and which
envs each holds, the processes' resources, sending requests and waiting for answers, faults.

A request goes to every shard at once and the parent waits for every answer, up to the env's
``timeout``. A worker that raises, dies (killed, crashed) or stays silent past the deadline
makes the call raise ``WorkerError`` naming the shard, its envs and pid, with the worker's
traceback (for a crash, the one ``faulthandler`` wrote to the shard's fault file); every worker is
then stopped and the env refuses further calls. The messages themselves and the worker loop
are in ``worker.py``.
"""

from __future__ import annotations

import os
import pickle
import time
from multiprocessing import connection
from typing import Optional, Union

import numpy as np

from simulo_envs.workers.worker import PICKLED

__all__ = ["SEGMENT_PREFIX", "WorkerError", "resolve_num_workers", "num_workers_arg", "shard_bounds",
           "ShardResources", "WorkerLinkMixin"]

SEGMENT_PREFIX = "simulo_shm_"
"""Shared-memory segments of sharded envs are named ``/dev/shm/simulo_shm_<parent pid>_<token>``."""


class WorkerError(RuntimeError):
    """A worker process of a ``ShardedEnv`` raised, died or stopped answering.

    Attributes: ``shard`` (index), ``env_ids`` (range of global env indices), ``pid``,
    ``worker_traceback`` (text, may be empty).
    """

    def __init__(self, message: str, shard: int, env_ids: range, pid: Optional[int], worker_traceback: str = ""):
        super().__init__(message)
        self.shard, self.env_ids, self.pid, self.worker_traceback = shard, env_ids, pid, worker_traceback


def resolve_num_workers(num_workers: Union[int, str], num_envs: int) -> int:
    """``"auto"``: the usable cores (``os.sched_getaffinity``), at most ``num_envs``; an int
    ``1 <= P <= num_envs`` as it is.

    Raises:
        ValueError: anything else, or more workers than envs.
    """
    if num_workers == "auto":
        return max(1, min(len(os.sched_getaffinity(0)), num_envs))
    if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)) or num_workers < 1:
        raise ValueError(f"num_workers must be an int >= 1 or 'auto', got {num_workers!r}")
    if num_workers > num_envs:
        raise ValueError(f"num_workers ({num_workers}) cannot exceed num_envs ({num_envs}): each worker needs an env")
    return int(num_workers)


def num_workers_arg(text: str) -> Union[int, str]:
    """argparse ``type=`` for ``--num-workers``: ``"auto"`` or an int >= 1.

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    import argparse

    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1 or 'auto', got {text!r}")
    return value


def shard_bounds(num_envs: int, num_workers: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` env ranges, sizes differing by at most one (larger first).

    >>> shard_bounds(5, 2)
    [(0, 3), (3, 5)]
    """
    base, extra = divmod(num_envs, num_workers)
    bounds, start = [], 0
    for s in range(num_workers):
        stop = start + base + (1 if s < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


class ShardResources:
    """Processes, pipes, segments and fault files of one ``ShardedEnv``; ``shutdown`` is its
    finalizer (it holds no reference to the env, so the env can be garbage collected)."""

    def __init__(self):
        self.processes: list = []
        self.conns: list = []
        self.segments: list = []
        self.fault_paths: list[str] = []

    def shutdown(self, grace: float = 5.0) -> None:
        """Ask every worker to exit, wait up to ``grace`` seconds in all, terminate (then kill) the ones left, and
        close the pipes and shared memory."""
        for conn, process in zip(self.conns, self.processes):
            if process.is_alive():
                try:
                    conn.send_bytes(b"c")
                except (OSError, ValueError):
                    pass
        deadline = time.monotonic() + grace
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.is_alive():
                process.terminate()
                process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join(1.0)
        for conn in self.conns:
            conn.close()
        for segment in self.segments:
            segment.close()
            try:
                segment.unlink()
            except FileNotFoundError:
                pass
        for path in self.fault_paths:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self.processes, self.conns, self.segments, self.fault_paths = [], [], [], []


class WorkerLinkMixin:
    """Talking to the workers, for ``ShardedEnv``; expects its ``_res`` (``ShardResources``),
    ``bounds``, ``num_workers``, ``timeout``, ``_fault``, ``_busy`` and ``close()``."""

    def _exchange(self, messages: list, what: str, pickled_replies: bool = False) -> list:
        """Send ``messages[s]`` to shard ``s``, wait for every answer; returns the replies as
        tuples ``("k", bitmap[, extras])`` or the unpickled ones."""
        conns = self._res.conns
        self._busy = True
        for s, message in enumerate(messages):
            try:
                conns[s].send_bytes(message)
            except (OSError, ValueError):
                self._fail(s, what, "its pipe is closed (the worker is gone)")
        deadline = time.monotonic() + self.timeout
        replies = [self._receive(s, deadline, what) for s in range(self.num_workers)]
        self._busy = False
        for s, reply in enumerate(replies):
            if reply[0] == "error":
                self._fail(s, what, "raised an exception", reply[1])
            if not pickled_replies and reply[0] not in ("k",):
                self._fail(s, what, f"answered {reply[0]!r} to a {what} request")
        return replies

    def _receive(self, shard: int, deadline: float, what: str) -> tuple:
        conn, process = self._res.conns[shard], self._res.processes[shard]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(shard, what, f"did not answer within {self.timeout:.0f} s")
            ready = connection.wait([conn, process.sentinel], timeout=remaining)
            if conn in ready or conn.poll():
                try:
                    message = conn.recv_bytes()
                except (EOFError, OSError):
                    self._fail(shard, what, self._death(process))
                if message[:1] == PICKLED:
                    return pickle.loads(message)
                return ("k", message[1:])
            if process.sentinel in ready:
                self._fail(shard, what, self._death(process))

    @staticmethod
    def _death(process) -> str:
        process.join(1.0)
        code = process.exitcode
        if code is not None and code < 0:
            import signal

            try:
                return f"died from signal {signal.Signals(-code).name}"
            except ValueError:
                return f"died from signal {-code}"
        return f"exited with code {code}"

    def _fail(self, shard: int, what: str, how: str, text: str = ""):
        res = self._res
        pid = res.processes[shard].pid if shard < len(res.processes) else None
        if not text and shard < len(res.fault_paths):
            try:
                with open(res.fault_paths[shard]) as f:
                    text = f.read().strip()
            except OSError:
                text = ""
        envs = self._env_range(shard)
        message = f"worker of shard {shard} (envs {envs.start}..{envs.stop - 1}, pid {pid}) {how} during {what}"
        if text:
            message += f"; its traceback:\n{text}"
        elif what == "start-up" and how.startswith("exited"):
            message += _BOOTSTRAP_HINT
        self._fault = message
        self.close()
        raise WorkerError(message, shard, envs, pid, text)

    def _env_range(self, shard: int) -> range:
        start, stop = self.bounds[shard]
        return range(start, stop)

    def _require_usable(self) -> None:
        if self._fault is not None:
            raise RuntimeError(f"this sharded env stopped after a worker fault; make a new one. The fault: {self._fault}")
        if self.closed:
            raise RuntimeError("this env is closed; make a new one")
        if self._busy:
            self._fault = "a call was interrupted (e.g. by Ctrl-C) while the workers were busy"
            self.close()
            raise RuntimeError(f"this sharded env is unusable: {self._fault}; make a new one")


# A worker that exits during start-up without a word died before it could build its env: while
# the spawn start method was re-importing the parent's main module in it.
_BOOTSTRAP_HINT = (" before it could build its env, while Python's spawn start method re-imported the main module "
                   "of this program in it (the worker's error is on its stderr). If the script makes the env at "
                   "import time, put that code under `if __name__ == \"__main__\":`.")
