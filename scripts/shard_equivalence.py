"""Whole episodes in worker processes against in-process: the scripted expert on FrankaLift-v1.

    python scripts/shard_equivalence.py                  # 64 envs (seeds 0..63), P = 1 against P = 2
    python scripts/shard_equivalence.py --num-envs 128 --workers 4 --json

Each env runs its first episode (env ``k`` seeded ``seed + k``) with the expert (``LiftExpert``,
``pd_ee_delta_pos``) until it succeeds or times out. In one shared PhysX system the envs couple
at float-noise level and contact makes the noise grow, so in-process and sharded runs agree over
whole episodes statistically, not bit for bit: the script reports both success rates, the return
distributions (mean, std, two-sample Kolmogorov-Smirnov test) and the per-env return gaps.
With ``isolate_envs`` (one PhysX system per env) the two runs must agree exactly; the script
checks that too.
"""

from __future__ import annotations

import argparse
import json

import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.agents import Panda
from simulo_envs.policies import LiftExpert, LiftExpertConfig


def first_episodes(num_envs: int, num_workers: int, seed: int, isolate: bool) -> dict:
    """Return and success of each env's first expert episode: float32 / bool tensors (num_envs,)."""
    import gymnasium as gym

    venv = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        num_workers=num_workers, control_mode="pd_ee_delta_pos", record_metrics=True,
                        sim_config={"isolate_envs": isolate})
    # the agents may live in worker processes: the arm controller's step size from the agent's description
    expert = LiftExpert(venv, LiftExpertConfig(pos_bound=Panda.controller_configs["pd_ee_delta_pos"]["arm"].pos_bound))
    info = venv.reset(seed=seed)[1]
    returns, success = torch.zeros(num_envs), torch.zeros(num_envs, dtype=torch.bool)
    done = torch.zeros(num_envs, dtype=torch.bool)
    while not done.all():
        _, _, terminated, truncated, info = venv.step(expert.act(info))
        finished = (terminated | truncated) & ~done
        if finished.any():
            episode = info["final_info"]["episode"]
            returns[finished] = episode["return"][finished]
            success[finished] = episode["success_once"][finished]
            done |= finished
    venv.close()
    return {"return": returns, "success": success}


def compare(a: dict, b: dict) -> dict:
    """Success rates, return statistics and a two-sample KS test between runs ``a`` and ``b``."""
    from scipy.stats import ks_2samp

    gap = (a["return"] - b["return"]).abs()
    ks = ks_2samp(a["return"].numpy(), b["return"].numpy())
    return {"success_rate": [float(a["success"].float().mean()), float(b["success"].float().mean())],
            "return_mean": [float(a["return"].mean()), float(b["return"].mean())],
            "return_std": [float(a["return"].std()), float(b["return"].std())],
            "same_success": float((a["success"] == b["success"]).float().mean()),
            "return_gap_median": float(gap.median()), "return_gap_max": float(gap.max()),
            "ks_statistic": float(ks.statistic), "ks_pvalue": float(ks.pvalue),
            "identical": bool(torch.equal(a["return"], b["return"]) and torch.equal(a["success"], b["success"]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=64, help="envs, one first episode each (default 64)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the sharded run (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the results as one JSON line at the end")
    args = parser.parse_args()
    if args.num_envs < 2 or not 2 <= args.workers <= args.num_envs or args.seed < 0:
        parser.error("need --num-envs >= 2, 2 <= --workers <= --num-envs and --seed >= 0")
    report = {}
    for isolate in (False, True):
        runs = [first_episodes(args.num_envs, p, args.seed, isolate) for p in (1, args.workers)]
        report["isolated" if isolate else "shared"] = compare(*runs)
    print(f"FrankaLift-v1, scripted expert, first episode of {args.num_envs} envs (seeds {args.seed}.."
          f"{args.seed + args.num_envs - 1}): in process (P=1) against {args.workers} workers\n")
    print(f"{'PhysX systems':14s} {'success P=1':>11s} {f'P={args.workers}':>6s} {'return mean +- std, P=1':>24s} "
          f"{f'P={args.workers}':>15s} {'same success':>12s} {'|return gap| median / max':>26s} {'KS p':>6s} {'identical':>9s}")
    for name, r in report.items():
        print(f"{name:14s} {r['success_rate'][0]:>11.3f} {r['success_rate'][1]:>6.3f} "
              f"{r['return_mean'][0]:>15.2f} +- {r['return_std'][0]:<5.2f} {r['return_mean'][1]:>8.2f} +- "
              f"{r['return_std'][1]:<5.2f}{r['same_success']:>11.3f} {r['return_gap_median']:>15.4f} / "
              f"{r['return_gap_max']:<8.4f} {r['ks_pvalue']:>6.2f} {str(r['identical']):>9s}")
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
