"""Collect demonstrations of a task's scripted expert into a LeRobot v3.0 or HDF5 dataset.

    python scripts/collect_demos.py --env-id FrankaLift-v1 --num-episodes 100 --out demos/lift
    python scripts/collect_demos.py --env-id FrankaLift-v1 --num-episodes 100 --obs-mode rgb \\
        --num-envs 8 --num-workers 2 --format lerobot --out demos/lift_rgb --json

The expert (``simulo_envs.policies``) drives ``--num-envs`` envs together, in this process or
split over ``--num-workers`` worker processes; a progress bar counts the episodes kept and tried
and the frames written per second. Every finished episode is written the moment it ends (one
atomic commit; a writer thread takes every episode waiting), so Ctrl-C, a crash or a full disk
leaves a valid dataset of the episodes finished so far. Episode attempt ``k`` is reset with seed
``--seed + k``; each episode records its seed. Only successful episodes are kept unless
``--keep-failures``; the success rate is printed either way.

``--control-mode`` records in another mode than the experts' ``pd_ee_delta_pos`` (a joint-position
mode: ``pd_joint_pos``, ``pd_joint_delta_pos``): each expert episode is converted as it finishes,
as ``scripts/replay.py --target-control-mode`` converts a dataset, and the summary says how many of
the expert's successes still succeed after the conversion.

``--full-episodes`` ignores the task's terminations: every episode runs to its time limit and is
kept when the task is solved at its last step, so a policy trained on it also sees what the
expert does once the task is done (holds the cube, lets go, stays clear). The dataset records it
(``DatasetSchema.full_episodes``), and ``--append`` refuses to mix the two kinds of episodes.

``--action-noise STD`` records as DART does (Laskey et al., CoRL 2017): the envs execute the
expert's actions plus Gaussian noise of standard deviation STD (in the recorded actions' units:
the experts' own actions lie in [-1, 1], an SO arm's LeRobot schema takes degrees; every column
but the gripper's; clipped to the action space; drawn per episode from its seed), the dataset
records the expert's clean actions and the noise's STD. Such a dataset replays by its env states
only (``scripts/replay.py --use-env-states``, HDF5); an SO arm's LeRobot dataset so recorded does
not replay (it holds no env states), it trains.

An SO task in the LeRobot format writes the real arm's schema (robot_type ``so_follower``,
``shoulder_pan.pos`` ... ``gripper.pos`` in degrees and 0..100, joint-target actions of
``pd_joint_pos_lerobot``: ``simulo_envs/datasets/robot_units.py``): the env runs in that mode and
the expert drives it through its own IK (``joint_drive.py``), so the recorded actions are the
executed ones (without ``--action-noise``) and ``replay.py --verify`` reproduces them bit for bit. With the recording options
(``--fps 30 --camera front=base_camera:640x480 --no-next``: ``simulo_envs/datasets/recording.py``)
the dataset merges with a real SO arm's ``lerobot-record`` dataset.

The output folder must be new or empty; a dataset there is refused unless ``--append`` (same
env, modes and layout). Formats and layouts: ``docs/datasets.md``. The last line is a one-line
summary, or with ``--json`` one JSON object (episodes, success_rate, frames, seconds, out, ...).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # start_signals.py beside this file
from start_signals import after_the_work, loading  # noqa: E402

with loading(__name__):   # a stop signal while torch, SAPIEN and the tasks load: one line, no traceback
    from simulo_envs.datasets.scene_cli import add_randomization_option, scene_kwargs

    import torch

    import simulo_envs  # noqa: F401  (registers the tasks)
    from simulo_envs.datasets import cli
    from simulo_envs.datasets.collect import EXPERT_CONTROL_MODE, CollectSettings, collect


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", required=True, help="a task with a scripted expert, e.g. FrankaLift-v1")
    parser.add_argument("--num-episodes", type=int, default=100, help="episodes to write (default 100)")
    cli.add_batch_options(parser)
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the first episode attempt (default 0; with --append, after the dataset's seeds)")
    parser.add_argument("--obs-mode", default="state", help="state, state_dict, rgb, rgbd, ... (as the env takes)")
    parser.add_argument("--control-mode", default=EXPERT_CONTROL_MODE,
                        help=f"the recorded control mode (default {EXPERT_CONTROL_MODE}, the experts' own; a joint mode "
                             "such as pd_joint_pos converts each episode as it finishes)")
    parser.add_argument("--reward-mode", default=None, help="the env's reward mode (default: the task's)")
    cli.add_camera_size_option(parser)
    add_randomization_option(parser)
    parser.add_argument("--format", choices=("lerobot", "hdf5"), default="lerobot")
    parser.add_argument("--out", required=True,
                        help="dataset folder (new or empty; with --append, a dataset; made with its parents if missing)")
    parser.add_argument("--append", action="store_true", help="add episodes to the dataset in --out")
    parser.add_argument("--keep-failures", action="store_true", help="also write episodes that fail")
    parser.add_argument("--max-tries", type=int, default=None,
                        help="give up after this many finished episodes (default 10 x --num-episodes + 100)")
    parser.add_argument("--shared-physics", action="store_true",
                        help="all envs in one PhysX system, restarted one by one: faster, but replays match to float "
                             "noise only (default: fresh physics per episode, replays exact)")
    parser.add_argument("--action-noise", type=float, default=0.0, metavar="STD",
                        help="execute the expert's actions plus Gaussian noise of this std (the recorded actions' "
                             "units: [-1, 1] for the experts' mode, degrees for an SO arm's LeRobot schema; not the "
                             "gripper), record its clean actions (DART; default 0: no noise)")
    parser.add_argument("--full-episodes", action="store_true",
                        help="ignore the task's terminations: record every episode to its time limit and count it "
                             "a success when the task is solved at its last step (what to do after the task is done)")
    parser.add_argument("--no-states", action="store_true",
                        help="do not record env states (smaller; replay then follows the actions only)")
    cli.add_recording_options(parser)
    cli.add_report_options(parser)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    env_kwargs = {}
    if args.reward_mode is not None:
        env_kwargs["reward_mode"] = args.reward_mode
    env_kwargs.update(scene_kwargs(args))
    settings = CollectSettings(
        env_id=args.env_id, num_episodes=args.num_episodes, out=args.out, fmt=args.format, num_envs=args.num_envs,
        num_workers=args.num_workers, seed=args.seed, obs_mode=args.obs_mode, control_mode=args.control_mode,
        append=args.append, keep_failures=args.keep_failures, max_tries=args.max_tries, env_kwargs=env_kwargs,
        record_states=not args.no_states, exact=not args.shared_physics, action_noise=args.action_noise,
        full_episodes=args.full_episodes, recording=cli.recording_options(args, parser))
    return cli.run_job(parser, args, collect, settings, describe)


def describe(s: dict) -> str:
    """The one-line summary."""
    state = " (interrupted)" if s["interrupted"] else (" (gave up: --max-tries reached)" if s["gave_up"] else "")
    noise = f" with action noise std {s['action_noise']:g} {s['action_noise_units']}" if s["action_noise"] else ""
    noise += " (full episodes: success at the last step)" if s["full_episodes"] else ""
    line = (f"{s['env_id']}: wrote {s['episodes']} episodes ({s['frames']} frames) to {s['out']} [{s['format']}]"
            f"{noise}{state}; success rate {s['success_rate']:.1%} over {s['tries']} tries; {s['seconds']:.1f} s, "
            f"{s['episodes_per_s']:.2f} episodes/s, {s['frames_per_s']:.0f} frames/s")
    if s["conversion"]:
        c = s["conversion"]
        line += (f"; converted {c['from']} -> {c['to']}: {c['still_succeed']}/{c['converted']} expert successes still "
                 f"succeed ({c['success_rate']:.1%})")
    if s["error"]:
        line += f"; stopped by {s['error']} (the dataset holds {s['dataset_episodes']} complete episodes)"
    return line


if __name__ == "__main__":
    status = main()
    after_the_work("the demonstrations are written")
    sys.exit(status)
