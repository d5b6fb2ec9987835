"""``--stages``: where one step of FrankaLift-v1 at one env spends its CPU time, stage by stage,
beside the same stages of the raw SAPIEN loop and of the floor (``raw.py``).

Each stage's CPU time is the thread's (``time.thread_time_ns``), summed over the timed steps and
divided by their number [us per step]. Our env and the floor run in one process, stepped in
turn in blocks of 30 steps (``measure_paired``), so that the machine's load hits both alike; the
table holds each one's median over the blocks and the median of their difference; the raw loop
runs in a subprocess of its own, median of the rounds. Our env's stages are timed by wrapping
the methods that make them up (the wrappers add a clock read or two per stage, so the sum of
our stages runs a little above an untimed step):

- action check and clip: ``clip_action`` (as ``step`` calls it);
- controller: the controller's ``_set_checked_array`` (the checked action mapped to drive
  targets, written into PhysX);
- physics: the backend's ``step`` (5 PhysX steps and their bookkeeping);
- fault check: ``Faults.detect``;
- evaluate: the task's ``evaluate`` (state reads, grasp contacts, predicates);
- observation: the agent's ``get_proprioception``, the task's ``_get_obs_extra`` and ``flatten_obs``;
- reward: the task's ``compute_normalized_dense_reward`` (the default reward mode);
- outputs and the rest: everything else of ``env.step`` (torch outputs, step counter and
  truncation, the fault flags in ``info``, the finiteness check of obs and reward).
"""

from __future__ import annotations

import os
import time

from benchmark_sections.common import median, rounds, run_worker
from benchmark_sections.raw import FLOOR_STAGES, RAW_STAGES, floor_steps, measure_raw, our_steps

NAME = "stages"
USAGE = """\
    --stages          one env's step of FrankaLift-v1 stage by stage (action check, controller,
                      physics, fault check, evaluate, observation, reward, outputs): CPU us per
                      step of ours, the floor and the raw SAPIEN loop of --raw"""

STAGES = ("action check and clip", "controller", "physics", "fault check", "evaluate", "observation", "reward",
          "outputs")
"""The table's rows, in step order (the raw loop's ``state reads`` sit on the ``evaluate`` row)."""


def add_arguments(parser) -> None:
    parser.add_argument("--stages", action="store_true", help="one env's step, stage by stage, against the floor")


def requested(args) -> bool:
    return args.stages


def _per_step(totals: dict, steps: int) -> dict:
    """Our stage totals [ns] over ``steps`` steps -> CPU us per step; ``outputs`` is the rest of the step."""
    out = {stage: totals[stage] / steps / 1000 for stage in totals}
    out["outputs"] = out["total"] - sum(out[stage] for stage in STAGES if stage != "outputs")
    return out


def timed_our_steps(totals: dict, count: int):
    """``raw.our_steps`` at one env with each stage's methods wrapped (module docstring), their
    CPU time [ns] added to ``totals[stage]`` and the whole ``env.step`` to ``totals["total"]``
    (``outputs`` is left at 0: the rest of the step, ``_per_step`` computes it). Its first
    ``next()`` raises RuntimeError if the wrapped env left the CPU fast path. The wrappers stay
    on the classes (a benchmark worker's process)."""
    import functools

    from simulo_envs.controllers.combined import CombinedController
    from simulo_envs.envs import fast_step
    from simulo_envs.envs import step as step_module
    from simulo_envs.envs.faults import Faults
    from simulo_envs.tasks.franka_lift import FrankaLiftEnv

    clock = time.thread_time_ns

    def timed(function, stage):
        @functools.wraps(function)  # keeps the signature the fast path's checks inspect
        def wrapper(*args, **kwargs):
            start = clock()
            out = function(*args, **kwargs)
            totals[stage] += clock() - start
            return out
        return wrapper

    # Wrapped before the build: the step holds the bound method it hands the action to.
    CombinedController._set_checked_array = timed(CombinedController._set_checked_array, "controller")
    step_module.clip_action = timed(step_module.clip_action, "action check and clip")
    for name, stage in (("evaluate", "evaluate"), ("_get_obs_extra", "observation"),
                        ("compute_normalized_dense_reward", "reward")):
        owner = next(c for c in FrankaLiftEnv.__mro__ if name in c.__dict__)  # the class hooks compare against
        setattr(owner, name, timed(owner.__dict__[name], stage))
    Faults.detect = timed(Faults.detect, "fault check")
    fast_step.flatten_obs = timed(fast_step.flatten_obs, "observation")

    def wrap_and_check(env) -> None:  # after the build: the agent's and backend's classes are known
        owner = next(c for c in type(env.agent).__mro__ if "get_proprioception" in c.__dict__)
        owner.get_proprioception = timed(owner.__dict__["get_proprioception"], "observation")
        type(env.backend).step = timed(type(env.backend).step, "physics")
        env.step = timed(env.step, "total")  # on the instance: the whole step, as our_steps calls it
        if not env._fast_step or env._step_hooks[5] is None:
            raise RuntimeError("the timed env left the CPU fast path")

    return our_steps(1, count, wrap_and_check)


