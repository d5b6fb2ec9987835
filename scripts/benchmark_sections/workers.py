"""``--workers P ...``: the vector env at N = 64 and 128 envs with each worker count P, stepped
side by side, and the machine's ceiling (P lone in-process envs of N / P envs at once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

from benchmark_sections.common import median, rounds, run_worker, worker_command

NAME = "workers"
USAGE = """\
    --workers 1 2     the vector env at N = 64 and 128 envs with P = 1 and 2 worker processes
                      (random actions, autoreset), stepped side by side in alternating blocks of
                      10 steps in one process per round: env steps/s, ratio to P = 1 (per round,
                      then the median), start-up time, resident memory per worker, and the
                      exchange cost per step; and, as the ceiling of the machine, P independent
                      in-process envs of N / P envs each stepping at the same time (no exchange)"""


def add_arguments(parser) -> None:
    parser.add_argument("--workers", type=int, nargs="+", metavar="P",
                        help="measure the vector env at N = 64 and 128 with these worker counts (e.g. 1 2)")
    parser.add_argument("--barrier", default=None, help=argparse.SUPPRESS)  # run_concurrent's start barrier
    parser.add_argument("--copies", type=int, default=1, help=argparse.SUPPRESS)


def requested(args) -> bool:
    return bool(args.workers)


def _run(kind: str, num_envs: int, steps: int, copies: int = 0, **kwargs):
    """A ``"ceiling"`` config runs ``copies`` processes at once (``run_concurrent``); others one
    measurement subprocess."""
    if kind == "ceiling":
        return run_concurrent(num_envs // copies, steps, copies)
    return run_worker(kind, num_envs, steps, copies, **kwargs)


def run_concurrent(num_envs: int, steps: int, copies: int) -> dict:
    """``copies`` independent processes, each an in-process vector env of ``num_envs`` envs,
    stepping at the same time (they start timing together, after a file barrier): the summed
    env steps/s is what the machine's cores give with no exchange at all."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="simulo_bench_") as barrier:
        extra = ["--barrier", barrier, "--copies", str(copies)]
        procs = [subprocess.Popen(worker_command("vector", num_envs, steps, 1) + extra, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(copies)]
        outs = [p.communicate() for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("concurrent measurement failed:\n" + "\n".join(err[-2000:] for _, err in outs))
    each = [json.loads(out.strip().splitlines()[-1])["steps_per_second"] for out, _ in outs]
    return {"steps_per_second": sum(each), "each": each}


def _wait_barrier(barrier: str, copies: int, timeout: float = 300.0) -> None:
    """Mark this process ready in directory ``barrier``; return once ``copies`` are."""
    open(os.path.join(barrier, str(os.getpid())), "w").close()
    deadline = time.monotonic() + timeout
    while len(os.listdir(barrier)) < copies:
        if time.monotonic() > deadline:
            raise TimeoutError("the other measurement processes never got ready")
        time.sleep(0.001)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def measure_vector(num_envs: int, num_workers: int, steps: int, warmup: int = 10, barrier: str = None,
                   copies: int = 1) -> dict:
    """The vector env (autoreset, random actions) at ``num_workers`` processes, alone in this
    process: env steps/s (the ceiling's building block: see ``run_concurrent``)."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    venv = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        num_workers=num_workers)
    venv.reset(seed=0)
    actions = torch.rand(steps + warmup, num_envs, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1
    for k in range(warmup):
        venv.step(actions[k])
    if barrier:
        _wait_barrier(barrier, copies)
    begin = time.perf_counter()
    for k in range(warmup, warmup + steps):
        venv.step(actions[k])
    elapsed = time.perf_counter() - begin
    venv.close()
    return {"steps_per_second": num_envs * steps / elapsed}


def measure_paired(num_envs: int, workers: list[int], blocks: int, block_steps: int = 10, warmup: int = 10) -> dict:
    """One vector env per worker count in ``workers`` (autoreset, uniform random actions), all in
    this process, stepped in alternating blocks of ``block_steps`` steps (the order reversed every
    other block), each block the same actions for every env: machine noise, which on a shared VM
    drifts by tens of percent within a minute, hits every worker count alike, so the ratio of their
    summed times is a fair comparison. Returns per worker count: env steps/s over all blocks,
    start-up seconds (making the env: for P > 1 spawning the workers, importing, building), the
    parent's resident memory [MB] right after making it (sharded envs are made first, so this is
    the parent of the workers alone), each worker's resident memory [MB], and the exchange cost
    per step: the parent's wall time per step minus the busiest worker's time spent serving it."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    envs, out = {}, {}
    for p in sorted(workers, reverse=True):
        begin = time.perf_counter()
        envs[p] = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                               num_workers=p)
        out[p] = {"startup_s": time.perf_counter() - begin, "parent_rss_mb": _rss_mb(os.getpid()), "seconds": 0.0}
    actions = torch.rand(warmup + blocks * block_steps, num_envs, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1
    busy = {}
    for p, venv in envs.items():
        venv.reset(seed=0)
        for k in range(warmup):
            venv.step(actions[k])
        stats = getattr(venv.env, "worker_stats", None)
        busy[p] = (stats, [0.0] * p)
    order = sorted(envs)
    for b in range(blocks):
        for p in (order if b % 2 == 0 else order[::-1]):
            venv, stats = envs[p], busy[p][0]
            before = stats() if stats else None
            begin = time.perf_counter()
            for k in range(warmup + b * block_steps, warmup + (b + 1) * block_steps):
                venv.step(actions[k])
            out[p]["seconds"] += time.perf_counter() - begin
            if stats:
                after = stats()
                busy[p] = (stats, [t + a["busy_s"] - s["busy_s"] for t, s, a in zip(busy[p][1], before, after)])
    steps = blocks * block_steps
    for p, venv in envs.items():
        row = out[p]
        row["steps_per_second"] = num_envs * steps / row["seconds"]
        stats = busy[p][0]
        if stats:
            row["worker_rss_mb"] = [_rss_mb(s["pid"]) for s in stats()]
            row["exchange_ms_per_step"] = 1e3 * (row["seconds"] - max(busy[p][1])) / steps
            row["busy_ms"] = [1e3 * b / steps for b in busy[p][1]]
        venv.close()
    return {str(p): row for p, row in out.items()}


MEASUREMENTS = {
    "paired": lambda args: measure_paired(args.num_envs[0], args.workers, blocks=args.steps),
    "vector": lambda args: measure_vector(args.num_envs[0], args.size, args.steps, barrier=args.barrier,
                                          copies=args.copies),
}


def run(args) -> list[dict]:
    return section(args.workers, args.rounds)


def section(workers: list[int], count: int) -> list[dict]:
    """N = 64 and 128 at each P in ``workers``, side by side in one process per round
    (``measure_paired``); ratios against the first P, per round, then the median; and, for each
    P > 1, P independent in-process envs of N / P envs stepping at the same time (the ceiling)."""
    configs = [("paired", n, 12800 // (10 * n)) for n in (64, 128)]
    configs += [("ceiling", n, 6400 // n, p) for n in (64, 128) for p in workers if p > 1]
    results = rounds(configs, count, lambda c: f"{c[0]} N={c[1]}" + (f" P={c[3]}" if len(c) > 3 else ""),
                     run=_run, workers=tuple(workers))
    rows = []
    print(f"\n{'FrankaLift-v1 vector env':24s} {'N':>4s} {'P':>3s} {'env steps/s':>12s} {f'x P={workers[0]}':>7s} "
          f"{'start-up s':>10s} {'parent MB':>9s} {'MB per worker':>13s} {'exchange ms/step':>16s}")
    for n in (64, 128):
        paired = results[("paired", n, 12800 // (10 * n))]
        for p in workers:
            runs = [r[str(p)] for r in paired]
            rate = median(runs, "steps_per_second")
            ratios = [r[str(p)]["steps_per_second"] / r[str(workers[0])]["steps_per_second"] for r in paired]
            worker_mb = statistics.median(statistics.mean(r["worker_rss_mb"]) for r in runs) if p > 1 else None
            exchange = median(runs, "exchange_ms_per_step") if p > 1 else None
            row = {"num_envs": n, "num_workers": p, "steps_per_second": rate, "ratio": statistics.median(ratios),
                   "ratios": ratios, "startup_s": median(runs, "startup_s"),
                   "parent_rss_mb": median(runs, "parent_rss_mb"), "worker_rss_mb": worker_mb,
                   "exchange_ms_per_step": exchange, "rounds": runs}
            rows.append(row)
            print(f"{'':24s} {n:>4d} {p:>3d} {rate:>12.0f} {row['ratio']:>7.2f} {row['startup_s']:>10.1f} "
                  f"{row['parent_rss_mb']:>9.0f} {worker_mb or 0:>13.0f} {exchange or 0:>16.2f}")
        base = median([r[str(workers[0])] for r in paired], "steps_per_second")
        for p in workers[1:]:
            ceiling = median(results[("ceiling", n, 6400 // n, p)], "steps_per_second")
            sharded = next(r for r in rows if r["num_envs"] == n and r["num_workers"] == p)
            sharded["ceiling_steps_per_second"] = ceiling
            sharded["share_of_ceiling"] = sharded["steps_per_second"] / ceiling
            print(f"{f'  {p} lone processes, N/{p} each':24s} {n:>4d} {'-':>3s} {ceiling:>12.0f} {ceiling / base:>7.2f}   "
                  f"(P={p} reaches {sharded['share_of_ceiling']:.0%} of it)")
    print(f"x P={workers[0]}: median over rounds of the per-round ratio (both stepped side by side in one process); "
          f"the ceiling's ratio is against the median P={workers[0]} rate, measured in other processes")
    return rows
