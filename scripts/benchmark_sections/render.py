"""``--render``: camera throughput, images per second with the env step included, our
``visual_detail="fast"`` and ``"full"`` against ManiSkill 3's PickCube-v1 in the same run.

Rows (``CONFIGS``): ``obs_mode="rgb"`` at 128x128 and 64x64 for 1, 4 and 16 envs in process;
``rgb+depth+segmentation`` at 128x128, 1 env; ``render()`` at 512x512, 1 env (state
observations); ``"before"``: the camera path as it was before ``visual_detail`` and the shader
pack choice (the full meshes, SAPIEN's default pack, float colour read back and converted);
ManiSkill PickCube-v1 (``sim_backend="physx_cpu"``, its default 128x128 sensor) at 1 env with
``obs_mode="rgb"`` and ``"rgb+depth+segmentation"``, and its ``render()`` at 512x512. Each row's
ratio is against the ManiSkill row of the same kind, per round, then the median.

``num_workers=2`` (``PAIRED``): the in-process env and the sharded env of the same N stepped side
by side in one process, in alternating blocks, so that the machine's load hits both alike; the
ratio is sharded over in-process, per round, then the median. ``--render-workers`` measures only
these two envs at 16 envs and 128x128 (a run of a few minutes).

Every measurement runs in a fresh subprocess (``benchmark.py --worker render``); rounds are
interleaved. Rates are given per wall second and per CPU-second (all threads of the measuring
process and, for sharded envs, of its workers), which a loaded machine distorts far less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from benchmark_sections.common import rounds, worker_command

NAME = "render"
USAGE = """\
    --render          camera throughput (images/s, step included): rgb at 128x128 and 64x64 for
                      1, 4 and 16 envs in process and over num_workers=2, rgb+depth+segmentation
                      and 512x512 render(), visual_detail "fast" and "full", against ManiSkill's
                      PickCube-v1 at 1 env, same run; --render-core: the goal rows only;
                      --render-workers: only 16 envs in process against num_workers=2"""

CONFIGS = [  # (source, visual_detail, obs_mode, size, num_envs)
    ("maniskill", "-", "rgb", 128, 1),
    ("maniskill", "-", "rgb+depth+segmentation", 128, 1),
    ("maniskill", "-", "render", 512, 1),
    ("simulo", "fast", "rgb", 128, 1),
    ("simulo", "full", "rgb", 128, 1),
    ("simulo", "fast", "rgb", 128, 4),
    ("simulo", "fast", "rgb", 128, 16),
    ("simulo", "full", "rgb", 128, 16),
    ("simulo", "fast", "rgb", 64, 1),
    ("simulo", "fast", "rgb", 64, 4),
    ("simulo", "fast", "rgb", 64, 16),
    ("simulo", "fast", "rgb+depth+segmentation", 128, 1),
    ("simulo", "full", "rgb+depth+segmentation", 128, 1),
    ("simulo", "fast", "render", 512, 1),
    ("simulo", "full", "render", 512, 1),
    ("simulo", "before", "render", 512, 1),
]
PAIRED = [("paired", "fast", "rgb", 128, 4), ("paired", "fast", "rgb", 128, 16), ("paired", "fast", "rgb", 64, 16)]
"""Sharded (``num_workers=2``) against in-process, side by side."""

CORE = [c for c in CONFIGS if c[4] in (1, 16) and c[3] != 64 and c[1] != "full"] + PAIRED[1:2]
"""``--render-core``: the rows the goals are stated for."""

WORKERS = PAIRED[1:2]
"""``--render-workers``: 16 envs over ``num_workers=2`` against one process, side by side only."""


def add_arguments(parser) -> None:
    parser.add_argument("--render", action="store_true", help="measure camera throughput (the table above)")
    parser.add_argument("--render-core", action="store_true", help="--render, the goal rows only (a shorter run)")
    parser.add_argument("--render-workers", action="store_true",
                        help="--render, only 16 envs in process against num_workers=2, side by side (a short run)")
    parser.add_argument("--render-config", default=None, help=argparse.SUPPRESS)  # one measurement's config


def requested(args) -> bool:
    return bool(args.render or args.render_core or args.render_workers)


def _make(source: str, detail: str, obs_mode: str, size: int, num_envs: int, num_workers: int = 0):
    """The env of one configuration; ``obs_mode="render"``: state observations, ``render()`` at ``size``."""
    import gymnasium as gym

    render = obs_mode == "render"
    kwargs = dict(obs_mode="state" if render else obs_mode, render_mode="rgb_array" if render else None)
    if source == "maniskill":
        import mani_skill.envs  # noqa: F401

        if render:
            kwargs["human_render_camera_configs"] = dict(width=size, height=size)
        return gym.make("PickCube-v1", num_envs=num_envs, sim_backend="physx_cpu", **kwargs)
    import simulo_envs  # noqa: F401

    camera = dict(width=size, height=size)
    if detail == "before":  # SAPIEN's default pack from a directory of its own: read back as float
        detail, camera["shader_pack"] = "full", _float_default_pack()
    kwargs["human_render_camera_configs" if render else "sensor_configs"] = camera
    if num_workers:
        return gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                            num_workers=num_workers, visual_detail=detail, **kwargs)
    return gym.make("FrankaLift-v1", num_envs=num_envs, visual_detail=detail, **kwargs)


def _float_default_pack() -> str:
    """A link to SAPIEN's default shader pack in a temporary folder: cameras render with the
    default pack but, as a directory of one's own, keep SAPIEN's float colour target."""
    import atexit
    import shutil
    import tempfile

    import sapien

    folder = tempfile.mkdtemp(prefix="simulo_bench_")
    atexit.register(shutil.rmtree, folder, True)
    link = os.path.join(folder, "default")
    os.symlink(os.path.join(os.path.dirname(sapien.__file__), "vulkan_shader", "default"), link)
    return link


def _zero_action(env, source: str, num_envs: int):
    import torch

    inner = getattr(env, "unwrapped", env)
    space = getattr(inner, "single_action_space", None) or env.single_action_space
    return torch.zeros((num_envs, space.shape[0]) if source == "simulo" or num_envs > 1 else space.shape)


def _frame(env, action, render: bool) -> None:
    env.step(action)
    if render:
        env.render()


def measure(source: str, detail: str, obs_mode: str, size: int, num_envs: int, frames: int) -> dict:
    """One configuration in this process: ``frames`` env steps with zero actions after two
    warm-up steps (the first compiles shaders), each producing one image per env (the sensor
    picture, or the ``render()`` picture for ``obs_mode="render"``). Returns ``{"wall": images
    per second, "cpu": images per CPU-second of this process}``."""
    env = _make(source, detail, obs_mode, size, num_envs)
    env.reset(seed=0)
    action, render = _zero_action(env, source, num_envs), obs_mode == "render"
    for _ in range(2):
        _frame(env, action, render)
    start, cpu = time.perf_counter(), _cpu_seconds()
    for _ in range(frames):
        _frame(env, action, render)
    elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    env.close()
    return {"wall": num_envs * frames / elapsed, "cpu": num_envs * frames / cpu}


def measure_paired(detail: str, obs_mode: str, size: int, num_envs: int, blocks: int, block_steps: int = 3) -> dict:
    """The in-process env and the ``num_workers=2`` env of ``num_envs`` envs, both in this
    process, stepped in alternating blocks of ``block_steps`` steps (order reversed every other
    block). Returns per kind (``"1"``: in process, ``"2"``: sharded) ``{"wall", "cpu"}`` images
    per second; the sharded env's CPU time counts its workers' (``/proc/<pid>/stat``) and this
    process's."""
    envs = {"2": _make("simulo", detail, obs_mode, size, num_envs, num_workers=2),
            "1": _make("simulo", detail, obs_mode, size, num_envs)}
    pids = {"1": [], "2": [s["pid"] for s in envs["2"].env.worker_stats()]}
    totals = {k: [0.0, 0.0] for k in envs}
    actions = {}
    for k, env in envs.items():
        env.reset(seed=0)
        actions[k] = _zero_action(env, "simulo", num_envs)
        for _ in range(2):
            env.step(actions[k])
    for b in range(blocks):
        for k in (("1", "2") if b % 2 == 0 else ("2", "1")):
            start, cpu = time.perf_counter(), _cpu_seconds() + sum(map(_proc_cpu_seconds, pids[k]))
            for _ in range(block_steps):
                envs[k].step(actions[k])
            totals[k][0] += time.perf_counter() - start
            totals[k][1] += _cpu_seconds() + sum(map(_proc_cpu_seconds, pids[k])) - cpu
    for env in envs.values():
        env.close()
    images = num_envs * blocks * block_steps
    return {k: {"wall": images / wall, "cpu": images / cpu} for k, (wall, cpu) in totals.items()}


