"""``--stages``: where one step of FrankaLift-v1 at one env spends its CPU time, stage by stage,
beside the same stages of the raw SAPIEN loop and of the floor (``raw.py``).

Each stage's CPU time is the thread's (``time.thread_time_ns``), summed over the timed steps and
divided by their number [us per step]; each configuration runs in its own subprocess, rounds
interleaved, and the table holds each stage's median over the rounds. Our env's stages are
timed by wrapping the methods that make them up (the wrappers add a clock read or two per
stage, so the sum of our stages runs a little above an untimed step):

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

import time

from benchmark_sections.common import median, rounds
from benchmark_sections.raw import FLOOR_STAGES, RAW_STAGES, measure_floor, measure_raw

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


def measure_ours(steps: int, warmup: int = 20) -> dict:
    """Stage -> CPU us per step of ``gym.make("FrankaLift-v1")`` at one env (random actions in
    ``pd_joint_delta_pos``, state observations), plus ``"total"`` (the whole ``env.step``)."""
    import functools

    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401
    from simulo_envs.controllers.combined import CombinedController
    from simulo_envs.envs import fast_step
    from simulo_envs.envs import step as step_module
    from simulo_envs.envs.faults import Faults

    totals = dict.fromkeys(STAGES + ("total",), 0)
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
    env = gym.make("FrankaLift-v1", num_envs=1, control_mode="pd_joint_delta_pos")
    unwrapped = env.unwrapped
    cls = type(unwrapped)
    for name, stage in (("evaluate", "evaluate"), ("_get_obs_extra", "observation"),
                        ("compute_normalized_dense_reward", "reward")):
        owner = next(c for c in cls.__mro__ if name in c.__dict__)  # the class hooks compare against
        setattr(owner, name, timed(owner.__dict__[name], stage))
    agent_cls = type(unwrapped.agent)
    owner = next(c for c in agent_cls.__mro__ if "get_proprioception" in c.__dict__)
    owner.get_proprioception = timed(owner.__dict__["get_proprioception"], "observation")
    type(unwrapped.backend).step = timed(type(unwrapped.backend).step, "physics")
    Faults.detect = timed(Faults.detect, "fault check")
    fast_step.flatten_obs = timed(fast_step.flatten_obs, "observation")
    env.reset(seed=0)
    if not unwrapped._fast_step or unwrapped._step_hooks[5] is None:
        raise RuntimeError("the timed env left the CPU fast path")
    space = unwrapped.single_action_space
    low, high = torch.from_numpy(space.low), torch.from_numpy(space.high)
    actions = low + (high - low) * torch.rand(steps + warmup, 1, low.shape[0], generator=torch.Generator().manual_seed(0))
    for k in range(steps + warmup):
        if k == warmup:
            totals.update(dict.fromkeys(totals, 0))
        start = clock()
        env.step(actions[k])
        totals["total"] += clock() - start
    env.close()
    out = {stage: totals[stage] / steps / 1000 for stage in totals}
    out["outputs"] = out["total"] - sum(out[stage] for stage in STAGES if stage != "outputs")
    return out


def measure_stages(kind: str, steps: int) -> dict:
    """Stage -> CPU us per step of ``kind``: ``"ours"``, ``"floor"`` or ``"raw"`` (``raw.py``)."""
    if kind == "ours":
        return measure_ours(steps)
    names = FLOOR_STAGES if kind == "floor" else RAW_STAGES
    totals = [0] * len(names)
    (measure_floor if kind == "floor" else measure_raw)(1, steps, stages=totals)
    out = {("evaluate" if name == "state reads" else name): value / steps / 1000 for name, value in zip(names, totals)}
    out["total"] = sum(out.values())
    return out


MEASUREMENTS = {
    "stages_ours": lambda args: measure_stages("ours", args.steps),
    "stages_floor": lambda args: measure_stages("floor", args.steps),
    "stages_raw": lambda args: measure_stages("raw", args.steps),
}


def run(args) -> list[dict]:
    return section(args.rounds)


def section(count: int, steps: int = 1500) -> list[dict]:
    """The stage table (module docstring): one row per stage, CPU us per step, median of ``count``
    rounds per stage and configuration."""
    kinds = ("raw", "floor", "ours")
    results = rounds([(f"stages_{kind}", 1, steps) for kind in kinds], count, lambda c: c[0])
    table = {kind: {stage: median([r.get(stage, 0.0) for r in results[(f"stages_{kind}", 1, steps)]])
                    for stage in STAGES + ("total",)} for kind in kinds}
    print(f"\n{'one step of FrankaLift-v1, 1 env':34s} {'raw SAPIEN':>10s} {'floor':>8s} {'ours':>8s} {'ours - floor':>12s}"
          "   [CPU us per step, median of rounds]")
    rows = []
    for stage in STAGES + ("total",):
        raw, floor, ours = (table[kind][stage] for kind in kinds)
        rows.append({"stage": stage, "raw_us": raw, "floor_us": floor, "ours_us": ours})
        print(f"{stage:34s} {raw:>10.1f} {floor:>8.1f} {ours:>8.1f} {ours - floor:>12.1f}")
    return rows
