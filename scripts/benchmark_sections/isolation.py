"""``--isolation``: one PhysX system shared by every env against one system per env
(``sim_config={"isolate_envs": True}``), the vector env with random actions (pd_ee_delta_pos,
autoreset), at 16 and 64 envs (or ``--num-envs``).

Four configurations, rounds interleaved: the shared system; the isolated mode as it runs by
default (``SimConfig.step_threads = 0``: the systems stepper times one thread against one per
usable CPU core and keeps the faster, ``simulo_envs/sim/system_stepper.py``); the isolated mode
with its thread count fixed at one per usable core; and on one thread (``step_threads=1``: what it
costs in CPU). Each measurement reports env steps/s (wall clock), CPU milliseconds per env step
(every thread of the process, ``time.process_time``) and, for the default, the share of steps
the stepper took on more than one thread: on a machine busy with other work the wall clock of a
multi-threaded run depends on the other work, the CPU time much less. The load average at each
measurement is printed with it; the table gives medians and, per configuration, the median over
rounds of its env steps/s divided by the shared system's in the same round.

With ``--paired`` every configuration is built in one process instead and stepped in turn, in
blocks of 10 steps with the order rotated every block (``measure_paired``), so that slow changes
of the machine's load hit each alike; the ratios are then medians over blocks.
"""

from __future__ import annotations

import os
import time

from benchmark_sections.common import median, rounds

NAME = "isolation"
USAGE = """\
    --isolation       shared PhysX system against one system per env (``isolate_envs``): threads chosen by timing, fixed, one;
                      --paired: all in one process, blocks of steps alternated"""

try:
    _CORES = max(1, len(os.sched_getaffinity(0)))
except AttributeError:  # not on Linux
    _CORES = max(1, os.cpu_count() or 1)
KINDS = {"shared": {}, "isolated": {"isolate_envs": True},
         "isolated_threads": {"isolate_envs": True, "step_threads": _CORES},
         "isolated_1_thread": {"isolate_envs": True, "step_threads": 1}}
LABELS = {"shared": "shared", "isolated": "isolated", "isolated_threads": f"{_CORES} threads",
          "isolated_1_thread": "1 thread"}


def add_arguments(parser) -> None:
    parser.add_argument("--isolation", action="store_true", help="measure isolate_envs against the shared system")
    parser.add_argument("--paired", action="store_true",
                        help="with --isolation: every configuration in one process, alternating blocks of 10 steps "
                             "(the same machine load for each; --rounds x 8 blocks each)")


def requested(args) -> bool:
    return args.isolation


