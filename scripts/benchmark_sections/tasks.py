"""``--tasks``: the cost of one env step of every registered task at one env, in microseconds;
with ``--tasks-before REV``, side by side with the same tasks at git revision ``REV``.

``REV``'s files are exported (``git archive``) to a temporary folder. One worker process per
tree imports that tree's ``simulo_envs`` (its ``tasks/`` and ``agents/`` as ``simulo_envs.tasks``
and ``simulo_envs.agents``, like the installed layout) with the same installed packages, builds
each task once (``make(task, num_envs=1)``: physx_cpu, state observations, the task's default
control mode and reward mode, no time limit) and answers each request with one timed block:
``reset(seed=0)``, then ``--task-steps`` steps of the same seeded uniform random actions (the
first build is warmed up by 20 untimed steps). The trees alternate block by block, the first of
each pair alternating by round, so both see the same machine load; a block is timed in CPU time
of its worker (``time.process_time``: PhysX steps in the calling thread), which a shared
machine's other processes disturb far less than wall time. Reported: the median over
``--rounds`` of microseconds per ``env.step`` for each tree, and the median of the rounds'
after / before ratios (below 1: faster now).

Run directly, this file is a worker: ``python scripts/benchmark_sections/tasks.py DIR`` reads
``task steps`` lines on stdin and prints one figure per line (``--list``: the task ids).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

NAME = "tasks"
USAGE = """\
    --tasks           one env step of every task at one env (microseconds of CPU time)
    --tasks-before REV   the same, side by side with git revision REV (e.g. main)"""

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""This repository's root: the tree measured as "after"."""


def add_arguments(parser) -> None:
    parser.add_argument("--tasks", action="store_true", help="per-step cost of every registered task at one env")
    parser.add_argument("--tasks-before", metavar="REV", default=None,
                        help="measure the tasks at git revision REV too, side by side")
    parser.add_argument("--task-steps", type=int, default=300, help="timed steps per block of --tasks (default 300)")
    parser.add_argument("--task-ids", nargs="+", default=None, help="with --tasks: only these task ids")


def requested(args) -> bool:
    return args.tasks or args.tasks_before is not None


MEASUREMENTS: dict = {}  # the workers run this file itself (each imports a tree of its own)


class TreeFinder(importlib.abc.MetaPathFinder):
    """Imports ``simulo_envs`` (with ``simulo_envs.tasks`` and ``simulo_envs.agents``, which live
    at a tree's root) from the source tree ``root``, ahead of the installed package."""

    def __init__(self, root: str):
        self.dirs = {"simulo_envs": os.path.join(root, "simulo_envs"),
                     "simulo_envs.tasks": os.path.join(root, "tasks"),
                     "simulo_envs.agents": os.path.join(root, "agents")}

    def find_spec(self, fullname, path, target=None):
        folder = self.dirs.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


def serve(root: str, list_only: bool = False) -> None:
    """The worker: import the tree ``root``; print the task ids (``list_only``), or answer each
    ``task steps`` line on stdin with the microseconds of CPU time per step of one block."""
    sys.meta_path.insert(0, TreeFinder(root))
    import numpy as np
    import torch

    import simulo_envs
    from simulo_envs.envs.registration import REGISTERED, make

    if os.path.dirname(simulo_envs.__file__) != os.path.join(root, "simulo_envs"):
        raise RuntimeError(f"simulo_envs was imported from {simulo_envs.__file__}, not from {root}")
    if list_only:
        print(json.dumps(list(REGISTERED)))
        return
    envs: dict = {}
    for line in sys.stdin:
        task, steps = line.split()
        env = envs.get(task)
        fresh = env is None
        if fresh:
            env = envs[task] = make(task, num_envs=1, sim_backend="physx_cpu", max_episode_steps=10**9)
        dim = env.single_action_space.shape[0]
        actions = torch.from_numpy(np.random.default_rng(0).uniform(-1, 1, (int(steps), 1, dim)).astype(np.float32))
        if fresh:
            env.reset(seed=0)
            for action in actions[:20]:  # the first steps after a build: hook checks, caches
                env.step(action)
        env.reset(seed=0)
        start = time.process_time()
        for action in actions:
            env.step(action)
        print((time.process_time() - start) / len(actions) * 1e6, flush=True)


class Worker:
    """A worker process on the tree ``root``; ``time(task, steps)`` -> microseconds per step."""

    def __init__(self, root: str):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), root], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=root)

    def time(self, task: str, steps: int) -> float:
        self.proc.stdin.write(f"{task} {steps}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker measuring {task} exited (code {self.proc.wait()})")
        return float(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def task_ids(root: str) -> list[str]:
    """The task ids the tree ``root`` registers."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), root, "--list"], capture_output=True,
                         text=True, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def export(revision: str, folder: str) -> None:
    """Write the files of git ``revision`` of this repository into ``folder``."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)


def run(args) -> list[dict]:
    return section(args.rounds, args.tasks_before, args.task_steps, args.task_ids)


def section(count: int, before: str = None, steps: int = 300, only: list = None) -> list[dict]:
    """Every task of this tree (``only``: those named; with ``before``: those both trees have) at
    one env, median over ``count`` rounds of microseconds per step; prints the table, returns its
    rows."""
    folder = tempfile.mkdtemp(prefix="simulo_before_") if before else None
    trees = {"after": ROOT}
    workers: dict = {}
    try:
        if before:
            export(before, folder)
            trees = {"before": folder, "after": ROOT}
        tasks = [task for task in task_ids(ROOT) if not only or task in only]
        if before:
            tasks = [task for task in tasks if task in set(task_ids(folder))]
        workers = {label: Worker(root) for label, root in trees.items()}
        times = {label: {task: [] for task in tasks} for label in trees}
        for r in range(count):
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for task in tasks:
                for label in order:
                    times[label][task].append(workers[label].time(task, steps))
            print(f"tasks: round {r + 1}/{count} done", file=sys.stderr, flush=True)
    finally:
        for worker in workers.values():
            worker.close()
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    return table(tasks, times, before)


def table(tasks: list, times: dict, before: str = None) -> list[dict]:
    """Print the medians and, against ``before``, the median over rounds of each round's ratio
    (the two blocks of a round run back to back, so a round's ratio sees one machine load);
    return the rows."""
    rows = []
    title = "one step at 1 env [us CPU]"
    print(f"\n{title:28s} {'before':>8s} {'after':>8s} {'after / before':>15s}   (before: {before}; the ratio: "
          "median of the rounds' ratios)" if before
          else f"\n{title:28s} {'after':>8s}")
    for task in tasks:
        after = statistics.median(times["after"][task])
        row = {"task": task, "us_per_step": after, "rounds": {label: values[task] for label, values in times.items()}}
        if before:
            old = statistics.median(times["before"][task])
            ratio = statistics.median(a / b for a, b in zip(times["after"][task], times["before"][task]))
            row.update(before_us_per_step=old, ratio=ratio)
            print(f"{task:28s} {old:>8.0f} {after:>8.0f} {ratio:>15.2f}")
        else:
            print(f"{task:28s} {after:>8.0f}")
        rows.append(row)
    return rows


if __name__ == "__main__":
    serve(os.path.abspath(sys.argv[1]), list_only="--list" in sys.argv[2:])
