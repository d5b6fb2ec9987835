"""Learning curves of imitation runs: evaluation success against gradient steps and against training time.

    python scripts/plot_imitation.py runs/il/FrankaPush-v1/*_seed* -o docs/imitation_push.png --target 0.9

Each run folder is one ``scripts/train_il.py`` run with an ``evaluations.csv``: written during
training with ``--eval-episodes K``, or afterwards by ``scripts/evaluate.py --checkpoint
RUN/model_[0-9]*.pt --episodes K --csv RUN/evaluations.csv`` (each checkpoint's success rate,
iteration, training wall-clock and CPU seconds). Runs of the same policy and observation kind
share a colour: one thin line per seed, their median bold. Left panel against iterations, right
panel against training minutes (``--clock cpu``: the process's CPU minutes, what the run takes
alone on one core, instead of wall-clock on a shared machine). ``--target`` draws a goal line, ``--minutes`` a time budget.
Needs matplotlib.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402


def read_run(folder: str) -> dict:
    """``{"label", "env_id", "seed", "rows"}`` of a run folder; ``rows``: (iteration, minutes wall,
    minutes CPU, success rate) per evaluated checkpoint.

    Raises:
        OSError: no ``evaluations.csv`` or checkpoint there. ValueError: an empty ``evaluations.csv``.
    """
    with open(os.path.join(folder, "evaluations.csv")) as handle:
        rows = [(int(r["iteration"]), float(r["wall_s"]) / 60, float(r.get("cpu_s") or "nan") / 60,
                 float(r["success_rate"])) for r in csv.DictReader(handle)]
    if not rows:
        raise ValueError(f"{folder}/evaluations.csv has no rows")
    names = [n for n in os.listdir(folder) if n.startswith("model_") and n.endswith(".pt")]
    if not names:
        raise OSError(f"no checkpoint in {folder}")
    raw = torch.load(os.path.join(folder, sorted(names)[0]), map_location="cpu", weights_only=True)
    label = f"{'Diffusion Policy' if raw['config']['policy'] == 'diffusion' else 'BC'}, {raw['spec']['obs']}"
    return {"label": label, "env_id": raw["spec"]["env_id"], "seed": raw.get("seed"), "rows": rows}


def main(argv=None):
    """Draw and save the figure; returns it (a matplotlib ``Figure``)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run folders of scripts/train_il.py (with evaluations.csv)")
    parser.add_argument("-o", "--output", required=True, help="the output image (.png, .pdf, .svg)")
    parser.add_argument("--title", default=None, help="default: the runs' task")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="time axis: wall-clock or CPU minutes")
    parser.add_argument("--target", type=float, default=None, help="a goal success rate in [0, 1]")
    parser.add_argument("--minutes", type=float, default=None, help="a time budget [min]")
    args = parser.parse_args(argv)
    try:
        runs = [read_run(folder) for folder in args.runs]
    except (OSError, ValueError, KeyError) as error:
        parser.error(str(error))
    groups: dict[str, list[dict]] = {}
    for run in runs:
        groups.setdefault(run["label"], []).append(run)
    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(12, 4.2), dpi=110, sharey=True)
    clock = 1 if args.clock == "wall" else 2
    for index, (label, members) in enumerate(groups.items()):
        colour = f"C{index}"
        for run in members:
            rows = run["rows"]
            by_steps.plot([r[0] for r in rows], [r[3] for r in rows], color=colour, lw=0.7, alpha=0.5)
            by_time.plot([r[clock] for r in rows], [r[3] for r in rows], color=colour, lw=0.7, alpha=0.5)
        common = sorted(set.intersection(*[{r[0] for r in run["rows"]} for run in members]))
        if common:
            at = [{r[0]: r for r in run["rows"]} for run in members]
            median = [statistics.median(rows[i][3] for rows in at) for i in common]
            minutes = [statistics.median(rows[i][clock] for rows in at) for i in common]
            by_steps.plot(common, median, "o-", color=colour, lw=2, ms=4,
                          label=f"{label}: median of {len(members)} seed{'s' if len(members) > 1 else ''}")
            by_time.plot(minutes, median, "o-", color=colour, lw=2, ms=4)
    for axis, text in ((by_steps, "gradient steps"),
                       (by_time, "training wall-clock [min]" if clock == 1 else "training CPU time [min]")):
        if args.target is not None:
            axis.axhline(args.target, color="k", ls=":", lw=1)
        axis.set_xlabel(text)
        axis.grid(alpha=0.3)
    if args.minutes is not None:
        by_time.axvline(args.minutes, color="k", ls="--", lw=1)
    by_steps.set_ylabel("success rate (evaluation episodes)")
    by_steps.set_ylim(-0.02, 1.02)
    by_steps.legend(fontsize=8, loc="lower right")
    fig.suptitle(args.title or ", ".join(sorted({run["env_id"] for run in runs})))
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"wrote {args.output}")
    return fig


if __name__ == "__main__":
    main()
