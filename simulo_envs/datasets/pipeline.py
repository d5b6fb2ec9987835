"""Moving episodes from where they are simulated to the dataset writer.

- ``WriterThread``: the writer works in a thread of its own, fed by a queue; each commit takes
  every episode waiting (``add_many``), so slow disk syncs never hold up the simulation and
  never fall behind it. A finished episode is queued the moment it ends and committed within one
  commit's time. A write error stops the thread and is raised to the producer at its next
  ``put`` (or at ``close``).
- ``WorkerPool``: ``P`` processes (forked from the fork server of ``workers/start_method.py``,
  one torch thread each) that each run
  the generator ``target(worker_index, *args, stop_event)``, whose items (and ``READY`` once it
  is set up, an error's traceback, its end) come back through one queue. The pool hands their items
  out one by one, notices a worker that died without a word (killed, crashed: ``WorkerFailed``
  naming it and its exit code), and ``close()`` stops them all (politely, then SIGTERM, then
  SIGKILL).
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from typing import Any, Callable, Iterator, Optional

from simulo_envs.datasets.errors import DatasetError, DatasetWriteError
from simulo_envs.workers.start_method import inherit_environment, worker_context


READY = "ready"
"""What a worker's target yields once it is set up (its env built): the pool notes the time."""


def close_uninterrupted(sink, error: Optional[BaseException]) -> Optional[BaseException]:
    """Close ``sink`` (a dataset writer) with Ctrl-C held off, so the finished episodes are
    committed whole, then give SIGINT its handler back. Returns ``error``, or the
    ``DatasetError`` the close raised when ``error`` is None."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sink.close()
    except DatasetError as exc:
        error = error or exc
    finally:
        signal.signal(signal.SIGINT, previous)
    return error


class WorkerFailed(RuntimeError):
    """A worker process raised (its traceback is in the message) or died."""


class WriterThread:
    """A dataset writer fed from a queue by a thread of its own (module docstring).

    Args:
        writer: a ``LeRobotWriter`` or ``HDF5Writer``.
        on_commit: called in the writer thread after each commit with the committed episodes.
    """

    def __init__(self, writer, on_commit: Optional[Callable[[list], None]] = None):
        self.writer = writer
        self.on_commit = on_commit
        self.error: Optional[BaseException] = None
        self.committed = 0
        self.committed_frames = 0
        self._queue: "queue.Queue" = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="dataset-writer", daemon=False)
        self._thread.start()

    def put(self, episode) -> None:
        """Queue a finished episode for the next commit. Raises the writer's error (a
        ``DatasetWriteError``) once a commit has failed."""
        if self.error is not None:
            raise self.error
        self._queue.put(episode)

    def close(self) -> None:
        """Commit everything queued, stop the thread; raise the writer's error if a commit failed."""
        self._queue.put(None)
        self._thread.join()
        self.writer.close()
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            done = batch[-1] is None
            episodes = [e for e in batch if e is not None]
            if episodes and self.error is None:
                try:
                    self.writer.add_many(episodes)
                    self.committed += len(episodes)
                    self.committed_frames += sum(e.length for e in episodes)
                    if self.on_commit is not None:
                        self.on_commit(episodes)
                except DatasetWriteError as error:
                    self.error = error
                except BaseException as error:  # a bug: keep it for the producer, stop writing
                    self.error = error
            if done:
                return


class WorkerPool:
    """Worker processes producing items (module docstring).

    Args:
        target: a module-level function ``target(worker_index, *args, out, stop)``.
        args: per worker, its extra positional arguments.
    """

    def __init__(self, target: Callable, args: list[tuple], queue_size: int = 64):
        ctx = worker_context()
        self.stop = ctx.Event()
        self.queue = ctx.Queue(maxsize=queue_size)
        self.processes = []
        for index, extra in enumerate(args):
            process = ctx.Process(target=_run_worker, name=f"dataset-worker-{index}", daemon=True,
                                  args=(target, index, extra, self.queue, self.stop, dict(os.environ)))
            process.start()
            self.processes.append(process)
        self._done = [False] * len(args)
        self.ready_at: list = [None] * len(args)  # time.perf_counter() when each worker was set up

    def items(self) -> Iterator[Any]:
        """Each worker's items as they come, until every worker has said it is done.

        Raises:
            WorkerFailed: a worker raised (its traceback in the message) or died silently.
        """
        while not all(self._done):
            try:
                kind, index, payload = self.queue.get(timeout=0.5)
            except queue.Empty:
                for i, process in enumerate(self.processes):
                    if not self._done[i] and not process.is_alive():
                        try:  # its last words may still be in the pipe
                            kind, index, payload = self.queue.get(timeout=2.0)
                            break
                        except queue.Empty:
                            raise WorkerFailed(f"worker {i} (pid {process.pid}) died with exit code "
                                               f"{process.exitcode} without a word (killed, or out of memory?)") from None
                else:
                    continue
            if kind == "done":
                self._done[index] = True
            elif kind == "ready":
                self.ready_at[index] = time.perf_counter()
            elif kind == "error":
                raise WorkerFailed(f"worker {index} raised:\n{payload}")
            else:
                yield payload

    def close(self, grace: float = 10.0) -> None:
        """Ask every worker to stop, wait up to ``grace`` s, then terminate and kill."""
        self.stop.set()
        deadline = time.monotonic() + grace
        while any(p.is_alive() for p in self.processes) and time.monotonic() < deadline:
            try:  # keep the queue drained so no worker blocks on a full pipe
                self.queue.get(timeout=0.1)
            except queue.Empty:
                pass
        for process in self.processes:
            if process.is_alive():
                process.terminate()
                process.join(2.0)
            if process.is_alive():
                process.kill()
                process.join(2.0)
        self.queue.cancel_join_thread()
        self.queue.close()


def _run_worker(target: Callable, index: int, extra: tuple, out, stop, environ: Optional[dict] = None) -> None:
    if environ is not None:
        inherit_environment(environ)
    import signal
    import traceback

    import torch

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent; it stops the workers
    torch.set_num_threads(1)
    try:
        for item in target(index, *extra, stop):
            if isinstance(item, str) and item == READY:
                out.put(("ready", index, None))
                continue
            out.put(("episode", index, item))
            if stop.is_set():
                break
        out.put(("done", index, None))
    except BaseException:
        out.put(("error", index, traceback.format_exc()))
