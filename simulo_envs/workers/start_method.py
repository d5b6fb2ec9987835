"""How our worker processes start: Python's ``forkserver`` start method, with torch, SAPIEN and
``simulo_envs`` imported once in the fork server.

A worker started with the ``spawn`` method is a fresh interpreter that imports torch, SAPIEN
and ``simulo_envs`` before it can build its env: about 6 s of CPU per worker (measured, load 5;
a 2-worker ``ShardedEnv`` of FrankaLift-v1 took 17 s of CPU in its workers). With
``forkserver`` the first worker of a process starts a fork server, a fresh interpreter that
imports those modules once (``WORKER_PRELOAD``); every worker after it, of this env or any
later one in the process, is a fork of that server and starts with them imported: the same
2-worker env then takes 6 s of CPU in its workers. The fork server never makes a render system
or a physics scene (importing creates neither), so each worker still makes its own.

What a worker sees is what a spawned worker saw: multiprocessing gives it the parent's working
directory, ``sys.path`` and main module (re-imported in the worker, so scripts still guard
their entry point with ``if __name__ == "__main__":``), and ``inherit_environment`` gives it
the parent's environment variables as they are when the worker starts (a fork server keeps
those of its own start). Variables a library reads when it is imported (``OMP_NUM_THREADS``
for torch's thread pool) take the values of the fork server's start; our workers set torch's
threads themselves. Where ``forkserver`` does not exist (not on Windows), workers spawn.
"""

from __future__ import annotations

import multiprocessing
import os

WORKER_PRELOAD = ("simulo_envs.workers.worker",)
"""Modules the fork server imports once, for the workers it forks (``set_forkserver_preload``):
the worker loop, and with it ``simulo_envs``, torch and SAPIEN."""


def worker_context():
    """The multiprocessing context our worker processes start from: ``forkserver`` (preloading
    ``WORKER_PRELOAD``) where the platform has it, else ``spawn``. The fork server is one per
    process, shared with any other user of the ``forkserver`` method in it."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(WORKER_PRELOAD))
    return context


def inherit_environment(environ: dict) -> None:
    """Make this worker's environment variables ``environ`` (the parent's ``dict(os.environ)``
    when it started the worker): variables it lacks are removed, the others set."""
    for name in set(os.environ) - set(environ):
        del os.environ[name]
    os.environ.update(environ)
