"""``--contacts``: the vector env at N = 128 driven by the scripted expert (it grasps and lifts:
contact-heavy) against uniform random actions.
"""

from __future__ import annotations

import time

from benchmark_sections.common import median, rounds

NAME = "contacts"
USAGE = """\
    --contacts        N = 128 with the scripted expert (grasps: contact-heavy) and random actions"""


def add_arguments(parser) -> None:
    parser.add_argument("--contacts", action="store_true", help="measure the expert against random actions at N = 128")


def requested(args) -> bool:
    return args.contacts


def measure_policy(num_envs: int, steps: int, policy: str, isolate: bool = False, warmup: int = 10) -> float:
    """Env steps/s of the vector env (autoreset) on pd_ee_delta_pos driven by the scripted
    expert (it grasps and lifts: contact-heavy) or by uniform random actions."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401
    from simulo_envs.policies import LiftExpert

    venv = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        control_mode="pd_ee_delta_pos", sim_config={"isolate_envs": isolate})
    expert = LiftExpert(venv)
    info = venv.reset(seed=0)[1]
    generator = torch.Generator().manual_seed(0)
    begin = 0.0
    for k in range(steps + warmup):
        if k == warmup:
            begin = time.perf_counter()
        action = expert.act(info) if policy == "expert" else torch.rand(num_envs, 4, generator=generator) * 2 - 1
        info = venv.step(action)[4]
    elapsed = time.perf_counter() - begin
    venv.close()
    return num_envs * steps / elapsed


MEASUREMENTS = {
    "expert": lambda args: measure_policy(args.num_envs[0], args.steps, "expert"),
    "random": lambda args: measure_policy(args.num_envs[0], args.steps, "random"),
}


def run(args) -> list[dict]:
    return section(args.rounds)


def section(count: int, num_envs: int = 128) -> list[dict]:
    """The scripted expert (grasps) against random actions at ``num_envs`` envs."""
    configs = [(policy, num_envs, 60) for policy in ("random", "expert")]
    results = rounds(configs, count, lambda c: f"{c[0]} N={c[1]}")
    random_rate = median(results[configs[0]])
    print(f"\n{'pd_ee_delta_pos, N=%d' % num_envs:28s} {'env steps/s':>12s} {'x random':>9s}")
    rows = []
    for config in configs:
        rate = median(results[config])
        rows.append({"policy": config[0], "num_envs": num_envs, "steps_per_second": rate, "ratio": rate / random_rate})
        print(f"{config[0] + ' actions':28s} {rate:>12.0f} {rate / random_rate:>9.2f}")
    return rows
