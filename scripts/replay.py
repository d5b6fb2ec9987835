"""Replay a recorded dataset into another observation mode and/or control mode.

    python scripts/replay.py --source demos/lift --obs-mode rgb --out demos/lift_rgb
    python scripts/replay.py --source demos/lift --target-control-mode pd_joint_pos --format hdf5 --out demos/lift_joint
    python scripts/replay.py --source demos/lift --obs-mode rgb --use-env-states --out demos/lift_rgb_exact --json

Each episode is re-simulated from its initial state (its env slot reset with the recorded seed,
the recorded initial state checked) in batched envs of the target modes, in this process or in
``--num-workers`` worker processes:

- another observation mode: the recorded actions are applied again (``--use-env-states``
  instead sets each recorded state and observes it: exact, no physics; HDF5 sources);
- another control mode (``--target-control-mode``, e.g. ``pd_joint_pos`` or
  ``pd_joint_delta_pos`` from ``pd_ee_delta_pos``): an env in the recorded mode replays the
  recorded actions; the target env sets the joint drive targets its controller set, step for
  step, and where the target mode cannot move that fast (a delta mode's per-step bound) it
  follows the recorded states over extra steps, so converted episodes can be longer.

The written dataset keeps the source's schema (``--schema source``): an SO arm's dataset in the
real arm's schema (degrees, 0..100, its robot type and camera names) is written in it again;
``--schema env`` writes the env's own state instead. ``--robot-type``, ``--camera`` and
``--no-next`` change what they name on top; the recording frequency stays the source's.

The report says how many episodes that succeeded when recorded still succeed; only those are
written unless ``--keep-failures``. Contact-rich episodes replayed open loop can end otherwise
from float-level differences (PhysX carries state over from an env slot's earlier episodes); a
failing episode is replayed again, later and elsewhere, up to ``--max-retries`` times, and the
report gives the first-try rate beside the final one. A dataset recorded with action noise
(``collect_demos.py --action-noise``) holds the expert's clean actions, not the executed ones:
it replays with ``--use-env-states`` only, and any other replay of it is refused. Sources: a LeRobot v3.0 or HDF5 dataset of these tools (or a
ManiSkill HDF5 recording of our envs). The last line is a one-line summary, or with ``--json``
one JSON object (episodes, success_rate, frames, seconds, out, ...). ``docs/datasets.md`` has
the conversion success per task and target mode.

``--verify`` writes nothing: it re-simulates each episode from its seed and recorded actions in
the recorded settings and compares every step with the recording
(``simulo_envs/datasets/verify.py``). A dataset recorded with one PhysX system per env (what
``collect_demos.py`` does by default) must match bit for bit; one recorded in a shared system
must stay within ``--tolerance`` (largest deviation; default 1e-3). One line per episode, then
a summary (or ``--json``); the exit status is 1 when an episode does not match.

    python scripts/replay.py --source demos/lift --verify
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.datasets import cli
from simulo_envs.output_paths import error_line
from simulo_envs.datasets.replay_job import ReplaySettings, replay


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", required=True, help="recorded dataset: a LeRobot or HDF5 folder, or a .h5 file")
    parser.add_argument("--out", default=None, help="dataset folder to write (new or empty; with --append, a dataset)")
    parser.add_argument("--format", choices=("lerobot", "hdf5"), default="lerobot")
    parser.add_argument("--obs-mode", default=None, help="target observation mode (default: the recorded one)")
    parser.add_argument("--target-control-mode", default=None, help="target control mode (default: the recorded one)")
    parser.add_argument("--env-id", default=None, help="refuse episodes of any other env")
    cli.add_camera_size_option(parser)
    cli.add_batch_options(parser)
    parser.add_argument("--use-env-states", action="store_true",
                        help="observe the recorded env states instead of re-simulating (HDF5 sources, same control mode)")
    parser.add_argument("--count", type=int, default=None, help="replay only the first COUNT episodes")
    parser.add_argument("--max-retries", type=int, default=2,
                        help="tries more for an episode that succeeded when recorded and fails here (default 2)")
    parser.add_argument("--keep-failures", action="store_true", help="also write episodes that no longer succeed")
    parser.add_argument("--append", action="store_true", help="add the episodes to the dataset in --out")
    parser.add_argument("--schema", choices=("source", "env", "robot"), default="source",
                        help="the written state and actions: the source's (default), the env's own (radians, object "
                             "poses), or the real robot's (LeRobot's units; SO arms)")
    cli.add_recording_options(parser)
    parser.add_argument("--verify", action="store_true",
                        help="write nothing: re-simulate every episode and check it against the recording (bit for "
                             "bit for a recording with one PhysX system per env); exit status 1 on a mismatch")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="--verify of a shared-system recording: largest deviation accepted (default 1e-3)")
    cli.add_report_options(parser)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.verify:
        return _verify(parser, args)
    if args.out is None:
        parser.error("--out is required (or --verify)")
    settings = ReplaySettings(
        source=args.source, out=args.out, fmt=args.format, obs_mode=args.obs_mode,
        control_mode=args.target_control_mode, env_id=args.env_id, num_envs=args.num_envs,
        num_workers=args.num_workers, use_env_states=args.use_env_states, keep_failures=args.keep_failures,
        append=args.append, count=args.count, max_retries=args.max_retries, env_kwargs=cli.camera_kwargs(args),
        schema=args.schema, recording=cli.recording_options(args, parser))
    return cli.run_job(parser, args, replay, settings, describe, cli.ERRORS + (NotImplementedError,))


def _verify(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from simulo_envs.datasets.verify import verify

    try:
        report = verify(args.source, num_envs=args.num_envs, count=args.count, tolerance=args.tolerance,
                        progress=not (args.no_progress or args.json))
    except cli.ERRORS as error:
        parser.error(error_line(error))
    if not args.json:
        for row in report["per_episode"]:
            verdict = "bitwise equal" if row["bitwise"] else f"largest deviation {row['max_deviation']:.3g}"
            print(f"episode {row['index']} (seed {row['seed']}, {row['steps']} steps): {verdict}"
                  f"{'' if row['match'] else ' -- MISMATCH'}")
    how = "bit for bit (one PhysX system per env)" if report["isolate_envs"] else \
        f"within {report['tolerance']:g} (shared PhysX system)"
    line = (f"{report['env_id']}: {report['matched']}/{report['episodes']} episodes reproduce {how}; largest "
            f"deviation {report['max_deviation']:.3g}")
    if report["software_differences"]:
        line += f"; recorded with other software: {', '.join(report['software_differences'])}"
    print(line, flush=True)
    if args.json:
        print(json.dumps(report), flush=True)
    return 1 if report["mismatched"] else 0


def describe(s: dict) -> str:
    """The one-line summary."""
    if s["use_env_states"]:
        how = "by env states"
    elif s["control_mode"] != s["source_control_mode"]:
        how = (f"following the recorded drive targets and states (length x{s['length_ratio']['median']:.2f} median, "
               f"object drift {s['object_drift_m']['max'] * 1000:.0f} mm max)" if s["length_ratio"] and s["object_drift_m"]
               else "following the recorded drive targets and states")
    else:
        how = "by actions"
    line = (f"{s['env_id']}: replayed {s['replayed']} episodes ({s['source_control_mode']}, {s['source_obs_mode']}) -> "
            f"({s['control_mode']}, {s['obs_mode']}) {how}: {s['still_succeed']}/{s['recorded_successes']} recorded "
            f"successes still succeed ({s['success_rate']:.1%}; first try {s['first_try_success_rate']:.1%}); wrote {s['episodes']} episodes ({s['frames']} frames) "
            f"to {s['out']} [{s['format']}] in {s['seconds']:.1f} s")
    if s["interrupted"]:
        line += " (interrupted)"
    if s["error"]:
        line += f"; stopped by {s['error']}"
    return line


if __name__ == "__main__":
    sys.exit(main())
