"""Plot several seeds of one training recipe against env steps and against wall-clock, side by side.

    python scripts/plot_seeds.py runs/lift/seed0/progress.csv runs/lift/seed1/progress.csv \\
        runs/lift/seed2/progress.csv -o docs/lift_learning_curve.png

Each run is the ``progress.csv`` of ``scripts/train.py``, with the ``evaluations.csv`` of its
checkpoints beside it (``scripts/evaluate.py --checkpoint .../model_*.pt --csv .../evaluations.csv``).
Per seed, one colour: the evaluation success rate of its checkpoints (deterministic policy, bold,
markers) and the training success (``success_once`` of the last 100 finished training episodes,
stochastic policy, thin). Left panel against env steps, right panel against the training's
wall-clock minutes (a checkpoint sits at the wall-clock of the iteration that wrote it).
``--at-end`` also draws, dashed with square markers, the checkpoints' success at the episode's last
step (the ``success_at_end`` column an ``evaluate.py --full-episodes`` CSV has; a lifted cube still
up at the time limit). ``--target`` draws a horizontal goal line; ``--minutes`` a vertical time budget; ``--reference
CSV LABEL`` another library's training success (a CSV with ``env_steps``, ``wall_s``,
``success_once`` columns, e.g. ``scripts/train_sb3.py``'s ``progress.csv``), dashed grey. Needs matplotlib.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_training import _known, default_title, read_run  # noqa: E402


def read_reference(path: str) -> tuple[list[int], list[float], list[float]]:
    """``(env_steps, wall-clock minutes, success_once)`` of the rows of ``path`` where success is known.

    Raises:
        OSError: no such file. ValueError: no ``env_steps``, ``wall_s``, ``success_once`` columns, or no rows.
    """
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    if not rows or not {"env_steps", "wall_s", "success_once"} <= set(rows[0]):
        raise ValueError(f"{path} holds no env_steps, wall_s, success_once rows")
    rows = [r for r in rows if r["success_once"] not in ("", "nan")]
    return ([int(r["env_steps"]) for r in rows], [float(r["wall_s"]) / 60 for r in rows],
            [float(r["success_once"]) for r in rows])


def read_at_end(progress_csv: str) -> list[tuple[int, float]]:
    """``[(env_steps, success_at_end)]`` of the ``evaluations.csv`` beside ``progress_csv``, sorted by
    env steps; ``[]`` when there is none or it has no ``success_at_end`` column."""
    path = os.path.join(os.path.dirname(progress_csv), "evaluations.csv")
    if not os.path.isfile(path):
        return []
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "success_at_end" not in rows[0]:
        return []
    return sorted({int(r["env_steps"]): float(r["success_at_end"]) for r in rows}.items())


def main(argv=None):
    """Draw and save the figure; returns it (a matplotlib ``Figure``)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("progress_csv", nargs="+", help="one progress.csv per seed")
    parser.add_argument("-o", "--output", required=True, help="the output image (.png, .pdf, .svg)")
    parser.add_argument("--title", default=None, help="default: from the runs' run.json")
    parser.add_argument("--target", type=float, default=None, help="a goal success rate in [0, 1]")
    parser.add_argument("--minutes", type=float, default=None, help="a wall-clock budget [min]")
    parser.add_argument("--at-end", action="store_true",
                        help="also draw the evaluations' success at the last step (evaluate.py --full-episodes CSV)")
    parser.add_argument("--reference", nargs=2, metavar=("CSV", "LABEL"), default=None,
                        help="another run's training success (env_steps, wall_s, success_once columns)")
    args = parser.parse_args(argv)
    try:
        runs = [read_run(path) for path in args.progress_csv]
        reference = read_reference(args.reference[0]) if args.reference else None
    except (OSError, ValueError) as error:
        parser.error(str(error))
    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(12, 4.2), dpi=110, sharey=True)
    for index, run in enumerate(runs):
        colour = f"C{index}"
        seed = run["meta"].get("seed", index)
        rows = run["rows"]
        wall_at = {int(r["env_steps"]): float(r["wall_s"]) / 60 for r in rows}
        steps, train = _known(rows, "success_once")
        by_steps.plot(steps, train, color=colour, lw=0.8, alpha=0.6)
        by_time.plot([wall_at[s] for s in steps], train, color=colour, lw=0.8, alpha=0.6)
        if run["evaluations"]:
            points = [(s, rate) for s, rate in run["evaluations"] if s == 0 or s in wall_at]
            by_steps.plot([s for s, _ in points], [r for _, r in points], "o-", color=colour, lw=2, ms=4,
                          label=f"seed {seed}: evaluation (deterministic, 100 episodes)")
            by_time.plot([wall_at.get(s, 0.0) for s, _ in points], [r for _, r in points], "o-", color=colour, lw=2,
                         ms=4)
        at_end = read_at_end(run["path"]) if args.at_end else []
        if at_end:
            points = [(s, rate) for s, rate in at_end if s == 0 or s in wall_at]
            by_steps.plot([s for s, _ in points], [r for _, r in points], "s--", color=colour, lw=1.5, ms=4,
                          label=f"seed {seed}: evaluation, success at the last step")
            by_time.plot([wall_at.get(s, 0.0) for s, _ in points], [r for _, r in points], "s--", color=colour,
                         lw=1.5, ms=4)
        by_steps.plot([], [], color=colour, lw=0.8, alpha=0.6, label=f"seed {seed}: training episodes (stochastic)")
    if reference is not None:
        steps, wall_min, rate = reference
        by_steps.plot(steps, rate, color="0.4", ls="--", lw=1, label=f"{args.reference[1]}: training episodes")
        by_time.plot(wall_min, rate, color="0.4", ls="--", lw=1)
    for axis, label in ((by_steps, "env steps"), (by_time, "training wall-clock [min]")):
        if args.target is not None:
            axis.axhline(args.target, color="k", ls=":", lw=1)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    if args.minutes is not None:
        by_time.axvline(args.minutes, color="k", ls="--", lw=1)
    by_steps.set_ylabel("success rate")
    by_steps.set_ylim(-0.02, 1.02)
    by_steps.legend(fontsize=7, loc="lower right")
    fig.suptitle(args.title or default_title(runs))
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"wrote {args.output}")
    return fig


if __name__ == "__main__":
    main()
