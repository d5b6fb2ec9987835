"""Plot learning curves (success rate against env steps) of one or more training runs.

    python scripts/plot_training.py runs/FrankaReach-v1/seed0/progress.csv docs/reach_learning_curve.png
    python scripts/plot_training.py runs/p1/progress.csv runs/p2/progress.csv -o docs/reach_ranks.png

Each run is the ``progress.csv`` of ``scripts/train.py``; the title and the legend come from the
``run.json`` beside it (task, envs, ranks), and the evaluations of its checkpoints from the
``evaluations.csv`` beside it (``scripts/evaluate.py --checkpoint .../model_*.pt --csv ...``), if
present. One run: ``success_once`` and ``success_at_end`` of the training episodes (means over the
last 100 finished, stochastic policy), evaluations as markers, wall-clock minutes on a second axis.
Several runs: one colour per configuration (ranks x envs, or ``--label``), training ``success_once``
thin, evaluations bold; runs of the same configuration (other seeds) are averaged, with the
min-max of their evaluations shaded. ``--eval
STEPS=RATE`` adds evaluation points by hand (one run only). Needs matplotlib (the ``dev`` extra).
The last argument is the output image unless ``-o`` gives it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_run(progress_csv: str) -> dict:
    """``{"rows", "meta", "evaluations"}`` of one run directory.

    Raises:
        OSError: no such CSV. ValueError: not a ``progress.csv`` of ``scripts/train.py``, or no rows.
    """
    with open(progress_csv) as handle:
        rows = list(csv.DictReader(handle))
    if not rows or not {"env_steps", "success_once", "success_at_end", "wall_s"} <= set(rows[0]):
        raise ValueError(f"{progress_csv} holds no progress rows of scripts/train.py")
    folder = os.path.dirname(progress_csv)
    meta, evaluations = {}, []
    if os.path.isfile(os.path.join(folder, "run.json")):
        with open(os.path.join(folder, "run.json")) as handle:
            meta = json.load(handle)
    if os.path.isfile(os.path.join(folder, "evaluations.csv")):
        with open(os.path.join(folder, "evaluations.csv")) as handle:
            by_steps = {int(r["env_steps"]): float(r["success_rate"]) for r in csv.DictReader(handle)}
            evaluations = sorted(by_steps.items())   # model_final.pt repeats the last model_<it>.pt
    return {"rows": rows, "meta": meta, "evaluations": evaluations, "path": progress_csv}


def _known(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    """The rows where ``key`` is known (empty or ``nan`` while no episode had finished)."""
    kept = [r for r in rows if r[key] not in ("", "nan")]
    return [int(r["env_steps"]) for r in kept], [float(r[key]) for r in kept]


def default_title(runs: list[dict]) -> str:
    """From the runs' ``run.json``: the task, and the envs when every run has the same number."""
    ids = {run["meta"].get("env_id") for run in runs}
    if None in ids or len(ids) != 1:
        return "PPO (rsl-rl-lib): " + ", ".join(os.path.dirname(run["path"]) or "." for run in runs)
    envs = {run["meta"].get("num_envs") for run in runs}
    return f"PPO (rsl-rl-lib) on {ids.pop()}" + (f", {envs.pop()} envs" if len(envs) == 1 else "")


def run_label(run: dict) -> str:
    """``"2 ranks x 32 envs"`` from ``run.json``; else the run's folder."""
    meta = run["meta"]
    if "world_size" not in meta:
        return os.path.dirname(run["path"]) or run["path"]
    ranks = meta["world_size"]
    return f"{ranks} rank{'s' if ranks > 1 else ''} x {meta['envs_per_rank']} envs"


def _mean_curve(curves: list[list[tuple[int, float]]]) -> tuple[list[int], list[float], list[float], list[float]]:
    """Steps every curve has, with the mean, min and max of the curves there."""
    common = sorted(set.intersection(*(set(dict(c)) for c in curves)))
    values = [[dict(c)[step] for c in curves] for step in common]
    return common, [sum(v) / len(v) for v in values], [min(v) for v in values], [max(v) for v in values]


