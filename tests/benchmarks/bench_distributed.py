"""Training throughput with 1 and with P ranks (torchrun on CPU), same run, as a ratio, with the ceiling.

    python tests/benchmarks/bench_distributed.py                 # FrankaReach-v1, 64 envs, P = 1 and 2, 3 rounds
    python tests/benchmarks/bench_distributed.py --ranks 1 2 4 --num-envs 128 --rounds 5 --json
    python tests/benchmarks/bench_distributed.py --one-rank-threads 2   # also: 1 rank whose torch uses 2 threads
    python tests/benchmarks/bench_distributed.py --independent   # also: the ceiling (below)

Each configuration is one training run (``simulo_envs.training.rsl_rl_train.train``, what
``scripts/train.py`` runs; under ``torchrun --standalone`` for P > 1) with the same total envs,
budget and seed. Throughput is env steps of all ranks divided by the seconds of the training loop
(rollouts and PPO updates, gradient averaging included; process start and env construction
excluded); ``steady`` leaves out the first ``--skip-iterations`` iterations (warm-up). Rounds are
interleaved so machine noise hits every configuration alike; the table gives the median per
configuration and its ratio to P = 1 (one process, one torch thread).

Where each rank's time goes (medians of the per-run sums): ``rollout`` (physics and policy
inference), ``wait`` (at a barrier before each PPO update: the time this rank's rollout finished
before the slowest rank's), ``comm`` (inside the update's collectives: the gradient averaging,
KL and normaliser all-reduces, learning-rate broadcast, including the waits for the other ranks at
each) and ``compute`` (the rest of the update). The barrier adds one collective per iteration.

``--independent`` adds P processes of ``num_envs / P`` envs each that train *independently* (no
gradient averaging, each its own PPO), started together, their throughputs summed: the most any
data-parallel scheme could give on this machine (physics and updates in parallel, nothing shared).
``--one-rank-threads T`` adds one process with T torch threads. Not a test: pytest does not
collect ``bench_*`` files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# -- one training run, inside each process -----------------------------------------------------------
def worker(args: argparse.Namespace) -> None:
    """Train once (this process is one rank, or one of ``--independent``'s processes) and write
    ``rank<r>.json`` into ``args.out``: per-iteration ends, rollout, wait, comm and update seconds."""
    import torch
    import torch.distributed as dist

    torch.set_num_threads(args.threads)
    sys.path.insert(0, ROOT)
    import simulo_envs  # noqa: F401  (registers the tasks)
    from rsl_rl.algorithms import PPO
    from rsl_rl.runners import OnPolicyRunner

    from simulo_envs.training.rsl_rl_train import train

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    num_envs, total, seed = args.num_envs, args.total_timesteps, 0
    if args.worker == "independent" and world > 1:
        dist.init_process_group("gloo")          # only to start the processes' training together
        for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
            del os.environ[name]                 # then each trains alone
        num_envs, total, seed = num_envs // world, total // world, rank * (num_envs // world)

    record = {"start": 0.0, "ends": [], "wait": [], "comm": [], "update": [], "collect": [], "learn": []}
    comm = [0.0, False]

    def timed(fn):
        def call(*a, **k):
            if not comm[1]:
                return fn(*a, **k)
            comm[1] = False   # a collective inside another is counted once
            start = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                comm[0] += time.perf_counter() - start
                comm[1] = True
        return call

    dist.all_reduce, dist.broadcast = timed(dist.all_reduce), timed(dist.broadcast)
    update = PPO.update

    def timed_update(self):
        if dist.is_initialized() and not getattr(self, "_bench_timed", False):
            self.reduce_parameters = timed(self.reduce_parameters)   # the gradient averaging
            self._bench_timed = True
        start = time.perf_counter()
        if dist.is_initialized():   # a rank of a training (independent processes left their group)
            dist.barrier()
        record["wait"].append(time.perf_counter() - start)
        comm[:] = [0.0, True]
        start = time.perf_counter()
        try:
            return update(self)
        finally:
            record["update"].append(time.perf_counter() - start)
            record["comm"].append(comm[0])
            comm[1] = False

    PPO.update = timed_update
    learn = OnPolicyRunner.learn

    def timed_learn(self, *a, **k):
        if dist.is_initialized() and args.worker == "independent":
            dist.barrier()
            dist.destroy_process_group()   # nothing shared from here on (not even the normalisers)
        record["start"], record["cpu_start"] = time.perf_counter(), time.process_time()
        return learn(self, *a, **k)

    OnPolicyRunner.learn = timed_learn

    def on_iteration(row):
        record["ends"].append(time.perf_counter())
        record["cpu_end"] = time.process_time()
        record["collect"].append(row["collect_s"])
        record["learn"].append(row["learn_s"])

    result = train(args.env_id, num_envs=num_envs, total_timesteps=total, seed=seed,
                   log_dir=os.path.join(args.out, f"log{rank}"), progress=False, checkpoint_every=100_000,
                   on_iteration=on_iteration)
    record.update(rank=rank, env_steps=result.env_steps, envs=num_envs,
                  wall=record["ends"][-1] - record["start"], cpu=record["cpu_end"] - record["cpu_start"])
    threads = {}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        with open(f"/proc/self/task/{task}/comm") as handle:
            threads[f"{task}:{handle.read().strip()}"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    record["threads"] = threads
    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as handle:
        json.dump(record, handle)


# -- the parent: configurations, rounds, table --------------------------------------------------------
def measure(config: tuple[str, int, int], args: argparse.Namespace, out: str) -> dict:
    """One run of ``config = (kind, processes, threads)``: throughput (all, steady) and each process's sums."""
    kind, procs, threads = config
    os.makedirs(out)
    command = [os.path.abspath(__file__), "--worker", "independent" if kind == "independent" else "ranks",
               "--out", out, "--env-id", args.env_id, "--num-envs", str(args.num_envs),
               "--total-timesteps", str(args.total_timesteps), "--threads", str(threads)]
    launcher = [sys.executable] if procs == 1 else [sys.executable, "-m", "torch.distributed.run", "--standalone",
                                                     f"--nproc_per_node={procs}"]
    result = subprocess.run(launcher + command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{config} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    ranks = []
    for r in range(procs):
        with open(os.path.join(out, f"rank{r}.json")) as handle:
            ranks.append(json.load(handle))
    skip = args.skip_iterations

    def steady(rec: dict) -> float:
        if len(rec["ends"]) <= skip:   # too short a run to leave the first iterations out
            return float("nan")
        per_iteration = rec["env_steps"] / len(rec["ends"])
        return per_iteration * (len(rec["ends"]) - skip) / (rec["ends"][-1] - rec["ends"][skip - 1])

    if kind == "independent":   # separate trainings: their throughputs add up
        rate, rate_steady = sum(r["env_steps"] / r["wall"] for r in ranks), sum(steady(r) for r in ranks)
    else:                       # one training: rank 0's clock (every rank ends each iteration together)
        rate, rate_steady = ranks[0]["env_steps"] / ranks[0]["wall"], steady(ranks[0])
    split = [{key: sum(r[key]) for key in ("collect", "wait", "comm", "update")} for r in ranks]
    for s in split:
        s["compute"] = s["update"] - s["comm"]
    return {"rate": rate, "steady": rate_steady, "ranks": split, "env_steps": sum(r["env_steps"] for r in ranks)
            if kind == "independent" else ranks[0]["env_steps"]}


def label(config: tuple[str, int, int]) -> str:
    kind, procs, threads = config
    if kind == "independent":
        return f"{procs} independent x {threads} thread"
    return f"{procs} rank{'s' if procs > 1 else ''} x {threads} thread{'s' if threads > 1 else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="FrankaReach-v1")
    parser.add_argument("--num-envs", type=int, default=64, help="all ranks together")
    parser.add_argument("--total-timesteps", type=int, default=24_000, help="per run (whole PPO iterations)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-iterations", type=int, default=1, help="left out of the steady throughput")
    parser.add_argument("--one-rank-threads", type=int, default=None, metavar="T",
                        help="also measure one process with T torch threads")
    parser.add_argument("--independent", action="store_true",
                        help="also measure P independent trainings of num_envs / P envs, summed (the ceiling)")
    parser.add_argument("--json", action="store_true", help="last line: the results as JSON")
    parser.add_argument("--worker", choices=["ranks", "independent"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if 1 not in args.ranks:
        parser.error("--ranks must include 1 (the baseline of the ratios)")
    configs = [("ranks", p, 1) for p in args.ranks]
    if args.one_rank_threads:
        configs.insert(1, ("ranks", 1, args.one_rank_threads))
    if args.independent:
        configs += [("independent", p, 1) for p in args.ranks if p > 1]
    runs: dict = {config: [] for config in configs}
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.rounds):
            for config in configs:
                run = measure(config, args, os.path.join(scratch, f"r{round_index}_{'_'.join(map(str, config))}"))
                runs[config].append(run)
                parts = "; ".join(f"rank {r}: " + ", ".join(f"{k} {v:.2f} s" for k, v in s.items())
                                  for r, s in enumerate(run["ranks"]))
                print(f"round {round_index + 1}: {label(config)}: {run['env_steps']:,} env steps, "
                      f"{run['rate']:,.0f} env steps/s (steady {run['steady']:,.0f}); {parts}", flush=True)
    base = statistics.median(r["rate"] for r in runs[configs[0]])
    base_steady = statistics.median(r["steady"] for r in runs[configs[0]])
    print(f"\n{args.env_id}, {args.num_envs} envs in total, {args.total_timesteps:,} env steps per run, "
          f"median of {args.rounds} rounds (steady: without the first {args.skip_iterations} iteration(s))")
    print("| configuration | envs per process | env steps/s | vs 1 rank | steady env steps/s | vs 1 rank "
          "| rank 0: rollout / wait / comm / compute s | rank 1: rollout / wait / comm / compute s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    results = {}
    for config, values in runs.items():
        rate = statistics.median(r["rate"] for r in values)
        rate_steady = statistics.median(r["steady"] for r in values)
        split = [{key: statistics.median(v["ranks"][r][key] for v in values)
                  for key in ("collect", "wait", "comm", "compute")} for r in range(config[1])]
        cells = [" / ".join(f"{s[k]:.2f}" for k in ("collect", "wait", "comm", "compute")) for s in split[:2]]
        cells += [""] * (2 - len(cells))
        print(f"| {label(config)} | {args.num_envs // config[1]} | {rate:,.0f} | {rate / base:.2f}x "
              f"| {rate_steady:,.0f} | {rate_steady / base_steady:.2f}x | {cells[0]} | {cells[1]} |")
        results[label(config)] = {"kind": config[0], "processes": config[1], "threads": config[2], "median": rate,
                                  "ratio": rate / base, "steady": rate_steady,
                                  "steady_ratio": rate_steady / base_steady,
                                  "rounds": [r["rate"] for r in values], "rounds_steady": [r["steady"] for r in values],
                                  "split": split}
    if args.json:
        print(json.dumps({"env_id": args.env_id, "num_envs": args.num_envs, "total_timesteps": args.total_timesteps,
                          "results": results}))


if __name__ == "__main__":
    main()
