"""``--limits``: what keeping the SO arms' joints within their limits costs. Per SO task, env
steps/s and the worst excursion past a joint limit [rad] under bang-bang ``pd_joint_delta_pos``
actions (every action dimension at its low or high bound, drawn anew every 5 steps), for the
agents as they are (servo armature, the scene's 15/1 solver iterations), without the armature
(the drives before), and without it at 60/4 solver iterations (the other fix).
"""

from __future__ import annotations

import time

from benchmark_sections.common import median, rounds

NAME = "limits"
USAGE = """\
    --limits          SO arms' joint-limit excursions and env steps/s: armature against none and 60/4 iterations"""
TASKS = ("SO100Lift-v1", "SO101Lift-v1")
VARIANTS = ("armature", "none", "iters_60_4")


def add_arguments(parser) -> None:
    parser.add_argument("--limits", action="store_true", help="measure the SO arms' joint-limit fix and its cost")


def requested(args) -> bool:
    return args.limits


def measure(env_id: str, variant: str, num_envs: int, steps: int) -> dict:
    """``{"steps_per_second", "worst_rad"}`` of ``env_id`` with the drives of ``variant``."""
    import dataclasses

    import numpy as np
    import torch

    import simulo_envs  # noqa: F401
    from simulo_envs.agents import SO100, SO101
    from simulo_envs.envs.registration import make

    sim = {"solver_position_iterations": 60, "solver_velocity_iterations": 4} if variant == "iters_60_4" else {}
    if variant != "armature":  # the drives without the servo's armature
        for cls in (SO100, SO101):
            cls.drives = tuple(dataclasses.replace(d, armature=0.0) for d in cls.drives)
    env = make(env_id, num_envs=num_envs, control_mode="pd_joint_delta_pos", sim_config=sim)
    env.reset(seed=0)
    robot = env.agent.robot
    low, high = robot.qlimits[:, 0].numpy(), robot.qlimits[:, 1].numpy()
    rng = np.random.default_rng(0)
    worst, elapsed = 0.0, 0.0
    for k in range(steps):
        if k % 5 == 0:
            action = torch.as_tensor(np.where(rng.integers(0, 2, (num_envs, 6)) == 1, 1.0, -1.0), dtype=torch.float32)
        start = time.perf_counter()
        env.step(action)
        elapsed += time.perf_counter() - start
        qpos = robot.state.qpos.numpy()
        worst = max(worst, float(np.maximum(qpos - high, low - qpos).max()))
    env.close()
    return {"steps_per_second": steps * num_envs / elapsed, "worst_rad": worst}


MEASUREMENTS = {f"limits:{task}:{variant}": (lambda args, t=task, v=variant: measure(t, v, args.num_envs[0], args.steps))
                for task in TASKS for variant in VARIANTS}


def run(args) -> list[dict]:
    configs = [(f"limits:{task}:{variant}", n, 300) for task in TASKS for n in (1, 16) for variant in VARIANTS]
    results = rounds(configs, args.rounds, lambda c: f"{c[0]} N={c[1]}")
    print(f"\n{'task':18s} {'N':>3s} " + " ".join(f"{v + ' steps/s':>20s} {'worst rad':>9s}" for v in VARIANTS))
    rows = []
    for task in TASKS:
        for n in (1, 16):
            row = {"env_id": task, "num_envs": n}
            cells = []
            for variant in VARIANTS:
                res = results[(f"limits:{task}:{variant}", n, 300)]
                row[variant] = {"steps_per_second": median(res, "steps_per_second"), "worst_rad": max(r["worst_rad"] for r in res)}
                cells.append(f"{row[variant]['steps_per_second']:>20.0f} {row[variant]['worst_rad']:>9.4f}")
            rows.append(row)
            print(f"{task:18s} {n:>3d} " + " ".join(cells))
    return rows
