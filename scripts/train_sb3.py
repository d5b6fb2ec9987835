"""Train Stable-Baselines3's PPO, SAC or TD3 on a simulo_envs task through the SB3 adapter, then evaluate it.

    python scripts/train_sb3.py --env-id FrankaLift-v1 --seed 0 --max-minutes 10
    python scripts/train_sb3.py --algo sac --env-id FrankaLift-v1 --seed 0 --max-minutes 10
    python scripts/evaluate.py --checkpoint runs/sb3/FrankaLift-v1/seed0/model.zip --video-dir videos

The comparison run for ``scripts/train.py``: the same task, the same env settings and, where SB3
has them, the same PPO hyperparameters, read from the task's rsl-rl training config and mapped
onto SB3's names (``simulo_envs/training/sb3_train.py``: ``sb3_ppo_kwargs``). It plans, shows
progress, logs, stops and resumes as ``train.py`` does: the first line says what will be trained
(whole PPO iterations: rollouts of ``num_envs`` x the config's steps per env), a progress bar
moves every env step (plain lines when the output is not a terminal), ``progress.csv`` has
``train.py``'s columns, one row per trained rollout, and the summary line counts the same env
steps as its last row. Training stops at ``--total-timesteps`` or before a rollout that would end
past ``--max-minutes`` of wall-clock, whichever comes first.

SB3 bootstraps truncated episodes from ``terminal_observation`` and treats terminations as the
end of the return; a task that terminates on success then pays success once, so by default the
training env ignores terminations (``--terminations`` keeps them), and episodes run to the time
limit. Evaluation is ``scripts/evaluate.py``'s (``--eval-episodes`` episodes, one per env, seeds
from ``--eval-seed``, deterministic actions, terminations on: success = success at some step).

Writes ``--log-dir`` (default ``runs/sb3/<env-id>/seed<seed>``): ``run.json``, ``progress.csv``,
``model.zip`` (evaluate or film it with ``scripts/evaluate.py --checkpoint .../model.zip``) and
``evaluation.json``; ``--json`` prints the evaluation as one JSON line. One run per folder:
``--resume`` continues the run there (its task, algorithm, number of envs, budget, backend,
``--terminations`` and seed come from its ``model.zip``: ``--log-dir DIR --resume`` is enough;
options given again must agree, except ``--total-timesteps``, which may raise the budget; a spent
budget is refused before anything is printed), ``--overwrite`` deletes it first; a run stopped
before it saved ``model.zip`` leaves nothing to keep, and the same command starts it again there.
The folder and ``--device`` are checked before anything is built. A resumed session that trains
without evaluating (``--eval-episodes 0``, or stopped) removes the ``evaluation.json`` of the model
before it. Ctrl-C (SIGINT) or SIGTERM saves ``model.zip`` of the last
whole rollout, says so in one line and exits with status 130 or 143 (a Ctrl-C while the training
starts, after the plan line: one line, status 130, nothing saved). ``--num-workers`` and
``--sim-backend`` are ``train.py``'s: the envs stepped in worker processes, on another backend.

``--algo sac`` or ``--algo td3`` trains SB3's off-policy algorithms on the same env, ``--num-envs``
envs (default 32) stepped together, with settings from ManiSkill 3's SAC baseline sized for a
CPU (``simulo_envs/training/sb3_off_policy.py`` lists them with their sources: replay buffer 1M,
minibatch 512, 8 gradient steps after every step of 32 envs, updates from env step 4,000 on,
gamma the task's, tau 0.01, networks 256 x 3). ``--total-timesteps`` (default: the task's PPO
budget) is then rounded down to whole steps of the envs; ``progress.csv`` gets a row every 50
steps of the envs, the summary line also counts the gradient steps. ``--max-minutes`` and a stop
signal stop the training after the step of the envs under way (that step is not stored, nor
counted). ``--resume`` continues from ``model.zip`` (the networks, optimizers and
counts; the replay buffer is not saved, so it is refilled with 4,000 env steps of random actions
first). ``scripts/evaluate.py`` reads the algorithm from ``model.zip``.

``--algo sac --obs-mode rgb`` trains SAC from the task's camera images (``--camera-size W H``,
default 32 x 32) and the robot's proprioception: a small convolutional encoder with LayerNorm and
DrQ's random shift in gradient steps (``simulo_envs/training/sb3_pixels.py`` gives its settings and
their sources); ``--asymmetric-critic`` lets the critics read the task's full state while the actor
reads images. ``model.zip`` records it all, and ``scripts/evaluate.py`` runs the actor alone on
images. Camera options without ``--obs-mode rgb``, and ``--obs-mode rgb`` with another algorithm,
are refused before anything is built; a resumed run keeps what its policy reads.

    python scripts/train_sb3.py --algo sac --obs-mode rgb --asymmetric-critic --env-id FrankaLift-v1 --max-minutes 60
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # start_signals.py beside this file
from start_signals import after_the_work, loading  # noqa: E402

with loading(__name__):   # a stop signal while torch, SAPIEN and the tasks load: one line, no traceback
    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.training.distributed import check_device
    from simulo_envs.sim import sim_backend_arg
    from simulo_envs.output_paths import error_line
    from simulo_envs.training.interrupt import ctrl_c_while_starting, evaluation_stopped_by_ctrl_c, exit_status
    from simulo_envs.training.run_files import (OutputError, claim_log_dir, drop_stale_evaluation, unsaved_run_note,
                                                write_json)
    from simulo_envs.training.saved_runs import SetupError, take_saved_run
    from simulo_envs.workers.sharded import num_workers_arg
    from simulo_envs.training.rsl_rl_train import describe_result, import_task_modules, plan_training

ALGOS = ("ppo", "sac", "td3")
DEFAULT_ENV_ID = "FrankaLift-v1"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default=None,
                        help="a registered id, or 'module:Class' / 'module:EnvId' for a task of your own "
                             "(default FrankaLift-v1; with --resume, the run's)")
    parser.add_argument("--task-module", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers your tasks); repeatable")
    parser.add_argument("--algo", choices=ALGOS, default=None,
                        help="Stable-Baselines3's PPO (default; with --resume, the run's), SAC or TD3")
    parser.add_argument("--seed", type=int, default=None, help="default 0; with --resume, the run's")
    parser.add_argument("--num-envs", type=int, default=None,
                        help="default: the task's train config (PPO), 32 (SAC, TD3)")
    parser.add_argument("--total-timesteps", type=int, default=None,
                        help="env steps (an upper bound: whole PPO iterations, or whole steps of the envs for "
                             "SAC and TD3); default: the task's train config")
    parser.add_argument("--max-minutes", type=float, default=None, help="wall-clock cap on training")
    parser.add_argument("--terminations", action="store_true", default=None,
                        help="keep the task's terminations in training (with --resume: the run's choice)")
    parser.add_argument("--eval-episodes", type=int, default=100, help="0: no evaluation")
    parser.add_argument("--eval-seed", type=int, default=10_000)
    parser.add_argument("--log-dir", default=None,
                        help="default runs/sb3/<env-id>/seed<seed>; one run per folder; made with its parents if missing")
    parser.add_argument("--resume", action="store_true", help="continue the run in --log-dir from its model.zip")
    parser.add_argument("--overwrite", action="store_true", help="delete an earlier run in --log-dir and start again")
    parser.add_argument("--device", default="cpu", help="where SB3's networks run (cpu, cuda, cuda:N)")
    parser.add_argument("--num-workers", type=num_workers_arg, default=None, metavar="P",
                        help="worker processes stepping the envs: an int or 'auto' (default: the config's; "
                             "docs/scale_out.md)")
    parser.add_argument("--sim-backend", default=None, type=sim_backend_arg,
                        help="auto, physx_cpu, physx_cuda[:N] or physx_cuda_emulated (default: the task's config)")
    parser.add_argument("--obs-mode", choices=("state", "rgb"), default=None,
                        help="what the policy reads: the flat state (default) or, SAC only, the task's camera "
                             "images and the robot's proprioception (with --resume: the run's)")
    parser.add_argument("--camera-size", type=int, nargs=2, metavar=("W", "H"), default=None,
                        help="with --obs-mode rgb: every sensor camera's width and height [px] (default 32 32)")
    parser.add_argument("--asymmetric-critic", action="store_true",
                        help="with --obs-mode rgb: the critics read the task's full state while the actor reads "
                             "images (evaluation runs the actor alone, from images)")
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the evaluation as one JSON line")
    return parser


def main(argv=None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.max_minutes is not None and not args.max_minutes > 0:
        parser.error(f"--max-minutes must be > 0, got {args.max_minutes}")
    for name in ("torch_threads", "eval_episodes"):
        if getattr(args, name) < (0 if name == "eval_episodes" else 1):
            parser.error(f"--{name.replace('_', '-')} must be >= {0 if name == 'eval_episodes' else 1}")
    if args.resume and args.overwrite:
        parser.error("--resume continues the run in the log folder and --overwrite deletes it: give one")
    pixel_options = [name for name, given in (("--camera-size", args.camera_size is not None),
                                              ("--asymmetric-critic", args.asymmetric_critic)) if given]
    if args.resume and (args.obs_mode or pixel_options):
        parser.error(f"--resume: a resumed run keeps what its policy reads; leave out "
                     f"{' and '.join((['--obs-mode'] if args.obs_mode else []) + pixel_options)}")
    if pixel_options and args.obs_mode != "rgb":
        parser.error(f"{' and '.join(pixel_options)} need{'s' if len(pixel_options) == 1 else ''} --obs-mode rgb "
                     f"(a state policy reads no camera image)")
    if args.obs_mode == "rgb" and (args.algo or "ppo") != "sac":
        parser.error(f"--obs-mode rgb trains SAC only (add --algo sac), not {(args.algo or 'ppo').upper()}")
    torch.set_num_threads(args.torch_threads)
    log_dir = args.log_dir or os.path.join("runs", "sb3", (args.env_id or DEFAULT_ENV_ID).replace(":", "."),
                                           f"seed{args.seed or 0}")
    try:
        import_task_modules(args.task_module)
        device = check_device(args.device)
        env_kwargs = {} if args.sim_backend is None else {"sim_backend": args.sim_backend}
        if args.resume:   # what the command line leaves out comes from the run's model.zip
            given = {"--env-id": args.env_id, "--algo": args.algo, "--seed": args.seed, "--num-envs": args.num_envs,
                     "--terminations": args.terminations}
            run = take_saved_run(log_dir, given, env_kwargs, library="sb3")
            args.env_id, args.algo, args.seed, args.num_envs = run.env_id, run.algo, run.seed, run.num_envs
            args.terminations = run.terminations
            pixels = _saved_pixels(log_dir, env_kwargs)
            args.total_timesteps = run.total_timesteps if args.total_timesteps is None else args.total_timesteps
        else:
            pixels = None
        if args.obs_mode == "rgb":
            from simulo_envs.training.sb3_pixels import pixel_settings

            pixels = pixel_settings(args.camera_size, args.asymmetric_critic)
        args.env_id, args.algo, args.seed = args.env_id or DEFAULT_ENV_ID, args.algo or "ppo", args.seed or 0
        vector_kwargs = {} if args.num_workers is None else {"num_workers": args.num_workers}
        if args.algo == "ppo":
            plan = plan_training(args.env_id, args.num_envs, args.total_timesteps, 1, env_kwargs, vector_kwargs)
        else:   # Stable-Baselines3 loads here, as below: worker processes re-import this script
            from simulo_envs.training.sb3_off_policy import plan_off_policy

            plan = plan_off_policy(args.algo, args.env_id, args.num_envs, args.total_timesteps, env_kwargs,
                                   vector_kwargs, pixels)
        note = unsaved_run_note(log_dir, claim_log_dir(log_dir, resume=args.resume, overwrite=args.overwrite),
                                args.overwrite)
        if args.resume:   # a spent budget or another algorithm is refused before the plan is printed
            from simulo_envs.training.sb3_train import sb3_resume_infos

            sb3_resume_infos(log_dir, plan, args.algo)
    except (LookupError, ValueError, TypeError, ImportError) as error:
        parser.error(error_line(error))
    from simulo_envs.training.evaluation import evaluate
    from simulo_envs.training.sb3_off_policy import OFF_POLICY_ALGORITHMS, describe_off_policy_result
    from simulo_envs.training.sb3_train import PPO_ALGORITHM, train_sb3

    name = args.algo.upper()
    if note:
        print(note, flush=True)
    print(f"training {plan.describe()} with Stable-Baselines3 {name}; logs in {log_dir}"
          f"{' (resumed)' if args.resume else ''}", flush=True)
    warning = plan.warning()
    if warning:
        print(warning, flush=True)
    try:
        with ctrl_c_while_starting():
            result = train_sb3(plan, seed=args.seed, log_dir=log_dir, device=device, progress=not args.no_progress,
                               max_wall_s=None if args.max_minutes is None else args.max_minutes * 60,
                               terminations=bool(args.terminations), resume=args.resume, overwrite=args.overwrite,
                               algorithm=OFF_POLICY_ALGORITHMS.get(args.algo, PPO_ALGORITHM))
    except (SetupError, ValueError) as error:
        parser.error(str(error))
    print(describe_result(result) if args.algo == "ppo" else describe_off_policy_result(result), flush=True)
    if args.resume and result.session_steps:
        try:   # model.zip is newer than the evaluation beside it (an evaluation below writes the new one)
            if drop_stale_evaluation(log_dir) and (result.interrupted or not args.eval_episodes):
                print(f"removed {os.path.join(log_dir, 'evaluation.json')}: it evaluated the model before this "
                      f"session (--eval-episodes N evaluates the new one)", flush=True)
        except OutputError as error:
            sys.exit(f"{parser.prog}: error: {error}")
    if result.interrupted is not None:
        sys.exit(exit_status(result.interrupted))
    if not args.eval_episodes:
        return
    with evaluation_stopped_by_ctrl_c(result.checkpoint):
        summary = evaluate(result.checkpoint, args.eval_episodes, seed=args.eval_seed, device=device,
                           progress=not (args.no_progress or args.json), num_workers=args.num_workers)
    summary.update(train_env_steps=result.env_steps, train_wall_s=round(result.wall_s, 1), seed=args.seed,
                   library=f"stable-baselines3 {name}")
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        print(f"evaluation: success rate {summary['success_rate']:.1%} over {summary['episodes']} episodes "
              f"(success at end {summary['success_at_end']:.1%}; seeds from {args.eval_seed})", flush=True)
    path = os.path.join(log_dir, "evaluation.json")
    try:
        write_json(path, summary, "evaluation file")
    except OutputError as error:
        sys.exit(f"{parser.prog}: error: {error}")


def _saved_pixels(log_dir: str, env_kwargs: dict):
    """A resumed pixel run's settings (its ``model.zip``'s ``"pixels"``; None for a state run), with
    the env keywords they set taken out of ``env_kwargs`` (the plan sets them again)."""
    from simulo_envs.training.saved_runs import read_sb3_infos

    pixels = read_sb3_infos(os.path.join(log_dir, "model.zip"))["train_config"].get("pixels")
    if pixels:
        for key in ("obs_mode", "sensor_configs"):
            env_kwargs.pop(key, None)
    return pixels


if __name__ == "__main__":
    main()
    after_the_work("everything is saved")
