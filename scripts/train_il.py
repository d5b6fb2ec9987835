"""Train behaviour cloning or Diffusion Policy on a dataset of demonstrations, on the CPU.

    python scripts/collect_demos.py --env-id FrankaPush-v1 --num-episodes 100 --out demos/push
    python scripts/train_il.py --dataset demos/push --policy diffusion --obs state --max-minutes 15
    python scripts/evaluate.py --checkpoint runs/il/FrankaPush-v1/diffusion_state_seed0/model_final.pt

The dataset is read through ``simulo_envs.datasets`` (LeRobot v3.0 or ManiSkill-style HDF5). ``--obs state``
trains on the flat state observation; ``--obs rgb`` on the images of every camera the dataset holds
(``--camera NAME``, repeatable, picks some; an SO arm's front and wrist cameras are read
together) plus the robot's own state (a dataset recorded with images). Before anything trains, the dataset is checked against
the env the policy will run in (``--env-id``, default the dataset's; its observation widths and
action dimension in the dataset's control mode): another task, observation kind or action width,
fewer than two episodes, or a NaN are refused with a message naming the problem.

Outputs in ``--out`` (default ``runs/il/<env>/<policy>_<obs>_seed<seed>``): ``model_<i>.pt``
every ``--checkpoint-every`` iterations and ``model_final.pt``; the newest of them keeps the
training state (resumable with ``--resume``), the older ones their acting weights alone,
``progress.csv`` (iteration, training seconds, loss, learning rate, iterations/s), TensorBoard
events, and with ``--eval-episodes K`` ``evaluations.csv``: success over K episodes of every
checkpoint (evaluation time is not counted as training time). ``--export FILE`` also writes the
final policy's acting weights alone (a small file for sharing; an existing file is refused, never replaced). Hyperparameters: ``--set
name=value`` (``simulo_envs/imitation/config.py`` lists them, with units).

Ctrl-C (or SIGTERM) stops the training at the next iteration, saves ``model_<iteration>.pt`` and prints
the command that resumes it (status 130); a Ctrl-C while it starts, after the plan line, ends it with one
line (status 130, nothing saved: the same command starts it again).

``--resume CHECKPOINT`` continues a run where its newest checkpoint left it, in the checkpoint's
folder (unless ``--out``), with the policy, observation kind, cameras, randomization, seed,
demonstrations (``--num-demos``; another dataset's episodes are refused), hyperparameters,
iteration budget and ``--checkpoint-every`` the run was trained with; those options given again
must agree with it (a ``--set`` too), except ``--iterations``, which may raise the budget (the
learning rate's schedule is then planned over the new one; a lower budget is refused, the run keeps
its schedule), and ``--checkpoint-every``. A run whose budget is spent is refused before any work:
give ``--iterations`` above what it did. An output folder that holds another run is refused before
the plan is printed.

``--randomization {default,none,visual,visual_v1}`` evaluates the policy (``--eval-episodes``, and later
``scripts/evaluate.py``) under that randomization preset: the checkpoint's policy spec keeps it.
``--camera-size W H`` (spelled as in the other scripts) must match the dataset's images. A state
policy (``--obs state``) reads no image: ``--camera-size`` and ``--camera`` are refused for it.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # start_signals.py beside this file
from start_signals import after_the_work, loading  # noqa: E402

with loading(__name__):   # a stop signal while torch, SAPIEN and the tasks load: one line, no traceback
    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.datasets.scene_cli import add_scene_options, check_policy_reads_cameras, check_policy_sees_randomization
    from simulo_envs.imitation import CheckpointError, DemonstrationError, default_config, export_policy
    from simulo_envs.output_paths import check_output_file, error_line
    from simulo_envs.imitation.config import POLICIES, ILConfig
    from simulo_envs.imitation.spec import OBS_MODES
    from simulo_envs.training.interrupt import ctrl_c_while_starting

HYPERPARAMETERS = sorted(field.name for field in dataclasses.fields(ILConfig))

DEFAULT_CHECKPOINT_EVERY = 2000


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, help="a dataset folder (LeRobot v3.0) or HDF5 file")
    parser.add_argument("--policy", choices=POLICIES, default=None,
                        help="default diffusion; with --resume, the run's")
    parser.add_argument("--obs", choices=OBS_MODES, default=None, help="default state; with --resume, the run's")
    parser.add_argument("--env-id", default=None, help="the env the policy is for (default: the dataset's)")
    parser.add_argument("--camera", action="append", default=None, metavar="NAME",
                        help="rgb: a camera of the dataset to read (repeatable; default: every camera it holds, "
                             "e.g. front and wrist)")
    parser.add_argument("--num-demos", type=int, default=None, help="train on the first N episodes only")
    parser.add_argument("--out", default=None,
                        help="output folder (default runs/il/<env>/<policy>_<obs>_seed<seed>; made with its parents "
                             "if missing)")
    parser.add_argument("--seed", type=int, default=None, help="default 0; with --resume, the run's")
    parser.add_argument("--iterations", type=int, default=None,
                        help="gradient steps (default: the config's; with --resume, the run's: a larger one trains "
                             "further)")
    parser.add_argument("--max-minutes", type=float, default=None, help="stop after this many minutes of training")
    parser.add_argument("--max-cpu-minutes", type=float, default=None,
                        help="stop after this many minutes of this process's CPU time (on a shared machine: what "
                             "the training takes alone on one core)")
    parser.add_argument("--checkpoint-every", type=int, default=None, metavar="N",
                        help=f"iterations between checkpoints (default {DEFAULT_CHECKPOINT_EVERY}; "
                             f"with --resume, the run's)")
    parser.add_argument("--resume", default=None, metavar="CHECKPOINT", help="continue a run from its model_*.pt")
    parser.add_argument("--eval-episodes", type=int, default=0, metavar="K",
                        help="evaluate every checkpoint on K episodes (seeds from --eval-seed)")
    parser.add_argument("--eval-seed", type=int, default=10_000)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a hyperparameter")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--export", default=None, metavar="FILE",
                        help="also write the final acting weights here, a new file (its folder is made if missing, "
                             "in an existing folder)")
    add_scene_options(parser)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    return parser


def _overrides(pairs: list[str], parser) -> dict:
    """``--set NAME=VALUE`` pairs as a dict of Python values; a name that is no hyperparameter is
    refused here, in the same words for a new and a resumed run."""
    out = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            parser.error(f"--set takes NAME=VALUE, got {pair!r}")
        if name not in HYPERPARAMETERS:
            parser.error(f"--set {name}: no such hyperparameter; the hyperparameters: {', '.join(HYPERPARAMETERS)}")
        try:
            out[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[name] = text
    return out


def _with_scene(spec, args):
    """The dataset's policy spec with ``--randomization`` (kept in the checkpoint: evaluation runs
    under it); ``--camera-size`` must be the dataset's own image size (the policy reads those)."""

    if args.camera_size is not None and spec.obs == "rgb" and tuple(args.camera_size[::-1]) != tuple(spec.image_size):
        raise ValueError(f"--camera-size {args.camera_size[0]} {args.camera_size[1]}: the dataset's images are "
                         f"{spec.image_size[1]} x {spec.image_size[0]} (width x height), the size the policy reads")
    if args.randomization is not None:
        spec = dataclasses.replace(spec, randomization=args.randomization)
    return spec


