"""Env steps per second: FrankaLift-v1 (physx_cpu) against ManiSkill's PickCube-v1, same run.

    python scripts/benchmark.py             # table + ratios, median of 3 rounds
    python scripts/benchmark.py --json      # last line: the results as JSON
    python scripts/benchmark.py --render    # camera throughput instead (images/s; lavapipe on CPU)

Sections measured instead of the ManiSkill table when asked for (any combination):

{sections}

Each measurement runs in its own subprocess (fresh PhysX globals, no cross-talk); rounds are
interleaved so machine noise hits every configuration alike. Both envs get uniform random
actions in ``pd_joint_delta_pos`` (and, for one env, ``pd_ee_delta_pos``) with state
observations and no resets (a pure step rate).
Env steps/s counts every env: ``num_envs * steps / seconds``.

Each section is a module of ``scripts/benchmark_sections/`` (the ManiSkill table:
``maniskill.py``); this file only reads the command line and runs what it asks for.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmark_sections/ beside this file

from benchmark_sections import DEFAULT, SECTIONS, measurements  # noqa: E402

__doc__ = __doc__.format(sections="\n".join(section.USAGE for section in SECTIONS))


def sim_backend_type(value: str) -> str:
    """``--sim-backend``: checked in one line by simulo_envs (imported here only, so that the
    ManiSkill workers import nothing of ours)."""
    from simulo_envs.sim import sim_backend_arg

    return sim_backend_arg(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per configuration; the median is reported (default 3)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=None,
                        help="FrankaLift-v1 batch sizes to measure (default 1 4 16 64; with --raw: 1 16)")
    parser.add_argument("--json", action="store_true")
    DEFAULT.add_arguments(parser)
    parser.add_argument("--sim-backend", default="physx_cpu", type=sim_backend_type,
                        help="FrankaLift-v1's backend in the ManiSkill table: physx_cpu (default) or physx_cuda_emulated "
                             "(the GPU code path on the CPU); on a GPU machine use scripts/gpu_check.py, which runs "
                             "ManiSkill on its GPU too")
    for section in SECTIONS:
        section.add_arguments(parser)
    kinds = measurements()
    parser.add_argument("--worker", choices=list(kinds), help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--control-mode", default="pd_joint_delta_pos", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.num_envs_given = args.num_envs
    args.num_envs = args.num_envs or [1, 4, 16, 64]
    if args.rounds < 1 or min(args.num_envs) < 1 or (getattr(args, "workers", None) and min(args.workers) < 1):
        parser.error("--rounds, every --num-envs and every --workers must be >= 1")
    if args.worker:  # one measurement in this process (a subprocess of a section), printed as JSON
        print(json.dumps(kinds[args.worker](args)))
        return
    report = {section.NAME: section.run(args) for section in SECTIONS if section.requested(args)}
    if not report:
        report = DEFAULT.run(args)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
