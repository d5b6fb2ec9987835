"""Env steps per second: FrankaLift-v1 (physx_cpu) against ManiSkill's PickCube-v1, same run.

    python scripts/benchmark.py             # table + ratios, median of 3 rounds
    python scripts/benchmark.py --json      # last line: the results as JSON
    python scripts/benchmark.py --render    # also: rendering frames per second (lavapipe on CPU)

Each measurement runs in its own subprocess (fresh PhysX globals, no cross-talk); rounds are
interleaved so machine noise hits every configuration alike. Both envs get uniform random
actions in ``pd_joint_delta_pos`` (and, for one env, ``pd_ee_delta_pos``) with state
observations and no resets (a pure step rate).
Env steps/s counts every env: ``num_envs * steps / seconds``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


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


def measure_render(num_envs: int, size: int, frames: int) -> float:
    """Rendered images per second (all envs): ``obs_mode="rgb"`` sensor images of ``size`` px,
    one render per env step (step time included), after the first frame (shader compilation)."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    env = gym.make("FrankaLift-v1", num_envs=num_envs, obs_mode="rgb",
                   sensor_configs={"base_camera": dict(width=size, height=size)})
    env.reset(seed=0)
    action = torch.zeros(num_envs, env.unwrapped.single_action_space.shape[0])
    env.step(action)
    start = time.perf_counter()
    for _ in range(frames):
        env.step(action)
    elapsed = time.perf_counter() - start
    env.close()
    return num_envs * frames / elapsed


def run_worker(kind: str, num_envs: int, steps: int, size: int = 0, control_mode: str = "pd_joint_delta_pos",
               sim_backend: str = "physx_cpu") -> float:
    out = subprocess.run([sys.executable, __file__, "--worker", kind, "--num-envs", str(num_envs), "--steps", str(steps),
                          "--size", str(size), "--control-mode", control_mode, "--sim-backend", sim_backend],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per configuration; the median is reported (default 3)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 4, 16, 64],
                        help="FrankaLift-v1 batch sizes to measure (default 1 4 16 64)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--render", action="store_true", help="also measure rendering frames per second")
    parser.add_argument("--sim-backend", default="physx_cpu",
                        help="FrankaLift-v1's backend: physx_cpu (default) or physx_cuda_emulated (the GPU code path "
                             "on the CPU); on a GPU machine use scripts/gpu_check.py, which runs ManiSkill on its GPU too")
    parser.add_argument("--worker", choices=["simulo", "maniskill", "render"], help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--control-mode", default="pd_joint_delta_pos", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1 or min(args.num_envs) < 1:
        parser.error("--rounds and every --num-envs must be >= 1")
    if args.worker == "render":
        print(measure_render(args.num_envs[0], args.size, args.steps))
        return
    if args.worker:
        print(measure(args.worker, args.num_envs[0], args.steps, args.control_mode, sim_backend=args.sim_backend))
        return

    joint, ee = "pd_joint_delta_pos", "pd_ee_delta_pos"
    configs = [("maniskill", 1, 400, joint)] + [("simulo", n, max(200, 2400 // n), joint) for n in args.num_envs]
    configs += [("maniskill", 1, 200, ee), ("simulo", 1, 400, ee)]
    results: dict = {(k, n, c): [] for k, n, _, c in configs}
    for r in range(args.rounds):
        for kind, n, steps, mode in configs:
            results[(kind, n, mode)].append(run_worker(kind, n, steps, control_mode=mode, sim_backend=args.sim_backend))
            print(f"round {r + 1}/{args.rounds}: {kind:9s} {mode:18s} N={n:<3d} {results[(kind, n, mode)][-1]:9.0f} env steps/s",
                  file=sys.stderr)
    rows = []
    print(f"\n{'env':28s} {'control mode':18s} {'num_envs':>8s} {'env steps/s (median)':>21s} {'x ManiSkill N=1':>16s}")
    for mode in (joint, ee):
        ms = statistics.median(results[("maniskill", 1, mode)])
        print(f"{'ManiSkill PickCube-v1':28s} {mode:18s} {1:>8d} {ms:>21.0f} {1.0:>16.2f}")
        rows.append({"env": "PickCube-v1 (ManiSkill)", "control_mode": mode, "num_envs": 1, "steps_per_second": ms,
                     "ratio_vs_maniskill_1": 1.0, "rounds": results[("maniskill", 1, mode)]})
        for kind, n, _, m in configs:
            if kind != "simulo" or m != mode:
                continue
            med = statistics.median(results[(kind, n, m)])
            rows.append({"env": "FrankaLift-v1", "control_mode": m, "num_envs": n, "steps_per_second": med,
                         "ratio_vs_maniskill_1": med / ms, "rounds": results[(kind, n, m)]})
            print(f"{'simulo_envs FrankaLift-v1':28s} {m:18s} {n:>8d} {med:>21.0f} {med / ms:>16.2f}")
    render_rows = []
    if args.render:
        print(f"\n{'rendering (obs_mode=rgb, step included)':40s} {'num_envs':>8s} {'images/s (median)':>18s}")
        for n, size in ((1, 128), (4, 128), (16, 128), (1, 512)):
            frames = 20 if size == 512 else max(10, 60 // n)
            fps = statistics.median(run_worker("render", n, frames, size) for _ in range(args.rounds))
            render_rows.append({"num_envs": n, "size": size, "images_per_second": fps})
            print(f"{f'{size}x{size}':40s} {n:>8d} {fps:>18.1f}")
    if args.json:
        print(json.dumps({"steps": rows, "render": render_rows}))


if __name__ == "__main__":
    main()