def _plain(value):
    """A hyperparameter's value for comparison: a list as the tuple a config holds."""
    return tuple(value) if isinstance(value, list) else value


def take_resumed_run(args: argparse.Namespace, overrides: dict) -> None:
    """With ``--resume``: the options the command line left out (policy, observation kind, cameras,
    randomization, seed, output folder, iteration budget, checkpoint interval) from the
    checkpoint's run; without it, the defaults. A resumed run keeps its hyperparameters: a
    ``--set`` (``overrides``) must give the run's own value (a changed network width would not
    load, a changed learning rate or batch would make one curve of two trainings); only the
    budget may change (``--iterations``, or ``--set iterations=``), to one above the iterations
    already done.

    Raises:
        FileNotFoundError / CheckpointError: as ``read_checkpoint``. ValueError: an option given
        again that disagrees with the run (a randomization compared by the table it resolves to:
        ``saved_runs.same_env_setting``), a ``--set`` of the wrong kind or of another value, a
        budget already spent, or one below the run's (its learning-rate schedule is kept).
    """
    if args.resume is None:
        args.policy, args.obs, args.seed = args.policy or "diffusion", args.obs or "state", args.seed or 0
        args.checkpoint_every = args.checkpoint_every or DEFAULT_CHECKPOINT_EVERY
        args.resumed_iteration = None
        return
    from simulo_envs.imitation.checkpoint import check_resumable, read_checkpoint
    from simulo_envs.training.saved_runs import same_env_setting

    raw = read_checkpoint(args.resume)
    check_resumable(raw, args.resume)   # first: a file that cannot be resumed, whatever the options say
    spec, config = raw["spec"], raw["config"]
    run = {"policy": config["policy"], "obs": spec["obs"], "randomization": spec.get("randomization"),
           "seed": raw.get("seed", 0)}
    for name, value in run.items():
        given = getattr(args, name)
        same = (same_env_setting(spec["env_id"], "randomization", value, given) if name == "randomization"
                else value is None or given == value)
        if given is not None and not same:
            shown = value if value is not None else "default"   # a run that named none: the task's own table
            raise ValueError(f"{args.resume!r} trained with --{name} {shown}, not {given}: a resumed run keeps "
                             f"its settings (leave --{name} out)")
        if given is None or name == "randomization":   # the run's own spelling of an equal randomization
            setattr(args, name, value)
    if overrides:   # a value of the wrong kind (--set lr=abc) is said as such, before any comparison with the run
        try:
            ILConfig.from_dict({**config, **overrides})
        except (TypeError, ValueError) as error:
            raise ValueError(f"--set: {error}") from None
    for name, value in overrides.items():
        if name == "iterations":
            continue
        if _plain(value) != _plain(config[name]):
            raise ValueError(f"--set {name}={value}: the run in {args.resume!r} trained with {name}={config[name]}, "
                             f"and a resumed run keeps its hyperparameters (leave --set {name} out, or start a new "
                             f"run in another --out)")
    trained_on = raw["demos"].get("episodes")
    if args.num_demos is not None and trained_on is not None and args.num_demos != trained_on:
        raise ValueError(f"{args.resume!r} trained on {trained_on} episodes, not --num-demos {args.num_demos}: a "
                         f"resumed run keeps its demonstrations (leave --num-demos out)")
    args.num_demos = args.num_demos if trained_on is None else trained_on
    done, planned = int(raw["iteration"]), int(config["iterations"])
    budget = int(overrides.get("iterations", planned))
    if budget <= done:
        asked = (f"its budget of {budget:,}" if "iterations" not in overrides
                 else f"--iterations {budget:,} leaves nothing to train")
        raise ValueError(f"{args.resume!r} already trained {done:,} iterations ({asked}): give --iterations "
                         f"above {done:,} to train further")
    if budget < planned:   # the learning rate's schedule is planned over the budget: a lower one would re-plan it
        raise ValueError(f"--iterations {budget:,}: {args.resume!r} was planned for {planned:,} iterations (its "
                         f"learning rate's warmup and cosine decay run over them), and a resumed run keeps that "
                         f"schedule: leave --iterations out to finish the run, or give more than {planned:,} to "
                         f"train further")
    overrides["iterations"] = budget
    args.resumed_iteration = done
    args.checkpoint_every = args.checkpoint_every or raw.get("checkpoint_every") or DEFAULT_CHECKPOINT_EVERY
    if spec["obs"] == "rgb" and args.camera is None and spec.get("cameras"):
        from simulo_envs.datasets import load_dataset

        dataset = load_dataset(args.dataset)   # the run's cameras by the dataset's names for them
        by_env_name = {dataset.schema.env_camera(name): name for name in dataset.cameras}
        args.camera = [by_env_name.get(name, name) for name in spec["cameras"]]
    args.out = args.out or os.path.dirname(os.path.abspath(args.resume))


