"""Cost of the per-step fault checks (``simulo_envs/envs/faults.py``) in ``env.step``.

    python tests/benchmarks/bench_fault_check.py [--env FrankaLift-v1] [--num-envs 16 64]
                                                 [--rounds 7] [--steps 50]

Two measurements of the same thing, side by side in one process:

1. Step time with ``detect_faults=True`` vs ``False``: two envs of N, stepped with the same
   random actions in alternating rounds of ``--steps`` steps (so both see the same machine
   load); the overhead is the median over rounds of (on - off) / off.
2. Time spent inside the two hooks themselves (``env.faults.detect`` before ``evaluate``,
   ``env.faults.quarantine_outputs`` on the outputs), timed around each call in the checked env, as a
   share of its step time (median over rounds). This one is not drowned by the noise of
   a shared machine, so it is the figure to quote; (1) checks it.

Healthy runs: no env faults, so the quarantine path (a state write) never runs. Prints a JSON
line per N. Not a test: pytest does not collect ``bench_*`` files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import gymnasium as gym
import numpy as np
import torch

import simulo_envs  # noqa: F401


class _HookTimer:
    """Wraps the env's two fault hooks (methods of ``env.faults``) and adds up the seconds spent
    in them. Before timing ``detect`` it reads the robot's qpos: the first state read after a physics step
    packs the simulation state (physx_cpu), which the step's observation would do anyway, so
    that cost is not counted as the check's."""

    def __init__(self, env):
        self.seconds = 0.0
        for name in ("detect", "quarantine_outputs"):
            original = getattr(env.faults, name)
            before = (lambda: env.agent.robot.state.qpos) if name == "detect" else None
            setattr(env.faults, name, self._timed(original, before))

    def _timed(self, fn, before=None):
        def wrapper(*args, **kwargs):
            if before is not None:
                before()
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return wrapper


def measure(env_id: str, num_envs: int, rounds: int, steps: int) -> dict:
    on = gym.make(env_id, num_envs=num_envs, max_episode_steps=-1).unwrapped
    off = gym.make(env_id, num_envs=num_envs, max_episode_steps=-1, sim_config=dict(detect_faults=False)).unwrapped
    timer = _HookTimer(on)
    rng = np.random.default_rng(0)
    dim = on.single_action_space.shape[0]
    actions = [torch.from_numpy(rng.uniform(-1, 1, (num_envs, dim)).astype(np.float32)) for _ in range(steps)]
    for env in (on, off):  # warm-up
        env.reset(seed=0)
        for a in actions[:5]:
            env.step(a)
    times = {"on": [], "off": []}
    hook_share, faults = [], 0
    for r in range(rounds):
        for name in (("on", "off") if r % 2 == 0 else ("off", "on")):
            env = on if name == "on" else off
            env.reset(seed=r)
            timer.seconds = 0.0
            start = time.perf_counter()
            for a in actions:
                info = env.step(a)[4]
                faults += int(info["sim_fault"].sum())
            elapsed = time.perf_counter() - start
            times[name].append(elapsed / steps)
            if name == "on":
                hook_share.append(timer.seconds / elapsed)
    on.close()
    off.close()
    ratios = [(a - b) / b for a, b in zip(times["on"], times["off"])]
    return {
        "env": env_id, "num_envs": num_envs, "rounds": rounds, "steps_per_round": steps,
        "step_ms_checked": round(1e3 * statistics.median(times["on"]), 3),
        "step_ms_unchecked": round(1e3 * statistics.median(times["off"]), 3),
        "overhead_pct_on_vs_off": round(100 * statistics.median(ratios), 2),
        "overhead_pct_hooks_timed": round(100 * statistics.median(hook_share), 2),
        "faults_seen": faults,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="FrankaLift-v1")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    for n in args.num_envs:
        print(json.dumps(measure(args.env, n, args.rounds, args.steps)), flush=True)


if __name__ == "__main__":
    main()
