"""``--isolation``: one PhysX system shared by every env against one system per env
(``sim_config={"isolate_envs": True}``), random actions, at 16 and 64 envs.
"""

from __future__ import annotations

from benchmark_sections.common import median, rounds
from benchmark_sections.contacts import measure_policy

NAME = "isolation"
USAGE = """\
    --isolation       shared PhysX system against one system per env (``isolate_envs``)"""


def add_arguments(parser) -> None:
    parser.add_argument("--isolation", action="store_true", help="measure isolate_envs against the shared system")


def requested(args) -> bool:
    return args.isolation


MEASUREMENTS = {
    "isolated": lambda args: measure_policy(args.num_envs[0], args.steps, "random", isolate=True),
}


def run(args) -> list[dict]:
    return section(args.rounds)


def section(count: int) -> list[dict]:
    """One shared PhysX system against one per env (``isolate_envs``), random actions."""
    configs = [(kind, n, 2000 // n) for n in (16, 64) for kind in ("random", "isolated")]
    results = rounds(configs, count, lambda c: f"{c[0]} N={c[1]}")
    print(f"\n{'pd_ee_delta_pos, random':28s} {'N':>4s} {'shared':>8s} {'isolated':>9s} {'x shared':>9s}")
    rows = []
    for n in (16, 64):
        shared, isolated = median(results[("random", n, 2000 // n)]), median(results[("isolated", n, 2000 // n)])
        rows.append({"num_envs": n, "shared_steps_per_second": shared, "isolated_steps_per_second": isolated,
                     "ratio": isolated / shared})
        print(f"{'':28s} {n:>4d} {shared:>8.0f} {isolated:>9.0f} {isolated / shared:>9.2f}")
    return rows