BLIND_STATE_WARNING = (
    "warning: a state policy on this dataset reads the robot's joints alone (the dataset records what the real "
    "arm gives, no object), so it cannot see where the objects are: train from the cameras (--obs rgb) or record "
    "the task's full state (scripts/collect_demos.py --format hdf5)")
"""Printed (stderr) after the plan line when a state policy trains on a robot-only dataset (a LeRobot dataset of
an SO arm): it trains and runs, but succeeds only by chance (docs/imitation.md measures 0.06 on SO100Lift-v1)."""


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("checkpoint_every", "threads", "iterations"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.eval_episodes < 0 or (args.num_demos is not None and args.num_demos < 2):
        parser.error("--eval-episodes must be >= 0 and --num-demos >= 2")
    torch.set_num_threads(args.threads)
    from simulo_envs.imitation.datasets_io import load_demonstrations
    from simulo_envs.imitation.rollout import evaluate
    from simulo_envs.imitation.trainer import OutputInUse, check_output_dir, train

    try:
        overrides = _overrides(args.set, parser)
        if args.iterations is not None:   # --iterations N is --set iterations=N
            if overrides.get("iterations", args.iterations) != args.iterations:
                parser.error(f"--iterations {args.iterations} and --set iterations={overrides['iterations']} disagree")
            overrides["iterations"] = args.iterations
        asked_demos = args.num_demos   # None: a resumed run's own count, filled in below
        take_resumed_run(args, overrides)
        check_policy_reads_cameras({"--camera-size": args.camera_size, "--camera": args.camera},
                                   reads_images=args.obs == "rgb")
        check_policy_sees_randomization(args.randomization, reads_images=args.obs == "rgb")
        if args.export:   # before any work: a path that cannot be written, or a file there, is refused now
            check_output_file(args.export, "export file")
            if os.path.exists(args.export):
                raise ValueError(f"--export {args.export}: the file exists (a policy of its own?); choose a new "
                                 "path or remove it first; nothing was written")
        try:
            config = default_config(args.policy, args.obs, overrides)
        except ValueError as error:   # only a --set value can make the defaults invalid
            raise ValueError(f"--set: {error}") from None
        demos = load_demonstrations(args.dataset, args.obs, env_id=args.env_id, camera=args.camera)
        if args.num_demos is not None and args.num_demos > len(demos.episodes):
            if asked_demos is None:   # the run's count: another dataset than the run's
                raise ValueError(f"{args.resume!r} trained on {args.num_demos} episodes and {args.dataset} has "
                                 f"{len(demos.episodes)}: resume on the run's dataset")
            raise ValueError(f"--num-demos {args.num_demos}: {args.dataset} has {len(demos.episodes)} episodes")
        if args.num_demos is not None:
            demos = demos.subset(args.num_demos)
        demos.spec = _with_scene(demos.spec, args)
        out = args.out or os.path.join("runs", "il", demos.spec.env_id, f"{args.policy}_{args.obs}_seed{args.seed}")

        def on_checkpoint(path: str, iteration: int, wall_s: float):
            if not args.eval_episodes:
                return None
            summary = evaluate(path, args.eval_episodes, seed=args.eval_seed, max_envs=min(args.eval_episodes, 100))
            return {"success_rate": summary["success_rate"], "success_at_end": summary["success_at_end"]}

        check_output_dir(out, resume=args.resume is not None)   # an occupied folder is refused before the plan
        resumed = args.resumed_iteration   # None for a new run (take_resumed_run)
        print(f"training {config.policy} on {len(demos.episodes)} episodes ({demos.frames} frames) of "
              f"{demos.spec.describe()} -> {out}"
              + (f" (resumed at iteration {resumed:,} of {config.iterations:,})" if resumed is not None else ""),
              flush=True)
        if demos.spec.obs == "state" and demos.spec.state_source == "robot":
            print(BLIND_STATE_WARNING, file=sys.stderr, flush=True)
        with ctrl_c_while_starting():
            result = train(demos, config, out, seed=args.seed, max_minutes=args.max_minutes,
                           max_cpu_minutes=args.max_cpu_minutes,
                           checkpoint_every=args.checkpoint_every, resume=args.resume, progress=not args.no_progress,
                           on_checkpoint=on_checkpoint)
        exported = export_policy(result.checkpoint, args.export) if args.export else None
    except (DemonstrationError, CheckpointError, OutputInUse, KeyError, ValueError, OSError) as error:
        parser.error(error_line(error))
    summary = {"checkpoint": result.checkpoint, "iterations": result.iterations, "wall_s": round(result.wall_s, 1),
               "loss": result.loss, "interrupted": result.interrupted}
    if exported is not None:
        summary["export"], summary["export_bytes"] = args.export, exported
    if result.interrupted:
        again = ["python", "scripts/train_il.py", "--dataset", args.dataset, "--resume", result.checkpoint]
        again += ["--env-id", args.env_id] if args.env_id else []
        print(f"interrupted at iteration {result.iterations}: saved {result.checkpoint}; resume with: "
              f"{shlex.join(again)}", flush=True)
    loss = "no loss computed in this session" if result.loss is None else f"final loss {result.loss:.4f}"
    session = "" if resumed is None else f" in all ({result.iterations - resumed} in this session)"
    print(f"{result.iterations} iterations in {result.wall_s / 60:.1f} min{session}, {loss}: "
          f"{result.checkpoint}" + (f" (exported to {args.export}, {exported / 1e6:.1f} MB)" if exported else ""))
    if args.json:
        print(json.dumps(summary))
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    status = main()
    after_the_work("everything is saved")
    sys.exit(status)
