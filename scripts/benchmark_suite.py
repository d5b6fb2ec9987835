"""The SO-101 suite's benchmark protocol: each task's fixed initial states per split, success once
and at the end with 95 % Wilson intervals, per task and the mean; one JSON file and one Markdown table.

    python scripts/benchmark_suite.py --out runs/suite                    # every SO-101 suite task, its scripted expert
    python scripts/benchmark_suite.py --checkpoint runs/SO101Lift-v1/seed0/model_final.pt --out runs/lift

Split ``s`` runs episodes of seeds ``FIRST_SEEDS[s] + k`` (``k < --episodes``), every episode to
the time limit, in the variant ``s`` of the task (``train``: in distribution; ``heldout``: other
colours, shapes, distractors, positions; ``heldout_<axis>``: one axis). The seeds, the success
definitions and the interval's formula are in ``simulo_envs/training/suite_benchmark.py``.

Without ``--checkpoint`` every task of ``--tasks`` (default: every registered SO-101 suite task;
the SO-100 twins may be named too) runs its scripted expert; with checkpoints (``scripts/train.py``,
``scripts/train_sb3.py``, ``scripts/train_il.py``, or a LeRobot policy folder in the LeRobot
venv), each runs its own task, which must be a suite
task, and ``--tasks`` is refused (a checkpoint's task is the one it was trained on). ``--out DIR`` writes ``DIR/benchmark_suite.json`` (the rows, the means, the
seeds, the wall-clock seconds) and ``DIR/benchmark_suite.md`` (the table); the table is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # start_signals.py beside this file
from start_signals import after_the_work, loading  # noqa: E402

with loading(__name__):   # a stop signal while torch, SAPIEN and the tasks load: one line, no traceback
    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.output_paths import check_output_dir
    from simulo_envs.training.suite_benchmark import (FIRST_SEEDS, checkpoint_task, markdown_table, resolve_split_list,
                                                      run_checkpoint, run_expert, suite_tasks, summarize)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=None, metavar="ENV_ID",
                        help="suite tasks to run with their scripted experts (default: every SO-101 suite task; "
                             "SO-100 twins too)")
    parser.add_argument("--checkpoint", nargs="+", default=None,
                        help="policies to run instead of the experts, each in its own task")
    parser.add_argument("--splits", nargs="+", default=["train", "heldout"], choices=sorted(FIRST_SEEDS))
    parser.add_argument("--episodes", type=int, default=50, help="episodes per task and split")
    parser.add_argument("--device", default="cpu", help="where a checkpoint's policy runs")
    parser.add_argument("--out", default=None,
                        help="write benchmark_suite.json and benchmark_suite.md here (made with its parents if missing)")
    return parser


def main(argv=None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    known = suite_tasks("")
    tasks = args.tasks or suite_tasks()
    unknown = [task for task in tasks if task not in known]
    if args.checkpoint and args.tasks:
        parser.error("--tasks names the experts' tasks; a checkpoint runs the task it was trained on: give one of the two")
    if args.checkpoint is None and unknown:
        parser.error(f"not suite tasks: {unknown}; suite tasks: {known}")
    if args.checkpoint:
        missing = [path for path in args.checkpoint if not os.path.exists(path)]
        if missing:
            parser.error(f"no such checkpoint: {missing}")
        for path in args.checkpoint:
            try:
                env_id = checkpoint_task(path)
            except (OSError, ValueError) as error:
                parser.error(str(error))
            if env_id not in known:
                parser.error(f"{path} is a policy for {env_id}, not a suite task; suite tasks: {known}")
    try:
        splits = resolve_split_list(args.splits)
        if args.out:
            check_output_dir(args.out, "output folder")
    except ValueError as error:
        parser.error(str(error))
    torch.set_num_threads(1)
    start = time.perf_counter()
    rows = []
    runs = [(path, split) for path in args.checkpoint for split in splits] if args.checkpoint else \
        [(task, split) for task in tasks for split in splits]
    for item, split in runs:
        row = run_checkpoint(item, split, args.episodes, args.device) if args.checkpoint else \
            run_expert(item, split, args.episodes)
        rows.append(row)
        print(f"{row['env_id']} {split}: success once {row['success_once']:.0%}, at end {row['success_at_end']:.0%} "
              f"({row['episodes']} episodes, {row['wall_s']:.0f} s)", flush=True)
    summary = summarize(rows)
    summary.update({"first_seeds": {split: FIRST_SEEDS[split] for split in splits},
                    "wall_s": round(time.perf_counter() - start, 1), "load_average": list(os.getloadavg())})
    table = markdown_table(summary)
    print(table + f"\n{len(rows)} runs in {summary['wall_s']:.0f} s", flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "benchmark_suite.json"), "w") as handle:
            json.dump(summary, handle, indent=1)
        with open(os.path.join(args.out, "benchmark_suite.md"), "w") as handle:
            handle.write(table)


if __name__ == "__main__":
    status = main()
    after_the_work("the tables are printed and written")
    sys.exit(status)
