"""Success of a task's scripted expert over consecutive seeds: one episode per seed.

    python scripts/expert_seeds.py --env-id FrankaLiftRandomized-v1 --seeds 64 --first-seed 0
    python scripts/expert_seeds.py --env-id SO101PickPlace-v1 --seeds 64 --json

The expert is the task's own (``simulo_envs.policies.EXPERTS``, as ``demo.py --policy expert``
picks it); a task without one is refused before any env is built.

Env ``k`` of one batch of ``--seeds`` envs runs seed ``first_seed + k``: the batch is reset with
``reset(seed=first_seed, options={"reconfigure": True})``, so every draw of a randomized task,
build-time ones (the cube's size) included, comes from that seed alone (the same values a
single env seeded ``first_seed + k`` gets). Each env's first episode counts (success at its
end: lifted, or the time limit). Prints the failing seeds with their randomized values and, with
``--json``, one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.policies import EXPERTS
from simulo_envs.training.task_lookup import expert_for, resolve_task


def task_and_expert(env_id: str) -> tuple[str, type]:
    """The registered id of ``env_id`` and its task's scripted expert class. Raises KeyError for an
    unknown id, ValueError for a task without a scripted expert."""
    env_id, cls = resolve_task(env_id)
    expert_cls = expert_for(cls)
    if expert_cls is None:
        raise ValueError(f"{env_id} has no scripted expert (experts: {', '.join(EXPERTS)})")
    return env_id, expert_cls


def run(env_id: str, seeds: int, first_seed: int) -> dict:
    """Run one expert episode per seed; return the summary (success_rate, failing seeds, ...).
    Raises as ``task_and_expert``, before any env is built."""
    env_id, expert_cls = task_and_expert(env_id)
    env = gym.make(env_id, num_envs=seeds, control_mode="pd_ee_delta_pos")
    base = env.unwrapped
    expert = expert_cls(env)
    _, info = env.reset(seed=first_seed, options={"reconfigure": True})
    randomization = base.randomization
    names = randomization.privileged_names if randomization is not None else []
    success = torch.zeros(seeds, dtype=torch.bool)
    done = torch.zeros(seeds, dtype=torch.bool)
    values = info.get("privileged")
    while not done.all():
        _, _, terminated, truncated, info = env.step(expert.act(info))
        ended = (terminated | truncated).cpu() & ~done
        success[ended] = info["success"].cpu()[ended]
        done |= ended
    env.close()
    failing = [first_seed + int(k) for k in (~success).nonzero().flatten()]
    details = {}
    if values is not None:
        for seed in failing:
            row = values[seed - first_seed].tolist()
            details[seed] = {n: round(v, 4) for n, v in zip(names, row) if not n.startswith(("lights", "sensor"))}
    return {"env_id": env_id, "seeds": seeds, "first_seed": first_seed,
            "success_rate": float(success.float().mean()), "failing_seeds": failing, "failing_values": details}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="FrankaLiftRandomized-v1")
    parser.add_argument("--seeds", type=int, default=64, help="number of seeds (envs in the batch)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")
    if args.first_seed < 0:
        parser.error("--first-seed must be >= 0")
    try:
        task_and_expert(args.env_id)
    except (KeyError, ValueError) as error:   # an unknown id (KeyError), a task without an expert
        parser.error(str(error.args[0]))
    summary = run(args.env_id, args.seeds, args.first_seed)
    for seed, row in summary["failing_values"].items():
        print(f"seed {seed} failed: {row}")
    print(f"success rate {summary['success_rate']:.4f} over {args.seeds} seeds "
          f"({args.first_seed}..{args.first_seed + args.seeds - 1}); failing: {summary['failing_seeds']}")
    if args.json:
        print(json.dumps({k: summary[k] for k in ("env_id", "seeds", "first_seed", "success_rate", "failing_seeds")}))


if __name__ == "__main__":
    main()
