"""Plot a training run's learning curve (success rate against env steps) from ``progress.csv``.

    python scripts/plot_training.py runs/FrankaReach-v1/seed0/progress.csv docs/reach_learning_curve.png

Plots ``success_once`` and ``success_at_end`` (means over the last 100 finished training
episodes, stochastic policy) with the wall-clock minutes on a second axis; ``--eval STEPS=RATE``
(repeatable) adds evaluation success rates of checkpoints (``scripts/evaluate.py``) as markers.
Needs matplotlib (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("progress_csv")
    parser.add_argument("output_png")
    parser.add_argument("--title", default="PPO (rsl-rl-lib) on FrankaReach-v1, 64 envs, 2-core CPU")
    parser.add_argument("--eval", action="append", default=[], metavar="STEPS=RATE",
                        help="a checkpoint's evaluation: env steps and success rate in [0, 1]")
    args = parser.parse_args()
    with open(args.progress_csv) as handle:
        rows = [r for r in csv.DictReader(handle) if r["success_once"] != "nan"]
    steps = [int(r["env_steps"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    ax.plot(steps, [float(r["success_once"]) for r in rows], label="success once (training episodes)")
    ax.plot(steps, [float(r["success_at_end"]) for r in rows], label="success at end (training episodes)")
    if args.eval:
        points = sorted((int(a), float(b)) for a, b in (item.split("=") for item in args.eval))
        ax.plot([p[0] for p in points], [p[1] for p in points], "ko", zorder=3,
                label="evaluation of checkpoints (deterministic, 100 episodes)")
    ax.set_xlabel("env steps")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(args.title, fontsize=10)
    minutes = ax.secondary_xaxis("top", functions=(
        lambda s: s * float(rows[-1]["wall_s"]) / steps[-1] / 60,
        lambda m: m * 60 * steps[-1] / float(rows[-1]["wall_s"])))
    minutes.set_xlabel("training wall-clock [min]")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output_png)
    print(f"wrote {args.output_png}")


if __name__ == "__main__":
    main()