def measure(num_envs: int, steps: int, kind: str, warmup: int = 10) -> dict:
    """``{"steps_per_second", "cpu_ms_per_env_step", "threaded_share", "load"}`` of the vector env
    (autoreset) in pd_ee_delta_pos under uniform random actions, sim_config of ``KINDS[kind]``;
    ``threaded_share``: the fraction of timed steps the systems stepper ran on several threads."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    venv = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        control_mode="pd_ee_delta_pos", sim_config=KINDS[kind])
    venv.reset(seed=0)
    stepper = venv.unwrapped.backend._stepper
    generator = torch.Generator().manual_seed(0)
    actions = [torch.rand(num_envs, 4, generator=generator) * 2 - 1 for _ in range(steps + warmup)]
    for action in actions[:warmup]:
        venv.step(action)
    threaded = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for action in actions[warmup:]:
        venv.step(action)
        threaded += stepper.threads > 1
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    venv.close()
    return {"steps_per_second": num_envs * steps / wall, "cpu_ms_per_env_step": 1e3 * cpu / (num_envs * steps),
            "threaded_share": threaded / steps, "load": os.getloadavg()[0]}


MEASUREMENTS = {kind: (lambda args, kind=kind: measure(args.num_envs[0], args.steps, kind)) for kind in KINDS}


def run(args) -> list[dict]:
    if args.paired:
        return paired_section(args.rounds * 8, args.num_envs_given or [16, 64])
    return section(args.rounds, args.num_envs_given or [16, 64])


def measure_paired(num_envs: int, blocks: int, block_steps: int = 10, warmup: int = 10) -> dict:
    """Every configuration of ``KINDS`` built in this process and stepped in turn, ``block_steps``
    steps each, for ``blocks`` blocks (the order rotated every block), so slow changes of the
    machine's load hit each alike. Returns ``kind -> list of (env steps/s, CPU ms per env step)``
    per block (CPU of every thread of the process: only the stepped env's threads work then)."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    venvs = {kind: gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                                control_mode="pd_ee_delta_pos", sim_config=KINDS[kind]) for kind in KINDS}
    generator = torch.Generator().manual_seed(0)
    for venv in venvs.values():
        venv.reset(seed=0)
        for _ in range(warmup):
            venv.step(torch.rand(num_envs, 4, generator=generator) * 2 - 1)
    kinds, out = list(KINDS), {kind: [] for kind in KINDS}
    for block in range(blocks):
        for kind in kinds[block % len(kinds):] + kinds[:block % len(kinds)]:
            actions = [torch.rand(num_envs, 4, generator=generator) * 2 - 1 for _ in range(block_steps)]
            wall, cpu = time.perf_counter(), time.process_time()
            for action in actions:
                venvs[kind].step(action)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            out[kind].append((num_envs * block_steps / wall, 1e3 * cpu / (num_envs * block_steps)))
    for venv in venvs.values():
        venv.close()
    return out


def paired_section(blocks: int, sizes=(16, 64)) -> list[dict]:
    """``measure_paired`` at each size: medians over blocks, and per configuration the median of
    its blocks' env steps/s divided by the shared system's block beside it."""
    print(f"\nFrankaLift-v1, pd_ee_delta_pos, random actions; every configuration in one process, {blocks} "
          f"blocks of 10 steps each, alternated; medians over blocks")
    print(f"{'N':>4s} {'shared':>8s}" + "".join(f" {LABELS[k]:>10s} {'x shared':>8s}" for k in KINDS if k != "shared")
          + "   CPU ms/env step:" + "".join(f" {LABELS[k]:>10s}" for k in KINDS) + "   load")
    rows = []
    for n in sizes:
        load = os.getloadavg()[0]
        out = measure_paired(n, blocks)
        load = [min(load, os.getloadavg()[0]), max(load, os.getloadavg()[0])]
        rate = {kind: median([r for r, _ in out[kind]]) for kind in KINDS}
        cpu = {kind: median([c for _, c in out[kind]]) for kind in KINDS}
        ratio = {kind: median([a[0] / s[0] for a, s in zip(out[kind], out["shared"])]) for kind in KINDS}
        row = {"num_envs": n, "load": load, "blocks": blocks}
        for kind in KINDS:
            row[f"{kind}_steps_per_second"], row[f"{kind}_cpu_ms_per_env_step"] = rate[kind], cpu[kind]
            row[f"{kind}_ratio"] = ratio[kind]
        rows.append(row)
        print(f"{n:>4d} {rate['shared']:>8.0f}"
              + "".join(f" {rate[k]:>10.0f} {ratio[k]:>8.2f}" for k in KINDS if k != "shared")
              + f"   {'':16s}" + "".join(f" {cpu[k]:>10.3f}" for k in KINDS) + f"   {load[0]:.1f}-{load[1]:.1f}",
              flush=True)
    return rows


def section(count: int, sizes=(16, 64)) -> list[dict]:
    """The configurations of the module docstring at each size, ``count`` rounds."""
    configs = [(kind, n, max(20, 2000 // n)) for n in sizes for kind in KINDS]
    results = rounds(configs, count, lambda c: f"{c[0]} N={c[1]}")
    loads = [r["load"] for values in results.values() for r in values]
    print(f"\nFrankaLift-v1, pd_ee_delta_pos, random actions; median of {count} rounds; "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print("env steps/s (wall clock), and x shared: the median over rounds of the ratio to the shared system")
    print(f"{'N':>4s} {'shared':>8s}" + "".join(f" {LABELS[k]:>10s} {'x shared':>8s}" for k in KINDS if k != "shared")
          + f"   CPU ms/env step:" + "".join(f" {LABELS[k]:>10s}" for k in KINDS) + "   threaded steps")
    rows = []
    for n in sizes:
        steps = max(20, 2000 // n)
        runs = {kind: results[(kind, n, steps)] for kind in KINDS}
        rate = {kind: median(runs[kind], "steps_per_second") for kind in KINDS}
        cpu = {kind: median(runs[kind], "cpu_ms_per_env_step") for kind in KINDS}
        ratio = {kind: median([a["steps_per_second"] / s["steps_per_second"] for a, s in zip(runs[kind], runs["shared"])])
                 for kind in KINDS}
        row = {"num_envs": n, "load": [min(loads), max(loads)],
               "threaded_share": median(runs["isolated"], "threaded_share")}
        for kind in KINDS:
            row[f"{kind}_steps_per_second"] = rate[kind]
            row[f"{kind}_cpu_ms_per_env_step"] = cpu[kind]
            row[f"{kind}_ratio"] = ratio[kind]
        row["ratio"], row["ratio_1_thread"] = ratio["isolated"], ratio["isolated_1_thread"]
        rows.append(row)
        print(f"{n:>4d} {rate['shared']:>8.0f}"
              + "".join(f" {rate[k]:>10.0f} {ratio[k]:>8.2f}" for k in KINDS if k != "shared")
              + f"   {'':16s}" + "".join(f" {cpu[k]:>10.3f}" for k in KINDS) + f"   {row['threaded_share']:>14.2f}")
    return rows
