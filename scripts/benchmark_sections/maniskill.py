"""The default table: FrankaLift-v1 at each ``--num-envs`` against ManiSkill's PickCube-v1 at one
env, same run, in ``pd_joint_delta_pos`` and ``pd_ee_delta_pos`` (camera throughput: ``--render``,
``render.py``).

Both envs get uniform random actions with state observations and no resets (a pure step rate).
"""

from __future__ import annotations

import time

from benchmark_sections.common import median, rounds

NAME = "maniskill"
USAGE = ""  # the default table, described in benchmark.py's own docstring


def add_arguments(parser) -> None:
    """The table has no flags of its own."""


def requested(args) -> bool:
    """The table runs when no other section is asked for (``benchmark.py``)."""
    return False


def measure(kind: str, num_envs: int, steps: int, control_mode: str = "pd_joint_delta_pos", warmup: int = 20,
            sim_backend: str = "physx_cpu") -> float:
    """Env steps per second of one configuration, in this process (FrankaLift-v1 on ``sim_backend``;
    PickCube-v1 on ManiSkill's CPU backend)."""
    import gymnasium as gym
    import torch

    if kind == "simulo":
        import simulo_envs  # noqa: F401

        env = gym.make("FrankaLift-v1", num_envs=num_envs, control_mode=control_mode, sim_backend=sim_backend)
    else:
        import mani_skill.envs  # noqa: F401

        env = gym.make("PickCube-v1", num_envs=num_envs, obs_mode="state", control_mode=control_mode,
                       sim_backend="physx_cpu")
    env.reset(seed=0)
    space = env.unwrapped.single_action_space
    low, high = torch.from_numpy(space.low), torch.from_numpy(space.high)
    actions = low + (high - low) * torch.rand(steps + warmup, num_envs, low.shape[0], generator=torch.Generator().manual_seed(0))
    if kind == "maniskill" and num_envs == 1:
        actions = actions[:, 0]
    for k in range(warmup):
        env.step(actions[k])
    start = time.perf_counter()
    for k in range(warmup, warmup + steps):
        env.step(actions[k])
    elapsed = time.perf_counter() - start
    env.close()
    return num_envs * steps / elapsed


MEASUREMENTS = {
    "simulo": lambda args: measure("simulo", args.num_envs[0], args.steps, args.control_mode, sim_backend=args.sim_backend),
    "maniskill": lambda args: measure("maniskill", args.num_envs[0], args.steps, args.control_mode,
                                      sim_backend=args.sim_backend),
}


def run(args) -> dict:
    """FrankaLift-v1 at each ``--num-envs`` against ManiSkill's PickCube-v1 at one env."""
    joint, ee = "pd_joint_delta_pos", "pd_ee_delta_pos"
    configs = [("maniskill", 1, 400, 0, joint)] + [("simulo", n, max(200, 2400 // n), 0, joint) for n in args.num_envs]
    configs += [("maniskill", 1, 200, 0, ee), ("simulo", 1, 400, 0, ee)]
    results = rounds(configs, args.rounds, lambda c: f"{c[0]:9s} {c[4]:18s} N={c[1]:<3d} env steps/s",
                     sim_backend=args.sim_backend)
    rows = []
    print(f"\n{'env':28s} {'control mode':18s} {'num_envs':>8s} {'env steps/s (median)':>21s} {'x ManiSkill N=1':>16s}")
    for mode in (joint, ee):
        ms_config = next(c for c in configs if c[0] == "maniskill" and c[4] == mode)
        ms = median(results[ms_config])
        print(f"{'ManiSkill PickCube-v1':28s} {mode:18s} {1:>8d} {ms:>21.0f} {1.0:>16.2f}")
        rows.append({"env": "PickCube-v1 (ManiSkill)", "control_mode": mode, "num_envs": 1, "steps_per_second": ms,
                     "ratio_vs_maniskill_1": 1.0, "rounds": results[ms_config]})
        for config in configs:
            kind, n, _, _, m = config
            if kind != "simulo" or m != mode:
                continue
            med = median(results[config])
            rows.append({"env": "FrankaLift-v1", "control_mode": m, "num_envs": n, "steps_per_second": med,
                         "ratio_vs_maniskill_1": med / ms, "rounds": results[config]})
            print(f"{'simulo_envs FrankaLift-v1':28s} {m:18s} {n:>8d} {med:>21.0f} {med / ms:>16.2f}")
    return {"steps": rows}
