"""Train PPO (rsl-rl-lib) on a simulo_envs task: in one process, or data-parallel under torchrun.

    python scripts/train.py --env-id FrankaReach-v1 --num-envs 64 --total-timesteps 300000 --seed 0
    torchrun --standalone --nproc_per_node=2 scripts/train.py --env-id FrankaReach-v1 --num-envs 64

Hyperparameters come from the task (``train_config`` next to it; see
``simulo_envs/training/rsl_rl_train.py``); ``--num-envs`` / ``--total-timesteps`` override its defaults.
``--max-minutes`` caps the training's wall-clock: it stops before an iteration that would end past
the cap, whatever is left of the step budget, saves ``model_final.pt`` as usual, and its last line
says how many of the budget's env steps it trained (``--resume`` trains the rest).
PPO trains whole iterations (num_envs x the config's steps per env): the budget is rounded down to
them, and the first line printed says exactly what will be trained.

Distillation into an image policy: ``--teacher CHECKPOINT`` (a PPO checkpoint of this script)
trains a student that reads camera images and the robot's proprioception, on its own rollouts, with
the teacher's actions as labels (rsl-rl-lib's distillation with DAgger's mixing and aggregation,
``simulo_envs/training/distillation.py``); the task is the teacher's. ``--camera-size W H`` sets
every sensor camera's resolution (default 64 x 64 for a student), ``--cameras`` the ones the
student reads (default all). ``--robot-uids`` picks another robot the task supports: a Panda task's
``panda_wristcam`` carries a ``hand_camera`` (``simulo_envs/agents/panda.py``) beside the task's
front camera.

    python scripts/train.py --teacher tasks/so100_lift_ppo.pt --camera-size 32 32 --max-minutes 20

``--camera-size W H`` and ``--randomization {default,none,visual,visual_v1}`` set the env's cameras and
randomization preset as the other scripts spell them (``simulo_envs/datasets/scene_cli.py``);
the checkpoint keeps them (its ``train_config["env_kwargs"]``), and evaluation uses them. A PPO policy
reads the state, no image: without ``--teacher``, ``--camera-size``, ``--cameras`` and a visual preset are
refused before anything is built (they would change nothing it sees).

Your own task: ``--task-module my_tasks`` imports ``my_tasks`` (from the current directory or the
Python path) so the ids it registers can be trained, or name the class: ``--env-id my_tasks:MyTask``.

Under torchrun (``docs/distributed.md``), ``--num-envs`` counts the envs of all ranks; each rank
builds its share, gradients are averaged over the ranks (gloo on CPU, NCCL on CUDA), and rank 0
alone writes. Writes to ``--log-dir`` (default ``runs/<env-id>/seed<seed>``): TensorBoard events
(``tensorboard --logdir runs``), ``progress.csv`` (success rate against env steps), checkpoints
``model_<iteration>.pt`` and ``model_final.pt``; ``--eval-episodes N`` also evaluates the final
checkpoint (rank 0) and writes ``evaluation.json``. Evaluate later with
``scripts/evaluate.py --checkpoint .../model_final.pt``.

One run per log folder: a folder that holds an earlier run is refused, unless ``--resume``
continues it (from its latest checkpoint: networks, optimizer, iteration, env steps, log) or
``--overwrite`` deletes it first. A run stopped before its first iteration ended saved no
checkpoint: the same command starts it again in its folder (one line says so). The folder and
``--device`` are checked before anything is built.
A resumed run keeps what it was trained with: the task, the number of envs, the budget,
``--checkpoint-every``, the env's settings (cameras, randomization, backend), the seed and a
student's teacher and cameras come from its checkpoint, so ``--resume --log-dir DIR`` is enough;
an option given again must agree with the run, as the env resolves it (the task's defaults filled
in: ``simulo_envs/training/saved_runs.py``). ``--total-timesteps`` may change (a larger budget
trains further; a session stopped before its first new iteration keeps it), and so may
``--checkpoint-every``. Training again without ``--eval-episodes`` removes a stale ``evaluation.json``.

    python scripts/train.py --log-dir runs/SO100Lift-v1/seed0 --resume

Ctrl-C (SIGINT) or SIGTERM stops the training at a safe point (the next env step; under torchrun
the end of the iteration, every rank together); rank 0 saves ``model_<iteration>.pt`` of the last
whole iteration, one line says where, and the exit status is 130 (SIGINT) or 143 (SIGTERM).
``--resume`` continues from there. A second Ctrl-C stops at once, without saving. A Ctrl-C while the
training starts (while the libraries load, or after the plan line) ends it with one line and status 130: nothing
saved, the same command starts it again.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # start_signals.py beside this file
from start_signals import after_the_work, loading  # noqa: E402

with loading(__name__):   # a stop signal while torch, SAPIEN and the tasks load: one line, no traceback
    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.datasets.scene_cli import (add_scene_options, check_policy_reads_cameras, check_policy_sees_randomization,
                                               scene_kwargs)
    from simulo_envs.sim import sim_backend_arg
    from simulo_envs.output_paths import error_line
    from simulo_envs.training.distributed import check_device, rank_device, rank_info
    from simulo_envs.training.evaluation import evaluate
    from simulo_envs.training.interrupt import ctrl_c_while_starting, evaluation_stopped_by_ctrl_c, exit_status
    from simulo_envs.training.run_files import (OutputError, claim_log_dir, drop_stale_evaluation, unsaved_run_note,
                                                write_json)
    from simulo_envs.training.saved_runs import SetupError, take_saved_run as take_saved_run_of
    from simulo_envs.workers.sharded import num_workers_arg
    from simulo_envs.training.rsl_rl_train import describe_result, import_task_modules, plan_training, resume_infos, train


DEFAULT_ENV_ID = "FrankaReach-v1"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default=None,
                        help="a registered id, or 'module:Class' / 'module:EnvId' for a task of your own "
                             f"(default {DEFAULT_ENV_ID}; with --resume, the run's)")
    parser.add_argument("--task-module", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers your tasks); repeatable")
    parser.add_argument("--num-envs", type=int, default=None, help="all ranks together; default: the task's config")
    parser.add_argument("--total-timesteps", type=int, default=None,
                        help="env steps, all envs together (an upper bound: whole PPO iterations)")
    parser.add_argument("--seed", type=int, default=None, help="default 0; with --resume, the run's")
    parser.add_argument("--log-dir", default=None,
                        help="default runs/<env-id>/seed<seed>; one run per folder; made with its parents if missing")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --log-dir from its latest checkpoint")
    parser.add_argument("--overwrite", action="store_true",
                        help="delete an earlier run in --log-dir and start again")
    parser.add_argument("--device", default="cpu", help="where the networks run (cuda: cuda:<LOCAL_RANK> per rank)")
    parser.add_argument("--checkpoint-every", type=int, default=None,
                        help="iterations between checkpoints (default: the config's save_interval)")
    parser.add_argument("--eval-episodes", type=int, default=0,
                        help="evaluate model_final.pt over this many episodes after training (rank 0)")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="wall-clock cap on training: stop before an iteration that would end past it")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch CPU threads per process")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--num-workers", type=num_workers_arg, default=None, metavar="P",
                        help="worker processes per rank stepping its envs: an int or 'auto' (default: the config's; "
                             "docs/scale_out.md)")
    parser.add_argument("--teacher", default=None, metavar="CHECKPOINT",
                        help="distil this PPO checkpoint into an image student (its task; --env-id is ignored)")
    parser.add_argument("--cameras", nargs="+", default=None, metavar="NAME",
                        help="with --teacher: the cameras the student reads (default: all of the task's)")
    parser.add_argument("--robot-uids", default=None, metavar="UID",
                        help="the robot the task builds, one it supports (default: its own); 'panda_wristcam' is the "
                             "Panda with a hand camera, for an image student of a Panda task")
    add_scene_options(parser)
    parser.add_argument("--sim-backend", default=None, type=sim_backend_arg,
                        help="auto, physx_cpu, physx_cuda[:N] or physx_cuda_emulated (default: the task's config)")
    return parser


def fail(parser: argparse.ArgumentParser, message: str) -> None:
    """``parser.error`` on rank 0; the other ranks of a torchrun launch exit with the same status quietly."""
    if rank_info().is_main:
        parser.error(message)
    sys.exit(2)


def default_log_dir(env_id: str, seed: int, student: bool) -> str:
    """``runs/<env-id>[-student]/seed<seed>`` (a ``module:Class`` id with its colon as a dot)."""
    return os.path.join("runs", env_id.replace(":", ".") + ("-student" if student else ""), f"seed{seed}")


def take_saved_run(args: argparse.Namespace, env_kwargs: dict) -> str:
    """With ``--resume``: check the options given again against the run in the log folder and fill
    in those left out (``simulo_envs.training.saved_runs.take_saved_run``); returns that folder.
    ``env_kwargs`` (the env options given) becomes the run's.

    Raises:
        OutputError / SetupError / ValueError: as ``take_saved_run``.
    """
    if args.log_dir is None and args.teacher:
        from simulo_envs.training.distillation import read_teacher

        args.log_dir = default_log_dir(read_teacher(args.teacher)["env_id"], args.seed or 0, student=True)
    log_dir = args.log_dir or default_log_dir(args.env_id or DEFAULT_ENV_ID, args.seed or 0, student=False)
    given = {"--env-id": None if args.teacher else args.env_id, "--seed": args.seed, "--num-envs": args.num_envs,
             "--teacher": args.teacher, "--cameras": args.cameras}
    run = take_saved_run_of(log_dir, given, env_kwargs, library="rsl_rl")
    args.env_id, args.teacher, args.seed, args.num_envs = run.env_id, run.teacher, run.seed, run.num_envs
    args.cameras = run.cameras
    args.total_timesteps = run.total_timesteps if args.total_timesteps is None else args.total_timesteps
    args.checkpoint_every = run.checkpoint_every if args.checkpoint_every is None else args.checkpoint_every
    if args.teacher and "sensor_configs" in run.env_kwargs:
        sizes = run.env_kwargs["sensor_configs"]
        args.camera_size = (sizes["width"], sizes["height"])
    return log_dir


def main(argv=None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("torch_threads", "eval_episodes", "checkpoint_every"):
        value = getattr(args, name)
        if value is not None and value < (0 if name == "eval_episodes" else 1):
            fail(parser, f"--{name.replace('_', '-')} must be >= {0 if name == 'eval_episodes' else 1}, got {value}")
    if args.max_minutes is not None and not args.max_minutes > 0:
        fail(parser, f"--max-minutes must be > 0, got {args.max_minutes}")
    if args.resume and args.overwrite:
        fail(parser, "--resume continues the run in the log folder and --overwrite deletes it: give one")
    torch.set_num_threads(args.torch_threads)
    try:
        import_task_modules(args.task_module)
        rank = rank_info()
        device = check_device(rank_device(check_device(args.device), rank))
        env_kwargs = {} if args.sim_backend is None else {"sim_backend": args.sim_backend}
        env_kwargs.update(scene_kwargs(args))
        if args.robot_uids is not None:
            env_kwargs["robot_uids"] = args.robot_uids
        cameras_given = {"--camera-size": args.camera_size, "--cameras": args.cameras}
        if args.resume:
            args.log_dir = take_saved_run(args, env_kwargs)
        check_policy_reads_cameras(cameras_given, reads_images=bool(args.teacher))
        check_policy_sees_randomization(env_kwargs.get("randomization"), reads_images=bool(args.teacher))
        args.env_id, args.seed = args.env_id or DEFAULT_ENV_ID, args.seed or 0
        vector_kwargs = {} if args.num_workers is None else {"num_workers": args.num_workers}
        if args.teacher:
            from simulo_envs.training.distillation import MIN_IMAGE_SIDE, plan_distillation

            if args.camera_size is not None and min(args.camera_size) < MIN_IMAGE_SIDE:
                raise ValueError(f"--camera-size {args.camera_size[0]} {args.camera_size[1]}: the student's cameras "
                                 f"need at least {MIN_IMAGE_SIDE} px of width and of height")
            size = (64, 64) if args.camera_size is None else (args.camera_size[1], args.camera_size[0])
            plan = plan_distillation(args.teacher, size, args.cameras, args.num_envs, args.total_timesteps,
                                     rank.world_size, env_kwargs, vector_kwargs)
            args.env_id = plan.env_id
        else:
            plan = plan_training(args.env_id, args.num_envs, args.total_timesteps, rank.world_size, env_kwargs,
                                 vector_kwargs)
        log_dir = args.log_dir or default_log_dir(args.env_id, args.seed, student=bool(args.teacher))
        if rank.is_main:   # what rank 0 will write, checked before anything is built
            note = unsaved_run_note(log_dir, claim_log_dir(log_dir, resume=args.resume, overwrite=args.overwrite),
                                    args.overwrite)
            if args.resume:
                resume_infos(log_dir, plan, device)
    except (LookupError, ValueError, TypeError, ImportError, OSError) as error:
        fail(parser, error_line(error))
    if rank.is_main:
        if note:
            print(note, flush=True)
        print(f"training {plan.describe()}; logs in {log_dir}{' (resumed)' if args.resume else ''}", flush=True)
    try:
        with ctrl_c_while_starting():
            result = train(plan.env_id, seed=args.seed, log_dir=log_dir, device=device,
                           checkpoint_every=args.checkpoint_every, progress=not args.no_progress, plan=plan,
                           max_wall_s=None if args.max_minutes is None else args.max_minutes * 60,
                           resume=args.resume, overwrite=args.overwrite)
    except SetupError as error:
        fail(parser, str(error))
    if rank.is_main:
        print(describe_result(result), flush=True)
    if result.interrupted is not None:
        sys.exit(exit_status(result.interrupted))
    if not rank.is_main:
        return
    try:   # model_final.pt was replaced: the evaluation beside it described the one before
        if args.resume and result.session_steps and drop_stale_evaluation(log_dir) and not args.eval_episodes:
            print(f"removed {os.path.join(log_dir, 'evaluation.json')}: it evaluated the model before this "
                  f"session (--eval-episodes N evaluates the new one)", flush=True)
    except OutputError as error:
        sys.exit(f"{parser.prog}: error: {error}")
    if not args.eval_episodes:
        return
    with evaluation_stopped_by_ctrl_c(result.checkpoint):
        summary = evaluate(result.checkpoint, args.eval_episodes, device=device, progress=not args.no_progress,
                           num_workers=args.num_workers)
    print(f"evaluation: success rate {summary['success_rate']:.1%} over {summary['episodes']} episodes", flush=True)
    path = os.path.join(log_dir, "evaluation.json")
    try:
        write_json(path, summary, "evaluation file")
    except OutputError as error:
        sys.exit(f"{parser.prog}: error: {error}")


if __name__ == "__main__":
    main()
    after_the_work("everything is saved")
