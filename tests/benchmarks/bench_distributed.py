"""Training throughput with 1 and with P ranks (torchrun, gloo on CPU), same run, as a ratio.

    python tests/benchmarks/bench_distributed.py                 # FrankaReach-v1, 64 envs, P = 1 and 2, 3 rounds
    python tests/benchmarks/bench_distributed.py --ranks 1 2 4 --num-envs 128 --rounds 5 --json
    python tests/benchmarks/bench_distributed.py --one-rank-threads 2   # also: 1 rank whose torch uses 2 threads

Each configuration is one ``scripts/train.py`` run (under ``torchrun --standalone`` for P > 1)
with the same total envs, budget and seed; its throughput is what train.py reports: env steps of
all ranks divided by the seconds of the training loop (rollouts and PPO updates, gradient
averaging included; process start and env construction excluded). Rounds are interleaved so
machine noise hits every configuration alike; the table gives the median per configuration and
its ratio to P = 1 (one process, one torch thread: physics and the policy share one core), and
where rank 0's time went (rollouts: physics and policy inference; updates: PPO epochs with the
gradient averaging, waits for slower ranks included), medians of the per-run sums.
``--one-rank-threads T`` adds one process with T torch threads, the fair baseline when the PPO
update could use the other cores too. Not a test: pytest does not collect ``bench_*`` files.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RATE = re.compile(r"trained ([\d,]+) env steps in \d+ s \(([\d,]+) steps/s\)")


def measure(ranks: int, threads: int, args: argparse.Namespace, log_dir: str) -> tuple[int, float, float, float]:
    """``(env steps, env steps per second, rollout seconds, update seconds)`` of one training run with
    ``ranks`` processes of ``threads`` torch threads each; the seconds are rank 0's, summed over the
    iterations (``progress.csv``'s ``collect_s`` and ``learn_s``)."""
    train = [os.path.join(ROOT, "scripts", "train.py"), "--env-id", args.env_id, "--num-envs", str(args.num_envs),
             "--total-timesteps", str(args.total_timesteps), "--seed", "0", "--log-dir", log_dir,
             "--checkpoint-every", "100000", "--no-progress", "--torch-threads", str(threads)]
    launcher = [sys.executable] if ranks == 1 else [sys.executable, "-m", "torch.distributed.run", "--standalone",
                                                    f"--nproc_per_node={ranks}"]
    result = subprocess.run(launcher + train, cwd=ROOT, capture_output=True, text=True)
    match = RATE.search(result.stdout)
    if result.returncode or match is None:
        raise RuntimeError(f"{ranks} ranks failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    with open(os.path.join(log_dir, "progress.csv")) as handle:
        rows = list(csv.DictReader(handle))
    return (int(match[1].replace(",", "")), float(match[2].replace(",", "")),
            sum(float(row["collect_s"]) for row in rows), sum(float(row["learn_s"]) for row in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="FrankaReach-v1")
    parser.add_argument("--num-envs", type=int, default=64, help="all ranks together")
    parser.add_argument("--total-timesteps", type=int, default=24_000, help="per run (whole PPO iterations)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one-rank-threads", type=int, default=None, metavar="T",
                        help="also measure one process with T torch threads")
    parser.add_argument("--json", action="store_true", help="last line: the results as JSON")
    args = parser.parse_args()
    if 1 not in args.ranks:
        parser.error("--ranks must include 1 (the baseline of the ratios)")
    configs = [(ranks, 1) for ranks in args.ranks]
    if args.one_rank_threads:
        configs.insert(1, (1, args.one_rank_threads))
    rates: dict[tuple[int, int], list[float]] = {config: [] for config in configs}
    split: dict[tuple[int, int], list[tuple[float, float]]] = {config: [] for config in configs}
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.rounds):
            for ranks, threads in configs:
                steps, rate, collect, learn = measure(ranks, threads, args,
                                                      os.path.join(scratch, f"r{round_index}_p{ranks}_t{threads}"))
                rates[(ranks, threads)].append(rate)
                split[(ranks, threads)].append((collect, learn))
                print(f"round {round_index + 1}: {ranks} rank(s) x {threads} torch thread(s): {steps:,} env steps, "
                      f"{rate:,.0f} env steps/s; rank 0: {collect:.2f} s rollouts, {learn:.2f} s updates", flush=True)
    base = statistics.median(rates[(1, 1)])
    print(f"\n{args.env_id}, {args.num_envs} envs in total, median of {args.rounds} rounds")
    print("| ranks | envs per rank | torch threads per rank | env steps/s (incl. PPO updates) | vs 1 rank "
          "| rank 0: rollout s | rank 0: update s |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    results = {}
    for (ranks, threads), values in rates.items():
        median = statistics.median(values)
        collect = statistics.median(c for c, _ in split[(ranks, threads)])
        learn = statistics.median(u for _, u in split[(ranks, threads)])
        results[f"{ranks}x{threads}"] = {"ranks": ranks, "threads": threads, "median": median, "rounds": values,
                                         "ratio": median / base, "collect_s": collect, "learn_s": learn}
        print(f"| {ranks} | {args.num_envs // ranks} | {threads} | {median:,.0f} | {median / base:.2f}x "
              f"| {collect:.2f} | {learn:.2f} |")
    if args.json:
        print(json.dumps({"env_id": args.env_id, "num_envs": args.num_envs, "results": results}))


if __name__ == "__main__":
    main()