def _cpu_seconds() -> float:
    """CPU time of this process, every thread (lavapipe's included) [s]."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _proc_cpu_seconds(pid: int) -> float:
    """CPU time [s] of process ``pid`` (user + system, from ``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _frames(config) -> int:
    source, detail, obs_mode, size, n = config
    if source == "paired":
        return 8  # blocks of 3 steps, each way
    slow = source == "maniskill" or detail in ("full", "before")
    return max(8, (12 if slow else 60) // n) if size <= 128 else (6 if slow else 20)


def _run(*config) -> dict:
    command = worker_command("render", 1, 0) + ["--render-config", json.dumps(list(config) + [_frames(config)])]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measurement {config} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _worker(args) -> dict:
    source, *rest = json.loads(args.render_config)
    return measure_paired(*rest) if source == "paired" else measure(source, *rest)


MEASUREMENTS = {"render": _worker}


def _reference(config) -> tuple:
    return next(c for c in CONFIGS if c[0] == "maniskill" and c[2] == config[2])


def run(args) -> list[dict]:
    configs = WORKERS if args.render_workers else CORE if args.render_core else CONFIGS + PAIRED
    results = rounds(configs, args.rounds, lambda c: " ".join(map(str, c)), run=_run)
    rows = []
    print(f"\n{'source':10s} {'detail':6s} {'obs / render':24s} {'size':>5s} {'envs':>4s} {'workers':>7s} "
          f"{'images/s':>9s} {'x ref':>7s} {'images/CPU-s':>12s} {'x ref':>7s}   (ref: ManiSkill, same kind)")
    for config in configs:
        source, detail, obs_mode, size, n = config
        if source == "paired":
            rows += _paired_rows(config, results[config])
            continue
        ref = results[_reference(config)]
        row = {"source": source, "visual_detail": detail, "obs_mode": obs_mode, "size": size, "num_envs": n,
               "num_workers": 0, "rounds": results[config]}
        for metric in ("wall", "cpu"):
            row[metric] = statistics.median(r[metric] for r in results[config])
            # Median of per-round ratios: each ratio compares measurements of one round.
            row[f"{metric}_ratio"] = statistics.median(a[metric] / b[metric] for a, b in zip(results[config], ref))
        rows.append(row)
        _print(row)
    before = [c for c in configs if c[1] == "before"]
    for config in configs:
        if before and config[2] == "render" and config[0] == "simulo" and config != before[0]:
            row = next(r for r in rows if (r["source"], r["visual_detail"], r["obs_mode"]) == config[:3])
            for metric in ("wall", "cpu"):
                row[f"{metric}_ratio_vs_before"] = statistics.median(
                    a[metric] / b[metric] for a, b in zip(results[config], results[before[0]]))
            print(f"render() 512x512 {config[1]} against before: {row['wall_ratio_vs_before']:.2f}x images/s, "
                  f"{row['cpu_ratio_vs_before']:.2f}x images/CPU-s")
    print("x ref: median over rounds of the per-round ratio; sharded rows (workers 2): ref is the in-process env "
          "of the same N, stepped side by side with it in one process")
    return rows


def _paired_rows(config, runs: list) -> list[dict]:
    _, detail, obs_mode, size, n = config
    out = []
    for k in ("1", "2"):
        row = {"source": "simulo", "visual_detail": detail, "obs_mode": obs_mode, "size": size, "num_envs": n,
               "num_workers": int(k) if k == "2" else 0, "paired": True, "rounds": [r[k] for r in runs]}
        for metric in ("wall", "cpu"):
            row[metric] = statistics.median(r[k][metric] for r in runs)
            row[f"{metric}_ratio"] = statistics.median(r[k][metric] / r["1"][metric] for r in runs)
        out.append(row)
        _print(row)
    return out


def _print(row: dict) -> None:
    print(f"{row['source']:10s} {row['visual_detail']:6s} {row['obs_mode']:24s} {row['size']:>5d} "
          f"{row['num_envs']:>4d} {row['num_workers']:>7d} {row['wall']:>9.1f} {row['wall_ratio']:>7.2f} "
          f"{row['cpu']:>12.1f} {row['cpu_ratio']:>7.2f}", flush=True)
    sys.stdout.flush()
