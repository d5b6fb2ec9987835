"""Soak test: a long run with random actions, partial resets and reconfigurations, then repeated
make/close cycles; prints a JSON summary and exits 1 when a check fails.

    python scripts/soak.py                                  # the full soak (below), then the cycles
    python scripts/soak.py --env-steps 2000 --cycles 5      # a short version (the test suite's)
    python scripts/soak.py --cycles 0                       # the long run only
    python scripts/soak.py --env-steps 0 --no-render        # state-only make/close cycles only
    python scripts/soak.py --env-steps 0 --no-state-cycles  # rendering make/close cycles only

Progress (a JSON line on stderr every tenth of the long run and every 20 cycles) tells where a
run stopped early stood.

Long run (``soak``): ``--num-envs`` (16) envs of ``--env`` (FrankaLift-v1) behind the vector env
(same-step autoreset, the task's time limit), ``--env-steps`` (100,000) env steps in total
(``num_envs`` per batched step) with uniform random actions; after each step every env is
reset with probability ``--reset-prob`` (a partial reset of those envs), and every
``--reconfigure-every`` batched steps the whole scene is rebuilt. Checks: resident memory at
the end at most 10 % above its value after the warm-up (the first 10 % of the steps), no
non-finite value in any observation, reward or info tensor, no fault (``info["sim_fault"]``)
in this healthy run, no more file descriptors or threads at the end than after the warm-up.

Cycles (``cycles``): ``--cycles`` (200) times make an env (2 envs), reset it, step it twice,
close it; state-only and, unless ``--no-render``, rendering (``obs_mode="rgb"`` with
``render_mode="rgb_array"``: sensor and human cameras). Counted after 10 warm-up cycles and
at the end: resident memory (at most 5 % growth), file descriptors, threads and, for the
renderer, the objects SAPIEN and Vulkan hold (must not grow; how they are counted:
``render_objects``), and memory mappings (at most ``MAPPINGS_SLACK`` more).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy as np
import torch


# ---------------------------------------------------------------- process and renderer counts
MAPPINGS_SLACK = 8
"""Memory mappings may come and go by a few without a leak (glibc maps large allocations on
their own and keeps up to 8 arenas per core; measured: 2 more over the 11th and 12th state-only cycles); a
leaked scene, renderer or shared library would add at least one per cycle, hundreds over a run."""

def process_counts() -> dict:
    """Resident memory [MiB], open file descriptors, threads and memory mappings of this process
    (Linux ``/proc/self``)."""
    with open("/proc/self/statm") as f:
        rss_pages = int(f.read().split()[1])
    with open("/proc/self/maps") as f:
        maps = f.read().splitlines()
    return {
        "rss_mb": round(rss_pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1),
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": len(os.listdir("/proc/self/task")),
        "mappings": len(maps),
    }


def render_objects() -> dict:
    """What the renderer holds, counted three ways:

    - ``sapien_scenes``: live ``sapien.Scene`` objects (they are tracked by Python's garbage
      collector), and over them ``render_systems`` (each owns a Vulkan scene: buffers,
      descriptor sets), ``cameras`` (each owns Vulkan render targets) and ``render_bodies``
      and ``lights`` held by those render systems;
    - ``vulkan_device_mappings``: memory mappings of the Vulkan driver's device memory. On
      lavapipe (Mesa's CPU Vulkan driver, used where there is no GPU) device memory is mapped
      from memfd files named ``allocation``/``llvmpipe``: a leaked image or buffer leaves one
      more mapping;
    - resident memory (``process_counts``): lavapipe's Vulkan objects live in host memory.

    The probe render system SAPIEN keeps for the life of the process (``sim/render.py``)
    counts as one render system without a scene."""
    import sapien

    scenes = [o for o in gc.get_objects() if issubclass(type(o), sapien.Scene)]  # type(): no proxy's __class__
    systems = [system for system in map(_render_system, scenes) if system is not None]
    with open("/proc/self/maps") as f:
        device_maps = sum(1 for line in f if "memfd:allocation" in line or "memfd:llvmpipe" in line)
    return {
        "sapien_scenes": len(scenes),
        "render_systems": len(systems),
        "cameras": sum(len(s.cameras) for s in systems),
        "render_bodies": sum(len(s.render_bodies) for s in systems),
        "lights": sum(len(s.lights) for s in systems),
        "vulkan_device_mappings": device_maps,
    }


def progress(section: str, **counts) -> None:
    """One JSON line on stderr: where a section stands (a run stopped early still tells)."""
    print(json.dumps({"progress": section, **counts}), file=sys.stderr, flush=True)


def _render_system(scene):
    """The render system of a ``sapien.Scene``, None for a state-only scene."""
    try:
        return scene.render_system
    except RuntimeError:  # SAPIEN: "no system with name [render] is added to scene"
        return None


def _nonfinite(value) -> int:
    """Number of NaN/inf entries in the float tensors of ``value`` (a tensor, dict or list)."""
    if isinstance(value, torch.Tensor):
        return int((~torch.isfinite(value)).sum()) if value.is_floating_point() else 0
    if isinstance(value, dict):
        return sum(_nonfinite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_nonfinite(v) for v in value)
    return 0


# ---------------------------------------------------------------- the long run
def soak(env_id: str, num_envs: int, env_steps: int, reset_prob: float, reconfigure_every: int, seed: int) -> dict:
    import simulo_envs  # noqa: F401
    from simulo_envs.prop import Prop
    from simulo_envs.vector.vector_env import make_vector_env

    venv = make_vector_env(env_id, num_envs=num_envs)
    base = venv.base_env
    rng = np.random.default_rng(seed)
    low, high = venv.single_action_space.low, venv.single_action_space.high
    batched_steps = max(1, env_steps // num_envs)
    warmup = max(1, batched_steps // 10)
    counts = dict(nonfinite=0, fault_steps=0, partial_resets=0, reset_envs=0, reconfigures=0, episodes_ended=0)
    speeds = dict(max_body_speed=0.0, max_joint_speed=0.0)
    start = time.perf_counter()
    obs, info = venv.reset(seed=seed)
    counts["nonfinite"] += _nonfinite(obs) + _nonfinite(info)
    faults_before = base.fault_counts.sum()
    warm = None
    tenth = max(1, batched_steps // 10)
    for t in range(batched_steps):
        if t % tenth == 0 and t:
            progress("soak", env_steps=t * num_envs, **process_counts(), nonfinite=counts["nonfinite"],
                     fault_steps=counts["fault_steps"])
        if t == warmup:
            gc.collect()
            warm = process_counts()
        action = torch.from_numpy(rng.uniform(low, high, (num_envs, len(low))).astype(np.float32))
        obs, reward, terminated, truncated, info = venv.step(action)
        counts["nonfinite"] += _nonfinite(obs) + _nonfinite(reward) + _nonfinite(info)
        counts["fault_steps"] += int(info["sim_fault"].sum())
        counts["episodes_ended"] += int((terminated | truncated).sum())
        if t % 10 == 0:  # the healthy range of speeds, for the limits' documentation
            for obj in base.scene.objects.values():
                if isinstance(obj, Prop):
                    speeds["max_body_speed"] = max(speeds["max_body_speed"], float(obj.state.linear_velocity.norm(dim=1).max()))
            speeds["max_joint_speed"] = max(speeds["max_joint_speed"], float(base.agent.robot.state.qvel.abs().max()))
        chosen = rng.random(num_envs) < reset_prob
        if chosen.any():
            obs, info = venv.reset(options={"env_idx": np.flatnonzero(chosen)})
            counts["nonfinite"] += _nonfinite(obs) + _nonfinite(info)
            counts["partial_resets"] += 1
            counts["reset_envs"] += int(chosen.sum())
        if reconfigure_every and (t + 1) % reconfigure_every == 0:
            obs, info = venv.reset(options={"reconfigure": True})
            base = venv.base_env
            counts["nonfinite"] += _nonfinite(obs) + _nonfinite(info)
            counts["reconfigures"] += 1
    faults = int(base.fault_counts.sum() - faults_before)
    wall = time.perf_counter() - start
    venv.close()
    gc.collect()
    end = process_counts()
    warm = warm or end
    growth = 100.0 * (end["rss_mb"] - warm["rss_mb"]) / warm["rss_mb"]
    result = {
        "env": env_id, "num_envs": num_envs, "env_steps": batched_steps * num_envs, "batched_steps": batched_steps,
        **counts, "faults": faults, **{k: round(v, 3) for k, v in speeds.items()},
        "rss_mb_after_warmup": warm["rss_mb"], "rss_mb_end": end["rss_mb"], "rss_growth_pct": round(growth, 2),
        "fds_after_warmup": warm["fds"], "fds_end": end["fds"],
        "threads_after_warmup": warm["threads"], "threads_end": end["threads"], "wall_s": round(wall, 1),
    }
    result["checks"] = {
        "rss_growth_under_10pct": growth < 10.0,
        "no_nonfinite_values": counts["nonfinite"] == 0,
        "no_faults": faults == 0 and counts["fault_steps"] == 0,
        "no_fd_growth": end["fds"] <= warm["fds"],
        "no_thread_growth": end["threads"] <= warm["threads"],
    }
    return result


# ---------------------------------------------------------------- make/close cycles
def cycles(env_id: str, count: int, render: bool, seed: int) -> dict:
    import gymnasium as gym

    import simulo_envs  # noqa: F401

    kwargs = dict(num_envs=2)
    if render:
        kwargs.update(obs_mode="rgb", render_mode="rgb_array", sensor_configs=dict(width=32, height=32),
                      human_render_camera_configs=dict(width=64, height=64))
    warmup = min(10, max(count - 1, 0))
    warm = None
    start = time.perf_counter()
    for i in range(count):
        if i % 20 == 0 and i:
            progress("rendering" if render else "state", cycles=i, **process_counts(),
                     **(render_objects() if render else {}))
        if i == warmup:
            gc.collect()
            warm = {**process_counts(), **(render_objects() if render else {})}
        env = gym.make(env_id, **kwargs)
        env.reset(seed=seed + i)
        for _ in range(2):
            env.step(env.action_space.sample())
        if render:
            env.render()
        env.close()
        del env
    gc.collect()
    end = {**process_counts(), **(render_objects() if render else {})}
    warm = warm or end
    growth = 100.0 * (end["rss_mb"] - warm["rss_mb"]) / warm["rss_mb"]
    counted = [k for k in end if k not in ("rss_mb", "mappings")]
    result = {"kind": "rendering" if render else "state", "cycles": count, "after_warmup": warm, "end": end,
              "rss_growth_pct": round(growth, 2), "wall_s": round(time.perf_counter() - start, 1)}
    result["checks"] = {"rss_growth_under_5pct": growth < 5.0,
                        **{f"no_{k}_growth": end[k] <= warm[k] for k in counted},
                        f"mappings_growth_at_most_{MAPPINGS_SLACK}": end["mappings"] - warm["mappings"] <= MAPPINGS_SLACK}
    return result


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="FrankaLift-v1", help="registered env id")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--env-steps", type=int, default=100_000, help="env steps in total (0: no long run)")
    parser.add_argument("--reset-prob", type=float, default=0.01, help="per env and step: partial reset")
    parser.add_argument("--reconfigure-every", type=int, default=2000, help="batched steps between rebuilds (0: never)")
    parser.add_argument("--cycles", type=int, default=200, help="make/close cycles of each kind (0: none)")
    parser.add_argument("--no-render", action="store_true", help="skip the rendering cycles (no Vulkan needed)")
    parser.add_argument("--no-state-cycles", action="store_true", help="skip the state-only cycles")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    summary = {}
    if args.env_steps > 0:
        summary["soak"] = soak(args.env, args.num_envs, args.env_steps, args.reset_prob, args.reconfigure_every,
                               args.seed)
    if args.cycles > 0:
        summary["cycles"] = [] if args.no_state_cycles else [cycles(args.env, args.cycles, False, args.seed)]
        if not args.no_render:
            summary["cycles"].append(cycles(args.env, args.cycles, True, args.seed))
    sections = [summary.get("soak")] + summary.get("cycles", [])
    summary["ok"] = all(all(s["checks"].values()) for s in sections if s is not None)
    print(json.dumps(summary, indent=1))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
