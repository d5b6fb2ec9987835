"""Evaluate a checkpoint of ``scripts/train.py`` (PPO, ``model_*.pt``), ``scripts/train_sb3.py``
(PPO, SAC or TD3, ``model.zip``: the algorithm is read from the file) or ``scripts/train_il.py``
(behaviour cloning, Diffusion Policy): success rate over ``--episodes`` episodes.

    python scripts/evaluate.py --checkpoint runs/FrankaReach-v1/seed0/model_final.pt --episodes 100
    python scripts/evaluate.py --checkpoint runs/FrankaReach-v1/seed0/model_*.pt --csv runs/FrankaReach-v1/seed0/evaluations.csv

The deterministic policy (the Gaussian's mean; SAC's squashed mean; TD3's actor without its
exploration noise) runs one episode per env, in batches of at most ``--max-envs`` envs, with the
task's terminations on: an episode counts as a success when the task reports success at some
step. ``--full-episodes`` ignores terminations instead: every episode runs to the time limit, and
"success at end" then says whether the success still holds at the last step (a lifted cube still
held up). Episode ``k`` uses seed ``--seed + k``. A checkpoint from a torchrun training (any
number of ranks) evaluates here in one process. A progress bar counts the finished episodes; the
summary follows, or with ``--json`` one JSON line. Several checkpoints are
evaluated in turn (one line each); ``--csv FILE`` also writes one row per checkpoint (its env steps
and success rates), which ``scripts/plot_training.py`` draws when the file is named
``evaluations.csv`` and sits beside the run's ``progress.csv``; for imitation checkpoints the rows
also hold the iteration and the training's wall-clock and CPU seconds, which
``scripts/plot_imitation.py`` draws (learning curves without evaluating during training).

A LeRobot policy folder (``lerobot-train``'s ``checkpoints/<step>/pretrained_model``, or the
``checkpoints/<step>`` folder holding it) is evaluated in the LeRobot venv
(``.venv-lerobot/bin/python scripts/evaluate.py --checkpoint outputs/train/act/checkpoints/last``):
LeRobot builds the policy and its processors and runs each batch through its own ``rollout``, in the
env the folder's ``train_config.json`` names (``--env.type=simulo``) or the one its dataset was
recorded in (``lerobot_env_simulo/evaluation.py``). With ``--shared-physics`` and ``--max-envs``
equal to ``lerobot-eval``'s ``--eval.batch_size``, episode ``k`` is ``lerobot-eval``'s episode ``k``
at ``--seed``; success at end, the return over the episode's own steps and videos come on top.

A task of your own is found again through the module the checkpoint names; ``--task-module``
imports more modules first (from the current directory or the Python path).

The kind of policy is read from the checkpoint. An imitation policy runs in its task with its own
observation kind (state or camera images) and control mode, its action chunks executed in receding
horizon (``simulo_envs/imitation/rollout.py``); seeds its demonstrations were recorded with are refused.

``--video-dir DIR`` also films the (last) checkpoint's policy for one episode in 4 envs (tiled) and
writes ``DIR/<env_id>.mp4`` (needs a Vulkan driver; ``make`` installs a software one). The clip ends
when every env has finished its episode, at its success for a task that terminates on success;
``--video-full-episodes`` (implied by ``--full-episodes``) films every episode to the time limit.

Episodes are reproducible: by default every env runs in a PhysX system of its own
(``sim_config.isolate_envs``), rebuilt before each batch, and the policy acts env by env, so each
episode, and the summary, is the same bit for bit whatever ``--max-envs`` and ``--num-workers``
(docs/reproducibility.md). ``--shared-physics`` puts all envs in one PhysX system with one
batched policy call instead: faster, but episodes then change with the batch at float-rounding
level, which can flip a contact-rich episode. The summary records what reproduces it
(``provenance``: software versions, repository commit, env settings, seeds) and, with
``--json``, each episode's ``[seed, success, success at end, return, length]`` (``per_episode``).

``--camera-size W H`` and ``--randomization {default,none,visual,visual_v1}`` (spelled as in the other
scripts) override the settings the checkpoint was trained with: ``--randomization visual`` evaluates
on visually randomized scenes (lights, colours, camera pose), drawn from the evaluation seeds. An
image policy reads its own image size: another ``--camera-size`` is refused; a state policy reads no
image: ``--camera-size`` is refused for it (it would change nothing). The result line ends with
``under randomization visual`` (or the preset used) whenever the scenes are not the task's own,
including a checkpoint trained under a preset and evaluated in it by default.

``--device`` and every output (``--video-dir``, ``--csv``) are checked before anything is
evaluated: a missing ``--video-dir`` is made with its parents, the missing folder of ``--csv``
only in an existing folder (``--csv results/x.csv`` makes ``results``; a path whose first folders
do not exist, a typo, is refused), and no new folder at the file system's root. Each result is printed as soon as it is computed, before the video and the CSV file
are written. A checkpoint trained on a GPU evaluates on ``--device cpu``.

Ctrl-C (SIGINT) or SIGTERM stops the evaluation at once: one line says how many episodes of the
checkpoint being evaluated finished and their success so far, the video and the CSV file are not
written (nor a folder made for them left behind), and the exit status is 130 (SIGINT) or 143
(SIGTERM). The results of checkpoints finished before were printed already. In the first seconds,
while torch, SAPIEN and the tasks load, a stop signal prints ``interrupted by SIGINT while loading:
nothing was run or written``; once every result is printed and written, one says so and the
process ends at once, or, in the last second while Python frees the libraries, the signal is
ignored and the process ends with status 0 (``scripts/start_signals.py``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # start_signals.py beside this file
from start_signals import after_the_work, loading  # noqa: E402

with loading(__name__):   # a stop signal while torch, SAPIEN and the tasks load: one line, no traceback
    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.datasets.scene_cli import add_scene_options, scene_kwargs
    from simulo_envs.imitation.dispatch import by_policy_type
    from simulo_envs.training.lerobot_policies import by_policy_folder
    from simulo_envs.training.distributed import check_device
    from simulo_envs.training.evaluation import evaluate, record_policy_video
    from simulo_envs.output_paths import (check_output_dir, check_output_file, error_line, missing_folders,
                                          remove_empty_folders)
    from simulo_envs.training.interrupt import episodes_interrupted, exit_status, stop_at_once
    from simulo_envs.workers.sharded import num_workers_arg
    from simulo_envs.training.task_lookup import import_task_modules

evaluate, record_policy_video = by_policy_type(evaluate, record_policy_video)   # imitation checkpoints too
evaluate, record_policy_video = by_policy_folder(evaluate, record_policy_video)  # and LeRobot policy folders


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, nargs="+",
                        help="one or more checkpoints: model_*.pt (scripts/train.py), model.zip (scripts/train_sb3.py), "
                             "a scripts/train_il.py checkpoint, or a LeRobot policy folder (lerobot-train's "
                             "checkpoints/<step>/pretrained_model; in the LeRobot venv)")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=10_000, help="evaluation seeds differ from training's")
    parser.add_argument("--max-envs", type=int, default=100)
    parser.add_argument("--full-episodes", action="store_true",
                        help="ignore terminations: every episode runs to the time limit, and success at "
                             "end says whether the success still holds at the last step")
    parser.add_argument("--task-module", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers your tasks); repeatable")
    parser.add_argument("--video-dir", default=None,
                        help="also write a video of the policy (4 envs, tiled) here (made with its parents if missing)")
    parser.add_argument("--video-full-episodes", action="store_true",
                        help="film every episode to the time limit (the clip otherwise ends at each env's first success)")
    parser.add_argument("--max-episode-steps", type=int, default=None, metavar="N",
                        help="each episode's time limit [env steps] (default: the task's as the checkpoint was "
                             "trained; needed by imitation checkpoints whose demonstrations were recorded without "
                             "one, after a control conversion)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-workers", type=num_workers_arg, default=1, metavar="P",
                        help="worker processes stepping the evaluation envs: an int or 'auto' (default 1: in process)")
    parser.add_argument("--shared-physics", action="store_true",
                        help="all envs in one PhysX system, one batched policy call: faster, but results then "
                             "depend on --max-envs at float-rounding level (default: one system per env, exact)")
    add_scene_options(parser)
    parser.add_argument("--json", action="store_true", help="print each summary as one JSON line")
    parser.add_argument("--csv", default=None,
                        help="write one row per checkpoint to this CSV file (its folder is made if missing, in an "
                             "existing folder)")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def main(argv=None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("episodes", "max_envs", "max_episode_steps"):  # --num-workers is checked by its type
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    try:   # where it runs and what it writes, before any work
        check_device(args.device)
        if args.video_dir:
            check_output_dir(args.video_dir, "video folder")
        if args.csv:
            check_output_file(args.csv, "CSV file")
    except ValueError as error:
        parser.error(str(error))
    torch.set_num_threads(1)
    checkpoints = sorted(args.checkpoint, key=_iteration_order)
    made = missing_folders(args.video_dir) if args.video_dir else []
    where = {"checkpoint": checkpoints[0], "step": "evaluation"}
    try:
        with stop_at_once():
            _evaluate_all(parser, args, checkpoints, where)
    except KeyboardInterrupt as stop:   # Ctrl-C or SIGTERM: one line, nothing half-written
        remove_empty_folders(made)
        name = getattr(stop, "signal_name", "SIGINT")
        if where["step"] == "video" and args.json:   # the result first, as without a video
            print(json.dumps(where["summary"]), flush=True)
        if where["step"] in ("video", "csv"):
            doing = "filming the video" if where["step"] == "video" else "writing the CSV file"
            line = f"interrupted by {name} while {doing}"
        else:
            line = episodes_interrupted(stop, args.episodes)
            if len(checkpoints) > 1:
                line = line.replace(" episodes", f" episodes of {where['checkpoint']}", 1)
        written = [path for path in (args.video_dir, args.csv) if path]
        print(line + (f"; nothing written to {' or '.join(written)}" if written else ""), file=sys.stderr, flush=True)
        sys.exit(exit_status(name))


def _evaluate_all(parser: argparse.ArgumentParser, args: argparse.Namespace, checkpoints: list[str],
                  where: dict) -> None:
    """Evaluate ``checkpoints`` in turn, print each result, film the last one (``--video-dir``) and
    write the CSV file (``--csv``); ``where`` says which checkpoint and step run (for the line a
    stop signal prints)."""
    summaries = []
    for checkpoint in checkpoints:
        step = where["step"] = "evaluation"
        where["checkpoint"] = checkpoint
        try:
            if not summaries:
                import_task_modules(args.task_module)
            limit = {} if args.max_episode_steps is None else {"max_episode_steps": args.max_episode_steps}
            summary = evaluate(checkpoint, args.episodes, seed=args.seed, max_envs=args.max_envs,
                               device=args.device, progress=not (args.no_progress or args.json),
                               full_episodes=args.full_episodes, num_workers=args.num_workers,
                               isolate=not args.shared_physics, env_kwargs=scene_kwargs(args) or None, **limit)
            summary["checkpoint"] = checkpoint
            summaries.append(summary)
            where["summary"] = summary
            filming = args.video_dir and checkpoint == checkpoints[-1]
            if not (filming and args.json):
                print(json.dumps(summary) if args.json else _describe(summary, several=len(checkpoints) > 1),
                      flush=True)
            if filming:
                step = where["step"] = "video"
                summary["video"] = record_policy_video(checkpoint, args.video_dir, seed=args.seed, device=args.device,
                                                       full_episodes=args.full_episodes or args.video_full_episodes,
                                                       env_kwargs=scene_kwargs(args) or None, **limit)
                print(json.dumps(summary) if args.json else f"video: {summary['video']}", flush=True)
        except (OSError, LookupError, ValueError, TypeError, ImportError, RuntimeError) as error:
            message = error_line(error)
            if step == "video":
                if args.json:   # the result first, as without a video
                    print(json.dumps(summaries[-1]), flush=True)
                message = f"the video could not be written to {args.video_dir}: {message}"
            parser.error(f"{checkpoint}: {message}" if len(checkpoints) > 1 else message)
    if args.csv:
        where["step"] = "csv"
        try:
            _write_csv(args.csv, summaries)
        except OSError as error:
            parser.error(f"cannot write {args.csv}: {error.strerror or error}")


def _iteration_order(path: str):
    """model_50.pt before model_100.pt before model_final.pt; other names keep their order at the end."""
    stem = os.path.splitext(os.path.basename(path))[0]
    number = stem.rpartition("_")[2]
    return (0, int(number), path) if number.isdigit() else (1, 0, path)


def _describe(summary: dict, several: bool) -> str:
    where = f"{summary['checkpoint']} ({summary['env_steps']:,} env steps) " if several and summary["env_steps"] else ""
    text = (f"{where}{summary['env_id']}: success rate {summary['success_rate']:.1%} over {summary['episodes']} "
            f"episodes (success at end {summary['success_at_end']:.1%}, mean return {summary['mean_return']:.2f}, "
            f"mean length {summary['mean_length']:.1f})")
    preset = ((summary.get("provenance") or {}).get("env") or {}).get("env_kwargs", {}).get("randomization")
    if preset is not None and preset != "default":   # the scenes differ from the task's own: say so
        text += f" under randomization {preset if isinstance(preset, str) else json.dumps(preset)!s}"
    return text


def _write_csv(path: str, summaries: list[dict]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)  # checked writable before the work
    columns = ["checkpoint", "env_steps", "episodes", "success_rate", "success_at_end", "mean_return", "mean_length",
               "full_episodes"]
    if any("train_wall_s" in s for s in summaries):   # imitation checkpoints: the columns plot_imitation.py reads
        columns += ["iteration", "wall_s", "cpu_s"]
        summaries = [{**s, "iteration": s.get("iterations"), "wall_s": s.get("train_wall_s"),
                      "cpu_s": s.get("train_cpu_s")} for s in summaries]
    writing = os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.writing")
    try:   # the file appears whole or not at all
        with open(writing, "w", newline="") as handle:
            table = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
            table.writeheader()
            table.writerows(summaries)
        os.replace(writing, path)
    except BaseException:
        if os.path.exists(writing):
            os.remove(writing)
        raise


if __name__ == "__main__":
    status = main()
    after_the_work("every result is printed and written")
    sys.exit(status)
