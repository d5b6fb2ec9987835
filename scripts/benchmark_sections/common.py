"""What every benchmark section shares: running one measurement in a fresh subprocess
(``benchmark.py --worker ...``), rounds interleaved across configurations, medians.

Each measurement runs in its own subprocess (fresh PhysX globals, no cross-talk); rounds are
interleaved so machine noise hits every configuration alike.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

BENCHMARK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmark.py")
"""The script each measurement subprocess runs (with ``--worker``)."""


def run_worker(kind: str, num_envs: int, steps: int, size: int = 0, control_mode: str = "pd_joint_delta_pos",
               sim_backend: str = "physx_cpu", workers: tuple = ()):
    """Run one measurement in a fresh subprocess; returns its last stdout line (a float or JSON).
    ``workers``: the worker counts of a ``"paired"`` measurement."""
    command = worker_command(kind, num_envs, steps, size, control_mode, sim_backend)
    if workers:
        command += ["--workers", *map(str, workers)]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measurement {kind} N={num_envs} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def worker_command(kind: str, num_envs: int, steps: int, size: int = 0, control_mode: str = "pd_joint_delta_pos",
                   sim_backend: str = "physx_cpu") -> list[str]:
    """The command line of one ``--worker`` measurement."""
    return [sys.executable, BENCHMARK, "--worker", kind, "--num-envs", str(num_envs), "--steps", str(steps),
            "--size", str(size), "--control-mode", control_mode, "--sim-backend", sim_backend]


def rounds(configs: list, count: int, label, run=run_worker, **kwargs) -> dict:
    """Run every config once per round (``run(*config, **kwargs)``), interleaved, for ``count``
    rounds; returns config -> list of results. Progress goes to stderr."""
    results: dict = {c: [] for c in configs}
    for r in range(count):
        for config in configs:
            results[config].append(run(*config, **kwargs))
            print(f"round {r + 1}/{count}: {label(config)} -> {results[config][-1]}", file=sys.stderr)
    return results


def median(values: list, key: str = None) -> float:
    """The median of ``values`` (of ``value[key]`` when ``key`` is given)."""
    return statistics.median(v[key] if key else v for v in values)
