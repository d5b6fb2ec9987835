"""Camera throughput: images per second with the env step included, our ``visual_detail="fast"``
and ``"full"`` against ManiSkill 3's PickCube-v1 in the same run (median of rounds, each
measurement in a fresh subprocess, rounds interleaved so machine noise hits all alike).

    python scripts/benchmark_render.py                   # the full table, 3 rounds
    python scripts/benchmark_render.py --rounds 5 --json
    python scripts/benchmark_render.py --core --rounds 2  # the goal rows only

Rows: ``obs_mode="rgb"`` at 128x128 and 64x64 for 1, 4 and 16 envs in process and 16 envs over
``num_workers=2``; ``rgb+depth+segmentation`` at 128x128, 1 env; ``render()`` at 512x512, 1 env
(state observations; "full" is what every camera rendered before ``visual_detail`` existed);
ManiSkill PickCube-v1 (``sim_backend="physx_cpu"``, its default 128x128 sensor) at 1 env with
``obs_mode="rgb"`` and ``"rgb+depth+segmentation"``, and ``render()`` at 512x512. Each row's
ratio is against the ManiSkill row of the same kind.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

CONFIGS = [  # (source, visual_detail, obs_mode, size, num_envs, num_workers)
    ("maniskill", "-", "rgb", 128, 1, 0),
    ("maniskill", "-", "rgb+depth+segmentation", 128, 1, 0),
    ("maniskill", "-", "render", 512, 1, 0),
    ("simulo", "fast", "rgb", 128, 1, 0),
    ("simulo", "full", "rgb", 128, 1, 0),
    ("simulo", "fast", "rgb", 128, 4, 0),
    ("simulo", "fast", "rgb", 128, 16, 0),
    ("simulo", "fast", "rgb", 128, 16, 2),
    ("simulo", "full", "rgb", 128, 16, 0),
    ("simulo", "fast", "rgb", 64, 1, 0),
    ("simulo", "fast", "rgb", 64, 16, 0),
    ("simulo", "fast", "rgb", 64, 16, 2),
    ("simulo", "fast", "rgb+depth+segmentation", 128, 1, 0),
    ("simulo", "full", "rgb+depth+segmentation", 128, 1, 0),
    ("simulo", "fast", "render", 512, 1, 0),
    ("simulo", "full", "render", 512, 1, 0),
]

CORE = [c for c in CONFIGS if c[4] in (1, 16) and c[3] != 64 and not (c[1] == "full" and c[4] == 16)]
"""``--core``: the rows the goals are stated for (1 env; 16 envs in process and over 2 workers)."""


def measure(source: str, detail: str, obs_mode: str, size: int, num_envs: int, num_workers: int,
            frames: int) -> float:
    """Images per second of one configuration in this process: ``frames`` env steps with zero
    actions after two warm-up steps, each producing one image per env (the sensor picture, or the
    ``render()`` picture for ``obs_mode="render"``). Returns ``{"wall": images per second,
    "cpu": images per CPU-second of this process}``."""
    import gymnasium as gym
    import torch

    render = obs_mode == "render"
    if source == "maniskill":
        import mani_skill.envs  # noqa: F401

        kwargs = dict(obs_mode="state" if render else obs_mode, render_mode="rgb_array" if render else None,
                      sim_backend="physx_cpu")
        if render:
            kwargs["human_render_camera_configs"] = dict(width=size, height=size)
        env = gym.make("PickCube-v1", num_envs=num_envs, **kwargs)
    else:
        import simulo_envs  # noqa: F401

        kwargs = dict(obs_mode="state" if render else obs_mode, render_mode="rgb_array" if render else None,
                      visual_detail=detail)
        kwargs["human_render_camera_configs" if render else "sensor_configs"] = dict(width=size, height=size)
        if num_workers:
            env = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                               num_workers=num_workers, **kwargs)
        else:
            env = gym.make("FrankaLift-v1", num_envs=num_envs, **kwargs)
    env.reset(seed=0)
    space = env.unwrapped.single_action_space if hasattr(env, "unwrapped") and hasattr(env.unwrapped, "single_action_space") \
        else env.single_action_space
    action = torch.zeros((num_envs, space.shape[0]) if source == "simulo" or num_envs > 1 else space.shape)
    for _ in range(2):
        env.step(action)
        if render:
            env.render()
    start, cpu = time.perf_counter(), _cpu_seconds()
    for _ in range(frames):
        env.step(action)
        if render:
            env.render()
    elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    env.close()
    return {"wall": num_envs * frames / elapsed, "cpu": num_envs * frames / cpu}


def _cpu_seconds() -> float:
    """CPU time of this process, every thread (lavapipe's included) [s]; worker processes are not
    counted, so the CPU rate is given for in-process rows only."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _frames(config) -> int:
    source, detail, obs_mode, size, n, _ = config
    slow = source == "maniskill" or detail == "full"
    return max(8, (12 if slow else 60) // n) if size <= 128 else (6 if slow else 20)


def _run(config) -> dict:
    command = [sys.executable, __file__, "--worker", json.dumps(list(config) + [_frames(config)])]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measurement {config} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1].replace("'", '"'))


def _reference(config) -> tuple:
    kind = config[2]
    return next(c for c in CONFIGS if c[0] == "maniskill" and c[2] == kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per configuration; medians reported (default 3)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--core", action="store_true", help="only the rows the goals are stated for (a shorter run)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(*json.loads(args.worker))))
        return
    configs = CORE if args.core else CONFIGS
    results = {c: [] for c in configs}
    for r in range(args.rounds):
        for config in configs:
            results[config].append(_run(config))
            print(f"round {r + 1}/{args.rounds}: {config} -> {results[config][-1]}", file=sys.stderr, flush=True)
    rows = []
    print(f"\n{'source':10s} {'detail':6s} {'obs / render':24s} {'size':>5s} {'envs':>4s} {'workers':>7s} "
          f"{'images/s':>9s} {'x ManiSkill':>11s} {'images/CPU-s':>12s} {'x ManiSkill':>11s}")
    for config in configs:
        source, detail, obs_mode, size, n, workers = config
        ref = results[_reference(config)]
        row = {"source": source, "visual_detail": detail, "obs_mode": obs_mode, "size": size, "num_envs": n,
               "num_workers": workers, "rounds": results[config]}
        for metric in ("wall", "cpu"):
            # Median of per-round ratios: each ratio compares measurements of one round.
            row[metric] = statistics.median(r[metric] for r in results[config])
            row[f"{metric}_ratio_vs_maniskill"] = statistics.median(a[metric] / b[metric]
                                                                    for a, b in zip(results[config], ref))
        cpu = f"{row['cpu']:>12.1f} {row['cpu_ratio_vs_maniskill']:>11.2f}" if not workers else f"{'-':>12s} {'-':>11s}"
        rows.append(row)
        print(f"{source:10s} {detail:6s} {obs_mode:24s} {size:>5d} {n:>4d} {workers:>7d} {row['wall']:>9.1f} "
              f"{row['wall_ratio_vs_maniskill']:>11.2f} {cpu}")
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
