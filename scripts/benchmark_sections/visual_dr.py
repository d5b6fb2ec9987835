"""``--visual-dr``: what each component of ``randomization="visual"`` costs, in sensor images per
second with the env step (and the resets, with their draws) included, against the same env
without randomization (``randomization="none"``), in the same run.

Rows: per task (``TASKS``: SO100Lift-v1's front and wrist cameras, FrankaLift-v1's front camera)
the task's visual table split by what it randomizes (``COMPONENTS``: the entries whose parameter
matches), each component alone, then the whole preset. Every env: 16 envs, ``obs_mode="rgb"``,
``--visual-dr-size`` square cameras (default 64), uniform random actions (seeded), episodes cut
at ``EPISODE_STEPS`` steps and those envs reset (a partial reset every step or so: four times as
many resets as SO100Lift-v1's 80-step episodes), 2 warm-up steps then ``STEPS`` measured. Images
count every camera of every env. Each measurement runs in a fresh subprocess; rounds are
interleaved; the ratio is the component's rate over the unrandomized env's of the same round,
then the median over rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from benchmark_sections.common import rounds, worker_command

NAME = "visual_dr"
USAGE = """\
    --visual-dr       randomization="visual": images/s (step and resets included) of each component
                      (lights, colours & textures, cameras, image noise, distractors, all) against
                      none, SO100Lift-v1 and FrankaLift-v1, 16 envs; --visual-dr-size: camera size"""
TASKS = ("SO100Lift-v1", "FrankaLift-v1")
COMPONENTS = ("none", "lights", "colours & textures", "camera pose & fov", "image noise", "distractors",
              "all (the preset)")
NUM_ENVS, STEPS, EPISODE_STEPS = 16, 60, 20


def add_arguments(parser) -> None:
    parser.add_argument("--visual-dr", action="store_true", help="measure the visual randomization's cost (above)")
    parser.add_argument("--visual-dr-size", type=int, default=64, help="camera width and height [px] (default 64)")
    parser.add_argument("--visual-dr-config", default=None, help=argparse.SUPPRESS)  # one measurement's config


def requested(args) -> bool:
    return bool(args.visual_dr)


def component_of(param: str) -> str:
    """The component (``COMPONENTS``) a visual table entry's parameter belongs to."""
    if param.startswith("lights."):
        return "lights"
    if param.startswith("visual_distractors."):
        return "distractors"
    if param.startswith("sensor_cameras."):
        return "camera pose & fov" if param.endswith((".pose_jitter", ".fov")) else "image noise"
    return "colours & textures"  # props' and the floor's colours and textures


def component_table(env_cls, component: str) -> tuple:
    """The entries of ``env_cls``'s visual table that randomize ``component``: all for the last
    row, none for ``"none"``."""
    if component == COMPONENTS[-1]:
        return tuple(env_cls.visual_randomization)
    return tuple(t for t in env_cls.visual_randomization if component_of(t.param) == component)


def measure(task: str, component: str, size: int, steps: int) -> dict:
    """One configuration in this process: ``{"wall": images/s, "cpu": images per CPU-second}``."""
    import resource

    import numpy as np
    import torch

    import simulo_envs  # noqa: F401
    from simulo_envs.envs.registration import REGISTERED

    cls = REGISTERED[task]
    env = cls(num_envs=NUM_ENVS, obs_mode="rgb", sensor_configs={"width": size, "height": size},
              randomization=component_table(cls, component))
    rng = np.random.default_rng(0)
    low, high = env.single_action_space.low, env.single_action_space.high
    cameras = len(env.sensor_cameras)
    env.reset(seed=0)

    def frame(k: int) -> None:
        env.step(torch.as_tensor(rng.uniform(low, high, (NUM_ENVS, len(low))), dtype=torch.float32))
        due = np.flatnonzero((np.arange(NUM_ENVS) + k) % EPISODE_STEPS == 0)  # staggered episode ends
        if len(due):
            env.reset(options={"env_idx": due})

    for k in range(2):
        frame(k)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    start, cpu = time.perf_counter(), usage.ru_utime + usage.ru_stime
    for k in range(steps):
        frame(k)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    elapsed, cpu = time.perf_counter() - start, usage.ru_utime + usage.ru_stime - cpu
    env.close()
    images = NUM_ENVS * cameras * steps
    return {"wall": images / elapsed, "cpu": images / cpu}


def _run(task: str, component: str, size: int) -> dict:
    command = worker_command("visual_dr", NUM_ENVS, STEPS, size) + ["--visual-dr-config", json.dumps([task, component])]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measurement {task} {component} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _worker(args) -> dict:
    task, component = json.loads(args.visual_dr_config)
    return measure(task, component, args.size, args.steps)


MEASUREMENTS = {"visual_dr": _worker}


def run(args) -> list[dict]:
    configs = [(task, component, args.visual_dr_size) for task in TASKS for component in COMPONENTS]
    results = rounds(configs, args.rounds, lambda c: f"{c[0]} {c[1]} {c[2]}px", run=_run)
    print(f"\n{'task':14s} {'component':20s} {'images/s':>9s} {'x none':>7s} {'images/CPU-s':>12s} {'x none':>7s}"
          f"   ({NUM_ENVS} envs, {args.visual_dr_size}x{args.visual_dr_size}, step and resets included)")
    rows = []
    for task, component, size in configs:
        runs, ref = results[(task, component, size)], results[(task, "none", size)]
        row = {"env_id": task, "component": component, "size": size, "num_envs": NUM_ENVS, "rounds": runs}
        for metric in ("wall", "cpu"):
            row[metric] = statistics.median(r[metric] for r in runs)
            row[f"{metric}_ratio"] = statistics.median(a[metric] / b[metric] for a, b in zip(runs, ref))
        rows.append(row)
        print(f"{task:14s} {component:20s} {row['wall']:>9.1f} {row['wall_ratio']:>7.2f} {row['cpu']:>12.1f} "
              f"{row['cpu_ratio']:>7.2f}", flush=True)
    sys.stdout.flush()
    return rows
