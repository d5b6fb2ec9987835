"""What FrankaStack-v2's training env costs per step, and how much of it the start states are.

    python tests/benchmarks/bench_start_states.py [--rounds 2] [--steps 300] [--num-envs 64]

Builds the training env of ``tasks/franka_stack_v2_ppo.py`` (rsl-rl's vector env, partial resets)
three ways, one after the other in each round: as the recipe has it (half the episodes from
scripted-expert states), without start states, and without start states with the arm holding
still (zero actions). The first two are driven by the committed policy
(``tasks/franka_stack_v2_ppo.pt``) plus Gaussian noise of std 0.3 (it stacks, drops and restarts
as in training). Prints CPU seconds of this process per 1,000 env steps for each, the median
over rounds, and the ratios. CPU time, not wall-clock, so other processes on the machine change it
little. Not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.training.evaluation import load_policy
from simulo_envs.training.rsl_rl_env import make_rsl_env
from simulo_envs.training.rsl_rl_train import train_config_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKPOINT = os.path.join(ROOT, "tasks", "franka_stack_v2_ppo.pt")
MODES = ("start states", "no start states", "arm still")


def load_actor():
    """The committed policy's deterministic actor (``load_policy``; its one-env evaluation env is
    closed, the actor takes any batch)."""
    env, actor, _ = load_policy(CHECKPOINT, 1, 0)
    env.close()
    return actor


def cpu_per_1000_steps(actor, mode: str, num_envs: int, steps: int) -> float:
    config = train_config_for("FrankaStack-v2")
    if mode != "start states":
        config.pop("start_states")
    env = make_rsl_env("FrankaStack-v2", num_envs, config, 0)
    obs = env.get_observations()
    torch.manual_seed(0)
    for _ in range(20):
        with torch.no_grad():
            obs = env.step(actor(obs))[0]
    start = time.process_time()
    for _ in range(steps):
        with torch.no_grad():
            action = actor(obs) + 0.3 * torch.randn(num_envs, env.num_actions)
        if mode == "arm still":
            action = torch.zeros_like(action)
        obs = env.step(action)[0]
    spent = time.process_time() - start
    env.close()
    return 1000 * spent / (steps * num_envs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300, help="env steps per env measured in each run")
    parser.add_argument("--num-envs", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    actor = load_actor()
    seconds = {mode: [] for mode in MODES}
    for r in range(args.rounds):
        for mode in MODES:
            seconds[mode].append(cpu_per_1000_steps(actor, mode, args.num_envs, args.steps))
            print(f"round {r}: {mode:16s} {seconds[mode][-1]:.3f} CPU s per 1000 env steps", flush=True)
    median = {mode: statistics.median(v) for mode, v in seconds.items()}
    print("median: " + ", ".join(f"{m} {s:.3f} s" for m, s in median.items()))
    print(f"start states / none: {median['start states'] / median['no start states']:.2f}x; "
          f"policy / arm still: {median['no start states'] / median['arm still']:.2f}x")


if __name__ == "__main__":
    main()
