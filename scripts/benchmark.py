"""Env steps per second: FrankaLift-v1 (physx_cpu) against ManiSkill's PickCube-v1, same run.

    python scripts/benchmark.py             # table + ratios, median of 3 rounds
    python scripts/benchmark.py --json      # last line: the results as JSON
    python scripts/benchmark.py --render    # also: rendering frames per second (lavapipe on CPU)

Sections measured instead of the ManiSkill table when asked for (any combination):

    --workers 1 2     the vector env at N = 64 and 128 envs with P = 1 and 2 worker processes
                      (random actions, autoreset), stepped side by side in alternating blocks of
                      10 steps in one process per round: env steps/s, ratio to P = 1 (per round,
                      then the median), start-up time, resident memory per worker, and the
                      exchange cost per step; and, as the ceiling of the machine, P independent
                      in-process envs of N / P envs each stepping at the same time (no exchange)
    --raw             one env (and 16; or the --num-envs given) against a raw SAPIEN loop over the
                      same scene, and against that loop plus the least work a step must add (the
                      floor: checks, controller, fault check, contacts, reward, torch outputs)
    --contacts        N = 128 with the scripted expert (grasps: contact-heavy) and random actions
    --isolation       shared PhysX system against one system per env (``isolate_envs``)

Each measurement runs in its own subprocess (fresh PhysX globals, no cross-talk); rounds are
interleaved so machine noise hits every configuration alike. Both envs get uniform random
actions in ``pd_joint_delta_pos`` (and, for one env, ``pd_ee_delta_pos``) with state
observations and no resets (a pure step rate).
Env steps/s counts every env: ``num_envs * steps / seconds``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def sim_backend_type(value: str) -> str:
    """``--sim-backend``: checked in one line by simulo_envs (imported here only, so that the
    ManiSkill workers import nothing of ours)."""
    from simulo_envs.sim import sim_backend_arg

    return sim_backend_arg(value)


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
               sim_backend: str = "physx_cpu", workers: tuple = ()):
    """Run one measurement in a fresh subprocess; returns its last stdout line (a float or JSON).
    ``kind="ceiling"``: ``size`` independent processes at once (``run_concurrent``);
    ``kind="paired"``: the worker counts ``workers`` side by side (``measure_paired``)."""
    if kind == "ceiling":
        return run_concurrent(num_envs // size, steps, size)
    command = _command(kind, num_envs, steps, size, control_mode, sim_backend)
    if workers:
        command += ["--workers", *map(str, workers)]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measurement {kind} N={num_envs} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _command(kind: str, num_envs: int, steps: int, size: int = 0, control_mode: str = "pd_joint_delta_pos",
             sim_backend: str = "physx_cpu") -> list[str]:
    return [sys.executable, __file__, "--worker", kind, "--num-envs", str(num_envs), "--steps", str(steps),
            "--size", str(size), "--control-mode", control_mode, "--sim-backend", sim_backend]


def run_concurrent(num_envs: int, steps: int, copies: int) -> dict:
    """``copies`` independent processes, each an in-process vector env of ``num_envs`` envs,
    stepping at the same time (they start timing together, after a file barrier): the summed
    env steps/s is what the machine's cores give with no exchange at all."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="simulo_bench_") as barrier:
        extra = ["--barrier", barrier, "--copies", str(copies)]
        procs = [subprocess.Popen(_command("vector", num_envs, steps, 1) + extra, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(copies)]
        outs = [p.communicate() for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("concurrent measurement failed:\n" + "\n".join(err[-2000:] for _, err in outs))
    each = [json.loads(out.strip().splitlines()[-1])["steps_per_second"] for out, _ in outs]
    return {"steps_per_second": sum(each), "each": each}


def _wait_barrier(barrier: str, copies: int, timeout: float = 300.0) -> None:
    """Mark this process ready in directory ``barrier``; return once ``copies`` are."""
    open(os.path.join(barrier, str(os.getpid())), "w").close()
    deadline = time.monotonic() + timeout
    while len(os.listdir(barrier)) < copies:
        if time.monotonic() > deadline:
            raise TimeoutError("the other measurement processes never got ready")
        time.sleep(0.001)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def measure_raw(num_envs: int, steps: int, warmup: int = 20) -> float:
    """Env steps/s of a raw SAPIEN loop over FrankaLift-v1's scene (built once by our backend, so
    the physics is the same object for object): per env step and env, read the arm's qpos, set
    its 9 drive targets (qpos + a random increment of at most 0.1 rad, the gripper's mapped to
    [-0.01, 0.04] m), then 5 PhysX steps, then read what the observation needs (qpos, qvel,
    cube pose, TCP pose). No validation, no controller, no reward: the floor any env pays."""
    import numpy as np
    import sapien.physx as physx

    from simulo_envs.tasks.franka_lift import FrankaLiftEnv

    env = FrankaLiftEnv(num_envs=num_envs)
    backend = env.backend
    group = backend.articulation_info(env.agent.robot._gid)
    arts, joints = group.articulations, group.joints
    tcps = [art.find_link_by_name("panda_hand_tcp") for art in arts]
    cubes = [next(e for e in scene.entities if e.name.startswith("Block")).find_component_by_type(
        physx.PhysxRigidDynamicComponent) for scene in backend.scenes]
    system = backend.system
    actions = np.random.default_rng(0).uniform(-1, 1, (steps + warmup, num_envs, 8))
    start = 0.0
    for k in range(steps + warmup):
        if k == warmup:
            start = time.perf_counter()
        for i in range(num_envs):
            a = actions[k, i]
            targets = arts[i].get_qpos()[:7] + 0.1 * a[:7]
            for joint, value in zip(joints[i], targets.tolist() + [0.015 + 0.025 * a[7]] * 2):
                joint.set_drive_target(value)
        for _ in range(5):
            system.step()
        for i in range(num_envs):
            arts[i].get_qpos(), arts[i].get_qvel(), cubes[i].entity_pose, tcps[i].entity_pose
    elapsed = time.perf_counter() - start
    env.close()
    return num_envs * steps / elapsed


def measure_floor(num_envs: int, steps: int, warmup: int = 20) -> float:
    """Env steps/s of the raw loop plus the least work an env step of FrankaLift-v1 must add,
    inline in plain numpy with no framework around it: check the action (shape, finiteness) and
    clip it, map it to drive targets (the same affine map, clipped to the joint limits), then after
    the physics read the packed state once, check it for faults (finite, speeds, box), query the
    finger-block contacts, compute success, grasp, the reward terms and the flat observation, and
    return them as torch tensors (obs, reward, terminated, truncated and the 13 info entries)."""
    import numpy as np
    import torch

    from simulo_envs.sim.contacts import ContactPairQuery
    from simulo_envs.tasks.franka_lift import FrankaLiftEnv, lift_predicates, lift_reward

    env = FrankaLiftEnv(num_envs=num_envs)
    backend, robot, n = env.backend, env.agent.robot, num_envs
    group = backend.articulation_info(robot._gid)
    joints, links = group.joints, group.links
    fingers = robot._link_indices(("panda_leftfinger", "panda_rightfinger"))
    query = ContactPairQuery([[env_links[i] for i in fingers] for env_links in links],
                             backend._rigid[env.block._gid].components)
    tcp = [env_links[robot._tcp_index] for env_links in links]
    art, block = backend._packed_index("qpos", robot._gid), backend._packed_index("rigid", env.block._gid)
    qvel = backend._packed_index("qvel", robot._gid)
    checked = np.concatenate([block[:, [0, 1, 2, 7, 8, 9, 10, 11, 12]], qvel], 1)  # position, v, w, qvel
    m = env.agent.controller._np
    low, high, k = env._action_low_np, env._action_high_np, env._k_np
    origin, spawn_z = env._origin_np, env._spawn_z_np
    # The fault bounds (SimConfig's defaults): box around the origin, 0.577 x the speed limits per component.
    lo = np.c_[origin[:, :3] + (-5, -5, -1), np.full((n, 3), -11.5), np.full((n, 3), -115), np.full((n, 9), -50)]
    hi = np.c_[origin[:, :3] + (5, 5, 5), np.full((n, 3), 11.5), np.full((n, 3), 115), np.full((n, 9), 50)]
    actions = torch.rand(steps + warmup, n, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1
    system, dt, start = backend.system, backend.system.timestep, 0.0
    qpos = backend.qpos(robot._gid)
    for step in range(steps + warmup):
        if step == warmup:
            start = time.perf_counter()
        a = actions[step].numpy()
        if a.shape != (n, 8) or not np.isfinite(a).all():
            raise ValueError("bad action")
        a = np.minimum(np.maximum(a, low), high)
        targets = (m["_bias"] + a * m["_scale"])[:, m["_action_of_column"]] + qpos * m["_is_delta"]
        np.minimum(np.maximum(targets, m["_low"], out=targets), m["_high"], out=targets)
        for env_joints, row in zip(joints, targets.tolist()):
            for joint, value in zip(env_joints, row):
                joint.set_drive_target(value)
        for _ in range(5):
            system.step()
        packed = np.frombuffer(system.pack(), dtype=np.float32)
        values = packed[checked]
        if not np.isfinite(packed).all() or ((values < lo) | (values > hi)).any():
            raise RuntimeError("fault")
        qpos, velocity, block_pose = packed[art], packed[qvel], packed[block[:, :7]]
        tcp_pose = np.empty((n, 7), dtype=np.float32)
        for row, link in zip(tcp_pose, tcp):
            pose = link.entity_pose
            row[:3], row[3:] = pose.p, pose.q
        forces = (query.impulses(system.get_contacts()) / dt).astype(np.float32)
        grasped = np.minimum.reduce(np.einsum("ijk,ijk->ij", forces, forces), axis=1) >= 0.25
        success, height_gain, tcp_to_block = lift_predicates(block_pose, tcp_pose, spawn_z, k)
        reward, terms = lift_reward(np, k, tcp_to_block, height_gain, grasped.astype(np.float32), success)
        obs = np.concatenate([qpos, velocity, tcp_pose - origin, block_pose - origin, tcp_to_block, grasped[:, None]],
                             axis=1, dtype=np.float32)
        info = {key: torch.from_numpy(value) for key, value in (
            ("success", success), ("is_grasped", grasped), ("height_gain", height_gain), ("block_pose", block_pose),
            ("tcp_pose", tcp_pose), ("tcp_to_block", tcp_to_block), ("elapsed_steps", np.full(n, step, np.int32)),
            ("sim_fault", np.zeros(n, bool)), ("sim_fault_reason", np.zeros(n, np.int32)),
            ("sim_fault_count", np.zeros(n, np.int32)))}
        info["reward_terms"] = {key: torch.from_numpy(value) for key, value in terms.items()}
        torch.from_numpy(obs), torch.from_numpy(reward / k.success_reward), torch.from_numpy(success.copy()), \
            torch.from_numpy(np.full(n, step >= 100))
    elapsed = time.perf_counter() - start
    env.close()
    return num_envs * steps / elapsed


def measure_vector(num_envs: int, num_workers: int, steps: int, warmup: int = 10, barrier: str = None,
                   copies: int = 1) -> dict:
    """The vector env (autoreset, random actions) at ``num_workers`` processes, alone in this
    process: env steps/s (the ceiling's building block: see ``run_concurrent``)."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    venv = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        num_workers=num_workers)
    venv.reset(seed=0)
    actions = torch.rand(steps + warmup, num_envs, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1
    for k in range(warmup):
        venv.step(actions[k])
    if barrier:
        _wait_barrier(barrier, copies)
    begin = time.perf_counter()
    for k in range(warmup, warmup + steps):
        venv.step(actions[k])
    elapsed = time.perf_counter() - begin
    venv.close()
    return {"steps_per_second": num_envs * steps / elapsed}


def measure_paired(num_envs: int, workers: list[int], blocks: int, block_steps: int = 10, warmup: int = 10) -> dict:
    """One vector env per worker count in ``workers`` (autoreset, uniform random actions), all in
    this process, stepped in alternating blocks of ``block_steps`` steps (the order reversed every
    other block), each block the same actions for every env: machine noise, which on a shared VM
    drifts by tens of percent within a minute, hits every worker count alike, so the ratio of their
    summed times is a fair comparison. Returns per worker count: env steps/s over all blocks,
    start-up seconds (making the env: for P > 1 spawning the workers, importing, building), the
    parent's resident memory [MB] right after making it (sharded envs are made first, so this is
    the parent of the workers alone), each worker's resident memory [MB], and the exchange cost
    per step: the parent's wall time per step minus the busiest worker's time spent serving it."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    envs, out = {}, {}
    for p in sorted(workers, reverse=True):
        begin = time.perf_counter()
        envs[p] = gym.make_vec("FrankaLift-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                               num_workers=p)
        out[p] = {"startup_s": time.perf_counter() - begin, "parent_rss_mb": _rss_mb(os.getpid()), "seconds": 0.0}
    actions = torch.rand(warmup + blocks * block_steps, num_envs, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1
    busy = {}
    for p, venv in envs.items():
        venv.reset(seed=0)
        for k in range(warmup):
            venv.step(actions[k])
        stats = getattr(venv.env, "worker_stats", None)
        busy[p] = (stats, [0.0] * p)
    order = sorted(envs)
    for b in range(blocks):
        for p in (order if b % 2 == 0 else order[::-1]):
            venv, stats = envs[p], busy[p][0]
            before = stats() if stats else None
            begin = time.perf_counter()
            for k in range(warmup + b * block_steps, warmup + (b + 1) * block_steps):
                venv.step(actions[k])
            out[p]["seconds"] += time.perf_counter() - begin
            if stats:
                after = stats()
                busy[p] = (stats, [t + a["busy_s"] - s["busy_s"] for t, s, a in zip(busy[p][1], before, after)])
    steps = blocks * block_steps
    for p, venv in envs.items():
        row = out[p]
        row["steps_per_second"] = num_envs * steps / row["seconds"]
        stats = busy[p][0]
        if stats:
            row["worker_rss_mb"] = [_rss_mb(s["pid"]) for s in stats()]
            row["exchange_ms_per_step"] = 1e3 * (row["seconds"] - max(busy[p][1])) / steps
            row["busy_ms"] = [1e3 * b / steps for b in busy[p][1]]
        venv.close()
    return {str(p): row for p, row in out.items()}


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


def _rounds(configs: list, rounds: int, label, **kwargs) -> dict:
    """Run every config once per round, interleaved; returns config -> list of results."""
    results: dict = {c: [] for c in configs}
    for r in range(rounds):
        for config in configs:
            results[config].append(run_worker(*config, **kwargs))
            print(f"round {r + 1}/{rounds}: {label(config)} -> {results[config][-1]}", file=sys.stderr)
    return results


def _median(values: list, key: str = None) -> float:
    return statistics.median(v[key] if key else v for v in values)


def section_workers(workers: list[int], rounds: int) -> list[dict]:
    """N = 64 and 128 at each P in ``workers``, side by side in one process per round
    (``measure_paired``); ratios against the first P, per round, then the median; and, for each
    P > 1, P independent in-process envs of N / P envs stepping at the same time (the ceiling)."""
    configs = [("paired", n, 12800 // (10 * n)) for n in (64, 128)]
    configs += [("ceiling", n, 6400 // n, p) for n in (64, 128) for p in workers if p > 1]
    results = _rounds(configs, rounds, lambda c: f"{c[0]} N={c[1]}" + (f" P={c[3]}" if len(c) > 3 else ""),
                      workers=tuple(workers))
    rows = []
    print(f"\n{'FrankaLift-v1 vector env':24s} {'N':>4s} {'P':>3s} {'env steps/s':>12s} {f'x P={workers[0]}':>7s} "
          f"{'start-up s':>10s} {'parent MB':>9s} {'MB per worker':>13s} {'exchange ms/step':>16s}")
    for n in (64, 128):
        paired = results[("paired", n, 12800 // (10 * n))]
        for p in workers:
            runs = [r[str(p)] for r in paired]
            rate = _median(runs, "steps_per_second")
            ratios = [r[str(p)]["steps_per_second"] / r[str(workers[0])]["steps_per_second"] for r in paired]
            worker_mb = statistics.median(statistics.mean(r["worker_rss_mb"]) for r in runs) if p > 1 else None
            exchange = _median(runs, "exchange_ms_per_step") if p > 1 else None
            row = {"num_envs": n, "num_workers": p, "steps_per_second": rate, "ratio": statistics.median(ratios),
                   "ratios": ratios, "startup_s": _median(runs, "startup_s"),
                   "parent_rss_mb": _median(runs, "parent_rss_mb"), "worker_rss_mb": worker_mb,
                   "exchange_ms_per_step": exchange, "rounds": runs}
            rows.append(row)
            print(f"{'':24s} {n:>4d} {p:>3d} {rate:>12.0f} {row['ratio']:>7.2f} {row['startup_s']:>10.1f} "
                  f"{row['parent_rss_mb']:>9.0f} {worker_mb or 0:>13.0f} {exchange or 0:>16.2f}")
        base = _median([r[str(workers[0])] for r in paired], "steps_per_second")
        for p in workers[1:]:
            ceiling = _median(results[("ceiling", n, 6400 // n, p)], "steps_per_second")
            sharded = next(r for r in rows if r["num_envs"] == n and r["num_workers"] == p)
            sharded["ceiling_steps_per_second"] = ceiling
            sharded["share_of_ceiling"] = sharded["steps_per_second"] / ceiling
            print(f"{f'  {p} lone processes, N/{p} each':24s} {n:>4d} {'-':>3s} {ceiling:>12.0f} {ceiling / base:>7.2f}   "
                  f"(P={p} reaches {sharded['share_of_ceiling']:.0%} of it)")
    print(f"x P={workers[0]}: median over rounds of the per-round ratio (both stepped side by side in one process); "
          f"the ceiling's ratio is against the median P={workers[0]} rate, measured in other processes")
    return rows


def section_raw(rounds: int, sizes: tuple[int, ...] = (1, 16)) -> list[dict]:
    """Our env against a raw SAPIEN loop over the same scene, and against that loop plus the least
    work a step must add (``measure_floor``), at each batch size in ``sizes``."""
    steps = {n: max(125, 1500 // n) for n in sizes}
    configs = [(kind, n, steps[n]) for n in sizes for kind in ("simulo", "raw", "floor")]
    results = _rounds(configs, rounds, lambda c: f"{c[0]} N={c[1]}")
    rows = []
    print(f"\n{'one step of FrankaLift-v1':28s} {'N':>4s} {'raw SAPIEN steps/s':>18s} {'floor':>8s} {'ours':>8s} "
          f"{'floor x raw':>11s} {'cost x raw':>10s}")
    for n in sizes:
        raw, floor, ours = (_median(results[(kind, n, steps[n])]) for kind in ("raw", "floor", "simulo"))
        rows.append({"num_envs": n, "raw_steps_per_second": raw, "floor_steps_per_second": floor,
                     "steps_per_second": ours, "floor_vs_raw": raw / floor, "cost_vs_raw": raw / ours,
                     "rounds": {kind: results[(kind, n, steps[n])] for kind in ("raw", "floor", "simulo")}})
        print(f"{'pd_joint_delta_pos, random':28s} {n:>4d} {raw:>18.0f} {floor:>8.0f} {ours:>8.0f} {raw / floor:>11.2f} "
              f"{raw / ours:>10.2f}")
    return rows


def section_contacts(rounds: int, num_envs: int = 128) -> list[dict]:
    """The scripted expert (grasps) against random actions at ``num_envs`` envs."""
    configs = [(policy, num_envs, 60) for policy in ("random", "expert")]
    results = _rounds(configs, rounds, lambda c: f"{c[0]} N={c[1]}")
    random_rate = _median(results[configs[0]])
    print(f"\n{'pd_ee_delta_pos, N=%d' % num_envs:28s} {'env steps/s':>12s} {'x random':>9s}")
    rows = []
    for config in configs:
        rate = _median(results[config])
        rows.append({"policy": config[0], "num_envs": num_envs, "steps_per_second": rate, "ratio": rate / random_rate})
        print(f"{config[0] + ' actions':28s} {rate:>12.0f} {rate / random_rate:>9.2f}")
    return rows


def section_isolation(rounds: int) -> list[dict]:
    """One shared PhysX system against one per env (``isolate_envs``), random actions."""
    configs = [(kind, n, 2000 // n) for n in (16, 64) for kind in ("random", "isolated")]
    results = _rounds(configs, rounds, lambda c: f"{c[0]} N={c[1]}")
    print(f"\n{'pd_ee_delta_pos, random':28s} {'N':>4s} {'shared':>8s} {'isolated':>9s} {'x shared':>9s}")
    rows = []
    for n in (16, 64):
        shared, isolated = _median(results[("random", n, 2000 // n)]), _median(results[("isolated", n, 2000 // n)])
        rows.append({"num_envs": n, "shared_steps_per_second": shared, "isolated_steps_per_second": isolated,
                     "ratio": isolated / shared})
        print(f"{'':28s} {n:>4d} {shared:>8.0f} {isolated:>9.0f} {isolated / shared:>9.2f}")
    return rows


def run_measurement(args) -> None:
    """The ``--worker`` side: one measurement in this process, printed as JSON."""
    n = args.num_envs[0]
    if args.worker == "render":
        result = measure_render(n, args.size, args.steps)
    elif args.worker == "raw":
        result = measure_raw(n, args.steps)
    elif args.worker == "floor":
        result = measure_floor(n, args.steps)
    elif args.worker == "paired":
        result = measure_paired(n, args.workers, blocks=args.steps)
    elif args.worker == "vector":
        result = measure_vector(n, args.size, args.steps, barrier=args.barrier, copies=args.copies)
    elif args.worker in ("expert", "random", "isolated"):
        result = measure_policy(n, args.steps, "expert" if args.worker == "expert" else "random",
                                isolate=args.worker == "isolated")
    else:
        result = measure(args.worker, n, args.steps, args.control_mode, sim_backend=args.sim_backend)
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per configuration; the median is reported (default 3)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=None,
                        help="FrankaLift-v1 batch sizes to measure (default 1 4 16 64; with --raw: 1 16)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--render", action="store_true", help="also measure rendering frames per second")
    parser.add_argument("--sim-backend", default="physx_cpu", type=sim_backend_type,
                        help="FrankaLift-v1's backend in the ManiSkill table: physx_cpu (default) or physx_cuda_emulated "
                             "(the GPU code path on the CPU); on a GPU machine use scripts/gpu_check.py, which runs "
                             "ManiSkill on its GPU too")
    parser.add_argument("--workers", type=int, nargs="+", metavar="P",
                        help="measure the vector env at N = 64 and 128 with these worker counts (e.g. 1 2)")
    parser.add_argument("--raw", action="store_true", help="measure one env against a raw SAPIEN loop")
    parser.add_argument("--contacts", action="store_true", help="measure the expert against random actions at N = 128")
    parser.add_argument("--isolation", action="store_true", help="measure isolate_envs against the shared system")
    parser.add_argument("--worker", choices=["simulo", "maniskill", "render", "raw", "floor", "vector", "expert", "random",
                                             "isolated", "paired"], help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--control-mode", default="pd_joint_delta_pos", help=argparse.SUPPRESS)
    parser.add_argument("--barrier", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--copies", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = args.num_envs
    args.num_envs = sizes or [1, 4, 16, 64]
    if args.rounds < 1 or min(args.num_envs) < 1 or (args.workers and min(args.workers) < 1):
        parser.error("--rounds, every --num-envs and every --workers must be >= 1")
    if args.worker:
        run_measurement(args)
        return
    report: dict = {}
    if args.workers:
        report["workers"] = section_workers(args.workers, args.rounds)
    if args.raw:
        report["raw"] = section_raw(args.rounds, tuple(sizes or (1, 16)))
    if args.contacts:
        report["contacts"] = section_contacts(args.rounds)
    if args.isolation:
        report["isolation"] = section_isolation(args.rounds)
    if not report:
        report = maniskill_table(args)
    if args.json:
        print(json.dumps(report))


def maniskill_table(args) -> dict:
    """FrankaLift-v1 at each ``--num-envs`` against ManiSkill's PickCube-v1 at one env (and rendering)."""
    joint, ee = "pd_joint_delta_pos", "pd_ee_delta_pos"
    configs = [("maniskill", 1, 400, 0, joint)] + [("simulo", n, max(200, 2400 // n), 0, joint) for n in args.num_envs]
    configs += [("maniskill", 1, 200, 0, ee), ("simulo", 1, 400, 0, ee)]
    results = _rounds(configs, args.rounds, lambda c: f"{c[0]:9s} {c[4]:18s} N={c[1]:<3d} env steps/s",
                      sim_backend=args.sim_backend)
    rows = []
    print(f"\n{'env':28s} {'control mode':18s} {'num_envs':>8s} {'env steps/s (median)':>21s} {'x ManiSkill N=1':>16s}")
    for mode in (joint, ee):
        ms_config = next(c for c in configs if c[0] == "maniskill" and c[4] == mode)
        ms = _median(results[ms_config])
        print(f"{'ManiSkill PickCube-v1':28s} {mode:18s} {1:>8d} {ms:>21.0f} {1.0:>16.2f}")
        rows.append({"env": "PickCube-v1 (ManiSkill)", "control_mode": mode, "num_envs": 1, "steps_per_second": ms,
                     "ratio_vs_maniskill_1": 1.0, "rounds": results[ms_config]})
        for config in configs:
            kind, n, _, _, m = config
            if kind != "simulo" or m != mode:
                continue
            med = _median(results[config])
            rows.append({"env": "FrankaLift-v1", "control_mode": m, "num_envs": n, "steps_per_second": med,
                         "ratio_vs_maniskill_1": med / ms, "rounds": results[config]})
            print(f"{'simulo_envs FrankaLift-v1':28s} {m:18s} {n:>8d} {med:>21.0f} {med / ms:>16.2f}")
    render_rows = []
    if args.render:
        print(f"\n{'rendering (obs_mode=rgb, step included)':40s} {'num_envs':>8s} {'images/s (median)':>18s}")
        for n, size in ((1, 128), (4, 128), (16, 128), (1, 512)):
            frames = 20 if size == 512 else max(10, 60 // n)
            fps = statistics.median(run_worker("render", n, frames, size) for _ in range(args.rounds))
            render_rows.append({"num_envs": n, "size": size, "images_per_second": fps})
            print(f"{f'{size}x{size}':40s} {n:>8d} {fps:>18.1f}")
    return {"steps": rows, "render": render_rows}


if __name__ == "__main__":
    main()
