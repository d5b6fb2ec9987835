"""``--isolation``: one PhysX system shared by every env against one system per env
(``sim_config={"isolate_envs": True}``), the vector env with random actions (pd_ee_delta_pos,
autoreset), at 16 and 64 envs (or ``--num-envs``).

Three configurations, rounds interleaved: the shared system; the isolated mode as it runs by
default (its systems stepped on one thread per usable CPU core, ``SimConfig.step_threads``);
the isolated mode on one thread (``step_threads=1``: what it costs in CPU). Each measurement
reports env steps/s (wall clock) and CPU milliseconds per env step (every thread of the process,
``time.process_time``): on a machine busy with other work the wall clock of a multi-threaded
run depends on the other work, the CPU time much less. The load average at each measurement is
printed with it; the table gives medians and the ratios to the shared system.
"""

from __future__ import annotations

import os
import time

from benchmark_sections.common import median, rounds

NAME = "isolation"
USAGE = """\
    --isolation       shared PhysX system against one system per env (``isolate_envs``), threaded and on one thread"""

KINDS = {"shared": {}, "isolated": {"isolate_envs": True}, "isolated_1_thread": {"isolate_envs": True, "step_threads": 1}}


def add_arguments(parser) -> None:
    parser.add_argument("--isolation", action="store_true", help="measure isolate_envs against the shared system")


def requested(args) -> bool:
    return args.isolation


def measure(num_envs: int, steps: int, kind: str, warmup: int = 10) -> dict:
    """``{"steps_per_second", "cpu_ms_per_env_step", "load"}`` of the vector env (autoreset) in
    pd_ee_delta_pos under uniform random actions, sim_config of ``KINDS[kind]``."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    venv = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        control_mode="pd_ee_delta_pos", sim_config=KINDS[kind])
    venv.reset(seed=0)
    generator = torch.Generator().manual_seed(0)
    actions = [torch.rand(num_envs, 4, generator=generator) * 2 - 1 for _ in range(steps + warmup)]
    for action in actions[:warmup]:
        venv.step(action)
    wall, cpu = time.perf_counter(), time.process_time()
    for action in actions[warmup:]:
        venv.step(action)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    venv.close()
    return {"steps_per_second": num_envs * steps / wall, "cpu_ms_per_env_step": 1e3 * cpu / (num_envs * steps),
            "load": os.getloadavg()[0]}


MEASUREMENTS = {kind: (lambda args, kind=kind: measure(args.num_envs[0], args.steps, kind)) for kind in KINDS}


def run(args) -> list[dict]:
    return section(args.rounds, args.num_envs_given or [16, 64])


def section(count: int, sizes=(16, 64)) -> list[dict]:
    """The three configurations of the module docstring at each size, ``count`` rounds."""
    configs = [(kind, n, max(20, 2000 // n)) for n in sizes for kind in KINDS]
    results = rounds(configs, count, lambda c: f"{c[0]} N={c[1]}")
    loads = [r["load"] for values in results.values() for r in values]
    print(f"\nFrankaLift-v1, pd_ee_delta_pos, random actions; median of {count} rounds; "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"{'N':>4s} {'shared':>8s} {'isolated':>9s} {'x shared':>9s} {'1 thread':>9s} {'x shared':>9s}   "
          f"CPU ms/env step: {'shared':>7s} {'isolated':>9s} {'x shared':>9s}")
    rows = []
    for n in sizes:
        steps = max(20, 2000 // n)
        rate = {kind: median(results[(kind, n, steps)], "steps_per_second") for kind in KINDS}
        cpu = {kind: median(results[(kind, n, steps)], "cpu_ms_per_env_step") for kind in KINDS}
        row = {"num_envs": n, "shared_steps_per_second": rate["shared"],
               "isolated_steps_per_second": rate["isolated"], "ratio": rate["isolated"] / rate["shared"],
               "isolated_1_thread_steps_per_second": rate["isolated_1_thread"],
               "ratio_1_thread": rate["isolated_1_thread"] / rate["shared"],
               "shared_cpu_ms_per_env_step": cpu["shared"], "isolated_cpu_ms_per_env_step": cpu["isolated"],
               "cpu_ratio": cpu["shared"] / cpu["isolated"], "load": [min(loads), max(loads)]}
        rows.append(row)
        print(f"{n:>4d} {rate['shared']:>8.0f} {rate['isolated']:>9.0f} {row['ratio']:>9.2f} "
              f"{rate['isolated_1_thread']:>9.0f} {row['ratio_1_thread']:>9.2f}   "
              f"{'':16s} {cpu['shared']:>7.3f} {cpu['isolated']:>9.3f} {row['cpu_ratio']:>9.2f}")
    return rows