def measure_raw_stages(steps: int) -> dict:
    """Stage -> CPU us per step of the raw SAPIEN loop (``raw.measure_raw``), its ``state reads``
    on the ``evaluate`` row, plus ``"total"``."""
    totals = [0] * len(RAW_STAGES)
    measure_raw(1, steps, stages=totals)
    out = {("evaluate" if name == "state reads" else name): value / steps / 1000 for name, value in zip(RAW_STAGES, totals)}
    out["total"] = sum(out.values())
    return out


def measure_paired(blocks: int, block_steps: int = 30, warmup: int = 20) -> dict:
    """Our timed step (``timed_our_steps``) and the floor's (``floor_steps`` with its stage marks)
    in this process, stepped in turn, ``block_steps`` steps each, for ``blocks`` blocks (which
    goes first alternates), so that the machine's load hits both alike. Returns ``{"ours",
    "floor"}`` -> per block, stage -> CPU us per step (and ``"total"``)."""
    count = warmup + blocks * block_steps
    ours, floor = dict.fromkeys(STAGES + ("total",), 0), [0] * len(FLOOR_STAGES)
    runs = {"floor": floor_steps(1, count, floor), "ours": timed_our_steps(ours, count)}
    for _ in range(warmup):
        for run in runs.values():
            next(run)
    out = {"floor": [], "ours": []}
    for block in range(blocks):
        for kind in (("floor", "ours") if block % 2 == 0 else ("ours", "floor")):
            before = dict(ours) if kind == "ours" else list(floor)
            for _ in range(block_steps):
                next(runs[kind])
            if kind == "ours":
                out["ours"].append(_per_step({k: ours[k] - before[k] for k in ours}, block_steps))
            else:
                stages = {name: (after - ago) / block_steps / 1000 for name, after, ago in zip(FLOOR_STAGES, floor, before)}
                stages["total"] = sum(stages.values())
                out["floor"].append(stages)
    for run in runs.values():
        run.close()
    return out


MEASUREMENTS = {
    "stages_raw": lambda args: measure_raw_stages(args.steps),
    "stages_paired": lambda args: measure_paired(args.size),
}


def run(args) -> list[dict]:
    return section(args.rounds)


def section(count: int, steps: int = 1500) -> list[dict]:
    """The stage table (module docstring): one row per stage, CPU us per step. Ours and the floor
    in one process (``measure_paired``, ``10 * count`` blocks of 30 steps): each one's median over
    blocks, and the median over blocks of their difference; the raw loop in a subprocess of its
    own, median of ``count`` rounds."""
    raw = rounds([("stages_raw", 1, steps)], count, lambda c: c[0])[("stages_raw", 1, steps)]
    load = os.getloadavg()[0]
    paired = run_worker("stages_paired", 1, 0, size=10 * count)
    load = [min(load, os.getloadavg()[0]), max(load, os.getloadavg()[0])]
    ratio = median([o["total"] / f["total"] for o, f in zip(paired["ours"], paired["floor"])])
    print(f"\n{'one step of FrankaLift-v1, 1 env':34s} {'raw SAPIEN':>10s} {'floor':>8s} {'ours':>8s} {'ours - floor':>12s}"
          f"   [CPU us per step; ours and the floor in one process, {10 * count} blocks of 30 steps alternated: "
          f"medians over blocks; load {load[0]:.1f}-{load[1]:.1f}]")
    rows = []
    for stage in STAGES + ("total",):
        raw_us = median([r.get(stage, 0.0) for r in raw])
        floor_us = median([f[stage] for f in paired["floor"]])
        ours_us = median([o[stage] for o in paired["ours"]])
        diff = median([o[stage] - f[stage] for o, f in zip(paired["ours"], paired["floor"])])
        rows.append({"stage": stage, "raw_us": raw_us, "floor_us": floor_us, "ours_us": ours_us, "diff_us": diff})
        print(f"{stage:34s} {raw_us:>10.1f} {floor_us:>8.1f} {ours_us:>8.1f} {diff:>12.1f}")
    print(f"{'ours / floor (median of blocks)':34s} {'':>10s} {'':>8s} {'':>8s} {ratio:>12.3f}")
    rows.append({"stage": "ours / floor", "ratio": ratio, "load": load})
    return rows