def _plot_group(ax, label: str, members: list[dict], colour: str) -> None:
    """One configuration: training success (thin) and evaluations (bold); several seeds are averaged,
    their evaluations' min-max shaded."""
    seeds = f", mean of {len(members)} runs" if len(members) > 1 else ""
    training = _mean_curve([list(zip(*_known(run["rows"], "success_once"))) for run in members])
    ax.plot(training[0], training[1], color=colour, alpha=0.45, linewidth=1, label=f"{label}: training success once{seeds}")
    if all(run["evaluations"] for run in members):
        steps, mean, low, high = _mean_curve([run["evaluations"] for run in members])
        ax.plot(steps, mean, "o-", color=colour, linewidth=2, markersize=4, zorder=3,
                label=f"{label}: evaluation (deterministic){seeds}")
        if len(members) > 1:
            ax.fill_between(steps, low, high, color=colour, alpha=0.15, linewidth=0)


def plot(runs: list[dict], title: str, labels: list[str], extra_evals: list[tuple[int, float]]):
    """The figure (not saved). Several runs with the same label (the same ranks x envs, other seeds)
    are drawn as one: their mean, with the evaluations' min-max shaded."""
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    if len(runs) == 1:
        run = runs[0]
        ax.plot(*_known(run["rows"], "success_once"), label="success once (training episodes)")
        ax.plot(*_known(run["rows"], "success_at_end"), label="success at end (training episodes)")
        points = sorted(run["evaluations"] + extra_evals)
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], "ko", zorder=3,
                    label="evaluation of checkpoints (deterministic policy)")
        last = run["rows"][-1]
        steps, wall = int(last["env_steps"]), float(last["wall_s"])
        if steps and wall:
            minutes = ax.secondary_xaxis("top", functions=(lambda s: s * wall / steps / 60,
                                                            lambda m: m * 60 * steps / wall))
            minutes.set_xlabel("training wall-clock [min]")
    else:
        groups: dict[str, list[dict]] = {}
        for run, label in zip(runs, labels):
            groups.setdefault(label, []).append(run)
        for index, (label, members) in enumerate(groups.items()):
            _plot_group(ax, label, members, f"C{index}")
    ax.set_xlabel("env steps")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="progress.csv files, then the output image")
    parser.add_argument("-o", "--output", default=None, help="the output image (.png, .pdf, .svg)")
    parser.add_argument("--title", default=None, help="default: from the runs' run.json")
    parser.add_argument("--label", action="append", default=[],
                        help="legend label per run, in order (runs with the same label are averaged)")
    parser.add_argument("--eval", action="append", default=[], metavar="STEPS=RATE",
                        help="a checkpoint's evaluation: env steps and success rate in [0, 1]")
    args = parser.parse_args(argv)
    paths, output = list(args.paths), args.output
    if output is None:
        if len(paths) < 2:
            parser.error("give the output image: the last argument, or -o")
        output = paths.pop()
    if not output.lower().endswith((".png", ".pdf", ".svg")):
        parser.error(f"the output must be a .png, .pdf or .svg file, got {output!r}")
    if args.label and len(args.label) != len(paths):
        parser.error(f"--label given {len(args.label)} times for {len(paths)} runs")
    if args.eval and len(paths) > 1:
        parser.error("--eval applies to one run; with several, put each run's evaluations.csv beside it")
    try:
        extra = [(int(steps), float(rate)) for steps, rate in (item.split("=") for item in args.eval)]
    except ValueError:
        parser.error(f"--eval takes STEPS=RATE, e.g. 81600=0.98; got {args.eval}")
    try:
        runs = [read_run(path) for path in paths]
    except (OSError, ValueError, KeyError) as error:
        parser.error(str(error))
    labels = args.label or [run_label(run) for run in runs]
    figure = plot(runs, args.title or default_title(runs), labels, extra)
    figure.savefig(output)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
