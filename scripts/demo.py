"""Run FrankaLift-v1 (or another registered task) batched, and summarise each episode.

    python scripts/demo.py                      # 4 envs, one episode each, the scripted expert
    python scripts/demo.py --policy random      # uniform random actions
    python scripts/demo.py --policy expert --num-envs 16 --episodes 64 --seed 0 --json

``--video PATH.mp4`` records the rollout (``make demo`` writes ``videos/FrankaLift-v1.mp4``); its
folder is checked writable before anything runs, and made if missing when the folder above it
exists (a path whose first folders do not exist, a typo, is refused).
``--policy expert`` is the task's scripted expert (``simulo_envs.policies.EXPERTS``, one per task
but FrankaReach-v1; a task of your own that subclasses one of them gets its expert) and runs the
env in ``pd_ee_delta_pos``; ``--policy random`` uses the env's default control mode.

Your own task: ``--task-module my_tasks`` imports ``my_tasks`` (from the current directory or the
Python path) so the ids it registers can be run, or name it ``--env-id my_tasks:MyTask-v1`` /
``my_tasks:MyTaskClass`` (no ``PYTHONPATH`` needed).

``--variant NAME`` makes a task of the SO table-top suite in that variant (``train``, ``heldout``,
``heldout_<axis>``; ``docs/writing_a_task.md``); without it the task's default. A variant the task
does not have, or any variant for a task without variants, is refused before anything runs.

``--num-workers P`` (or ``auto``: the usable cores) steps the envs in P worker processes
(``docs/scale_out.md``); the expert then reads the state it needs from ``info``.

Finished envs are reset on their own (a partial reset) until ``--episodes`` episodes are done.
Ctrl-C (SIGINT) or SIGTERM stops the run at once: one line says how many episodes finished and
their success so far, no video is written (nor the folder it would have made left behind), and
the exit status is 130 (SIGINT) or 143 (SIGTERM); while the libraries load (the first seconds) the
line says nothing was run (``scripts/start_signals.py``).
With ``--json`` the last line is one JSON object: success_rate, episodes, steps_per_second
(env steps per second of the stepping loop, all envs together).
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
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.envs.registration import REGISTERED
    from simulo_envs.policies import EXPERTS
    from simulo_envs.sim import sim_backend_arg
    from simulo_envs.progress import ProgressBar
    from simulo_envs.wrappers.record import RecordEpisode
    from simulo_envs.output_paths import check_output_file, error_line, missing_folders, remove_empty_folders
    from simulo_envs.training.interrupt import episodes_interrupted, exit_status, note_finished, stop_at_once
    from simulo_envs.workers.sharded import ShardedEnv, num_workers_arg, resolve_num_workers
    from simulo_envs.training.task_lookup import (check_variant, expert_for, import_task_modules, registered_kwargs,
                                                 resolve_task)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="FrankaLift-v1",
                        help="a registered id, or 'module:EnvId' / 'module:Class' for a task of your own")
    parser.add_argument("--task-module", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers your tasks); repeatable")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=None, help="episodes to run (default: one per env)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", choices=["expert", "random"], default="expert")
    parser.add_argument("--video", default=None, metavar="PATH.mp4",
                        help="record the rollout (all envs tiled, 256x256 each) to this mp4 (its folder is made if "
                             "missing, in an existing folder)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.add_argument("--variant", default=None, metavar="NAME",
                        help="the task's variant (SO table-top suite: train, heldout, heldout_<axis>); default: the task's")
    parser.add_argument("--sim-backend", default="auto", type=sim_backend_arg,
                        help="auto, physx_cpu, physx_cuda[:N] or physx_cuda_emulated (default auto)")
    parser.add_argument("--num-workers", type=num_workers_arg, default=1, metavar="P",
                        help="worker processes stepping the envs: an int (default 1: this process) or 'auto'")
    args = parser.parse_args(argv)
    try:
        args.num_workers = resolve_num_workers(args.num_workers, max(args.num_envs, 1))
    except ValueError as exc:
        parser.error(f"--num-workers: {exc}")
    if args.num_envs < 1:
        parser.error("--num-envs must be >= 1")
    if args.episodes is not None and args.episodes < 1:
        parser.error("--episodes must be >= 1")
    if args.seed < 0:
        parser.error("--seed must be >= 0")
    if args.video is not None and not args.video.endswith(".mp4"):
        parser.error("--video must name an .mp4 file")
    try:
        import_task_modules(args.task_module)
        args.env_id, args.env_cls = resolve_task(args.env_id)
        check_variant(args.env_id, args.env_cls, args.variant)
        if args.video is not None:
            check_output_file(args.video, "video file")
    except (LookupError, ValueError, TypeError, ImportError) as error:
        parser.error(error_line(error))
    if args.policy == "expert" and expert_for(args.env_cls) is None:
        parser.error(f"{args.env_id} has no scripted expert (experts: {', '.join(EXPERTS)}, and tasks that subclass "
                     f"theirs); use --policy random")
    return args


def run(env_id: str, num_envs: int, episodes: int, seed: int, policy: str = "expert", progress: bool = True,
        video: str | None = None, sim_backend: str = "auto", num_workers: int = 1, report=None,
        variant: str | None = None) -> dict:
    """Roll out ``policy`` until ``episodes`` episodes end; return the summary. ``env_id``: as
    ``--env-id`` (a registered id, ``module:EnvId``, ``module:Class``). ``report(summary)``, if
    given, is called with the summary before the video is written. ``variant``: passed to the
    env as ``variant=`` when given (the SO table-top suite's tasks)."""
    env_id, cls = resolve_task(env_id)
    kwargs = {"control_mode": "pd_ee_delta_pos"} if policy == "expert" else {}
    if variant is not None:
        kwargs["variant"] = variant
    if video:
        kwargs.update(render_mode="rgb_array", human_render_camera_configs=dict(width=256, height=256))
    if num_workers == 1 and env_id in REGISTERED:
        env = gym.make(env_id, num_envs=num_envs, sim_backend=sim_backend, **kwargs)
    elif num_workers == 1:   # a class of the user's that is not registered
        env = cls(num_envs=num_envs, sim_backend=sim_backend, **kwargs)
    else:
        env = ShardedEnv(cls, num_envs, num_workers, {"sim_backend": sim_backend, **registered_kwargs(env_id), **kwargs})
    if video:
        env = RecordEpisode(env, os.path.dirname(os.path.abspath(video)), save_on_reset=False)
    expert = expert_for(cls)(env) if policy == "expert" else None
    base = env.unwrapped
    generator = torch.Generator().manual_seed(seed)
    low = torch.from_numpy(base.single_action_space.low).to(base.device)
    high = torch.from_numpy(base.single_action_space.high).to(base.device)
    info = env.reset(seed=seed)[1]
    returns = torch.zeros(num_envs, device=base.device)
    finished: list[dict] = []
    steps = 0
    bar = None
    try:
        bar = ProgressBar(total=episodes, desc=f"{env_id} x{num_envs}", unit="episode", disable=not progress)
        start = time.perf_counter()
        while len(finished) < episodes:
            if expert is not None:
                action = expert.act(info)
            else:
                draw = torch.rand(num_envs, low.shape[0], generator=generator).to(base.device)
                action = low + (high - low) * draw
            _, reward, terminated, truncated, info = env.step(action)
            steps += num_envs
            returns += reward
            done = (terminated | truncated).nonzero().flatten().tolist()
            for i in done:
                if len(finished) < episodes:
                    finished.append({"env": i, "return": float(returns[i]), "success": bool(info["success"][i]),
                                     "length": int(info["elapsed_steps"][i])})
                    bar.update(1)
            if done:
                returns[done] = 0
                info = env.reset(options={"env_idx": done})[1]  # every env's info: the expert's next input
        elapsed = time.perf_counter() - start
        bar.close()
        successes = sum(e["success"] for e in finished)
        summary = {"env_id": env_id, "policy": policy, "num_envs": num_envs, "episodes": len(finished),
                   "success_rate": successes / len(finished), "steps_per_second": steps / elapsed,
                   "wall_time_s": elapsed, "per_episode": finished}
        if report is not None:
            report(summary)
        if video:
            env.flush_video(name=os.path.splitext(os.path.basename(video))[0])
    except BaseException as stop:   # an error or a stop signal: no partial video, the finished episodes noted
        if isinstance(stop, KeyboardInterrupt):
            note_finished(stop, [e["success"] for e in finished])
        if video:
            env.discard()
        raise
    finally:
        if bar is not None:
            bar.close()
        env.close()
    return summary


def main(argv=None) -> None:
    args = parse_args(argv)
    episodes = args.episodes or args.num_envs

    def report(summary: dict) -> None:
        print(f"\n{'episode':>7} {'env':>4} {'return':>9} {'length':>6} {'success':>8}")
        for k, ep in enumerate(summary["per_episode"]):
            print(f"{k:>7} {ep['env']:>4} {ep['return']:>9.3f} {ep['length']:>6} {str(ep['success']):>8}")
        print(f"\nsuccess rate {summary['success_rate']:.2f} over {summary['episodes']} episodes; "
              f"{summary['steps_per_second']:.0f} env steps/s; {summary['wall_time_s']:.1f} s")
        sys.stdout.flush()

    made = missing_folders(os.path.dirname(os.path.abspath(args.video))) if args.video else []
    try:
        with stop_at_once():
            summary = run(args.env_id, args.num_envs, episodes, args.seed, args.policy, video=args.video,
                          sim_backend=args.sim_backend, num_workers=args.num_workers, report=report,
                          variant=args.variant)
    except KeyboardInterrupt as stop:   # Ctrl-C or SIGTERM: one line, the folder it made taken back
        remove_empty_folders(made)
        print(episodes_interrupted(stop, episodes) + (f"; no video written ({args.video})" if args.video else ""),
              file=sys.stderr, flush=True)
        sys.exit(exit_status(getattr(stop, "signal_name", "SIGINT")))
    except (OSError, RuntimeError) as error:
        if not args.video:
            raise
        remove_empty_folders(made)
        sys.exit(f"demo.py: error: the video could not be written to {args.video}: {error}")
    if args.video:
        print(f"video: {os.path.abspath(args.video)}")
    if args.json:   # the last line
        print(json.dumps({k: summary[k] for k in ("success_rate", "episodes", "steps_per_second", "wall_time_s")}))


if __name__ == "__main__":
    main()
    after_the_work("every episode is done and every file written")
