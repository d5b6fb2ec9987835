"""``--raw``: one step of FrankaLift-v1 against a raw SAPIEN loop over the same scene, and
against that loop plus the least work a step must add (the floor: checks, controller, fault
check, contacts, reward, torch outputs), at one env and 16 (or the ``--num-envs`` given).
"""

from __future__ import annotations

import os
import time
from typing import Optional

from benchmark_sections.common import median, rounds, run_worker

NAME = "raw"
USAGE = """\
    --raw             one env (and 16; or the --num-envs given) against a raw SAPIEN loop over the
                      same scene, and against that loop plus the least work a step must add (the
                      floor: checks, controller, fault check, contacts, reward, torch outputs);
                      --paired: our step against the floor's in one process, blocks alternated
                      (one env, or the --num-envs given; 10 blocks per --rounds)"""


def add_arguments(parser) -> None:
    parser.add_argument("--raw", action="store_true", help="measure one env against a raw SAPIEN loop")


def requested(args) -> bool:
    return args.raw


def stage_clock(totals: Optional[list]):
    """``mark(i)``: adds the thread's CPU time since the previous mark (``time.thread_time_ns``)
    to ``totals[i - 1]`` [ns]; ``mark(0)`` only starts the clock. A no-op when ``totals`` is None
    (the steps/s measurements), so the timed loops are the same code with or without stages."""
    if totals is None:
        return lambda i: None
    last = [0]

    def mark(i: int) -> None:
        now = time.thread_time_ns()
        if i:
            totals[i - 1] += now - last[0]
        last[0] = now

    return mark


RAW_STAGES = ("controller", "physics", "state reads")
"""The stages ``measure_raw`` marks (``stages=``)."""
FLOOR_STAGES = ("action check and clip", "controller", "physics", "fault check", "evaluate", "reward", "observation",
                "outputs")
"""The stages ``floor_steps`` marks (``stages=``)."""


def measure_raw(num_envs: int, steps: int, warmup: int = 20, stages: Optional[list] = None) -> float:
    """Env steps/s of a raw SAPIEN loop over FrankaLift-v1's scene (built once by our backend, so
    the physics is the same object for object): per env step and env, read the arm's qpos, set
    its 9 drive targets (qpos + a random increment of at most 0.1 rad, the gripper's mapped to
    [-0.01, 0.04] m), then 5 PhysX steps, then read what the observation needs (qpos, qvel,
    cube pose, TCP pose). No validation, no controller, no reward: the floor any env pays.
    ``stages``: a list of ``len(RAW_STAGES)`` zeros to receive each stage's CPU time [ns] over
    the timed steps (``stage_clock``)."""
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
    start, mark = 0.0, stage_clock(stages)
    for k in range(steps + warmup):
        if k == warmup:
            start = time.perf_counter()
            if stages is not None:
                stages[:] = [0] * len(stages)
        mark(0)
        for i in range(num_envs):
            a = actions[k, i]
            targets = arts[i].get_qpos()[:7] + 0.1 * a[:7]
            for joint, value in zip(joints[i], targets.tolist() + [0.015 + 0.025 * a[7]] * 2):
                joint.set_drive_target(value)
        mark(1)
        for _ in range(5):
            system.step()
        mark(2)
        for i in range(num_envs):
            arts[i].get_qpos(), arts[i].get_qvel(), cubes[i].entity_pose, tcps[i].entity_pose
        mark(3)
    elapsed = time.perf_counter() - start
    env.close()
    return num_envs * steps / elapsed


def measure_floor(num_envs: int, steps: int, warmup: int = 20, stages: Optional[list] = None) -> float:
    """Env steps/s of ``floor_steps`` (the raw loop plus the least work an env step of
    FrankaLift-v1 must add) over ``steps`` steps after ``warmup``. ``stages``: a list of
    ``len(FLOOR_STAGES)`` zeros to receive each stage's CPU time [ns] over the timed steps."""
    run = floor_steps(num_envs, steps + warmup, stages)
    for _ in range(warmup):
        next(run)
    if stages is not None:
        stages[:] = [0] * len(stages)
    start = time.perf_counter()
    for _ in range(steps):
        next(run)
    elapsed = time.perf_counter() - start
    run.close()
    return num_envs * steps / elapsed


def floor_steps(num_envs: int, count: int, stages: Optional[list] = None):
    """A generator: one env step of the floor per ``next()``, at most ``count``; it yields the
    flat observation (numpy (N, 36)). The floor is the raw loop plus the least work an env step
    of FrankaLift-v1 must add, inline in plain numpy with no framework around it: check the
    action (shape, finiteness) and clip it, map it to drive targets (the same affine map,
    clipped to the joint limits), then after the physics read the packed state once, check it
    for faults (finite, speeds, box), query the finger-block contacts, compute success, grasp,
    the reward terms and the flat observation, and return them as torch tensors (obs, reward,
    terminated, truncated and the 13 info entries). Actions: uniform in [-1, 1] from
    ``torch.Generator().manual_seed(0)``, as ``our_steps`` draws them, from ``reset(seed=0)``:
    both do the same physics. ``stages``: a list of ``len(FLOOR_STAGES)`` ints, each stage's CPU
    time [ns] added to it (``stage_clock``). Closing the generator closes the env."""
    import numpy as np
    import torch

    from simulo_envs.sim.contacts import ContactPairQuery
    from simulo_envs.tasks.franka_lift import FrankaLiftEnv, lift_predicates, lift_reward
    from simulo_envs.tensors import numpy_constants

    env = FrankaLiftEnv(num_envs=num_envs)
    env.reset(seed=0)
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
    low, high, k = env._action_low_np, env._action_high_np, numpy_constants(env.cfg)
    origin, spawn_z = env._origin_poses.numpy(), env.block.default_pose[:, 2].numpy()
    # The fault bounds (SimConfig's defaults): box around the origin, 0.577 x the speed limits per component.
    lo = np.c_[origin[:, :3] + (-5, -5, -1), np.full((n, 3), -11.5), np.full((n, 3), -115), np.full((n, 9), -50)]
    hi = np.c_[origin[:, :3] + (5, 5, 5), np.full((n, 3), 11.5), np.full((n, 3), 115), np.full((n, 9), 50)]
    actions = torch.rand(count, n, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1
    system, dt = backend.system, backend.system.timestep
    qpos, mark = backend.qpos(robot._gid), stage_clock(stages)
    try:
        for step in range(count):
            mark(0)
            a = actions[step].numpy()
            if a.shape != (n, 8) or not np.isfinite(a).all():
                raise ValueError("bad action")
            a = np.minimum(np.maximum(a, low), high)
            mark(1)
            targets = (m["_bias"] + a * m["_scale"])[:, m["_action_of_column"]] + qpos * m["_is_delta"]
            np.minimum(np.maximum(targets, m["_low"], out=targets), m["_high"], out=targets)
            for env_joints, row in zip(joints, targets.tolist()):
                for joint, value in zip(env_joints, row):
                    joint.set_drive_target(value)
            mark(2)
            for _ in range(5):
                system.step()
            mark(3)
            packed = np.frombuffer(system.pack(), dtype=np.float32)
            values = packed[checked]
            if not np.isfinite(packed).all() or ((values < lo) | (values > hi)).any():
                raise RuntimeError("fault")
            mark(4)
            qpos, velocity, block_pose = packed[art], packed[qvel], packed[block[:, :7]]
            tcp_pose = np.empty((n, 7), dtype=np.float32)
            for row, link in zip(tcp_pose, tcp):
                pose = link.entity_pose
                row[:3], row[3:] = pose.p, pose.q
            forces = (query.impulses(system.get_contacts()) / dt).astype(np.float32)
            grasped = np.minimum.reduce(np.einsum("ijk,ijk->ij", forces, forces), axis=1) >= 0.25
            success, height_gain, tcp_to_block = lift_predicates(block_pose, tcp_pose, spawn_z, k)
            mark(5)
            reward, terms = lift_reward(np, k, tcp_to_block, height_gain, grasped.astype(np.float32), success)
            mark(6)
            obs = np.concatenate([qpos, velocity, tcp_pose - origin, block_pose - origin, tcp_to_block,
                                  grasped[:, None]], axis=1, dtype=np.float32)
            mark(7)
            info = {key: torch.from_numpy(value) for key, value in (
                ("success", success), ("is_grasped", grasped), ("height_gain", height_gain),
                ("block_pose", block_pose), ("tcp_pose", tcp_pose), ("tcp_to_block", tcp_to_block),
                ("elapsed_steps", np.full(n, step, np.int32)), ("sim_fault", np.zeros(n, bool)),
                ("sim_fault_reason", np.zeros(n, np.int32)), ("sim_fault_count", np.zeros(n, np.int32)))}
            info["reward_terms"] = {key: torch.from_numpy(value) for key, value in terms.items()}
            torch.from_numpy(obs), torch.from_numpy(reward / k.success_reward), torch.from_numpy(success.copy()), \
                torch.from_numpy(np.full(n, step >= 100))
            mark(8)
            yield obs
    finally:
        env.close()


def our_steps(num_envs: int, count: int, built=None):
    """A generator: one ``env.step`` of ``gym.make("FrankaLift-v1")`` per ``next()``, at most
    ``count``, in ``pd_joint_delta_pos`` from ``reset(seed=0)``, with the actions ``floor_steps``
    draws (the same physics); it yields the observation (a tensor (N, 36)). ``built``: called with
    the unwrapped env after that reset, before the first step. Closing it closes the env."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    env = gym.make("FrankaLift-v1", num_envs=num_envs, control_mode="pd_joint_delta_pos")
    env.reset(seed=0)
    if built is not None:
        built(env.unwrapped)
    space = env.unwrapped.single_action_space
    low, high = torch.from_numpy(space.low), torch.from_numpy(space.high)
    actions = low + (high - low) * torch.rand(count, num_envs, low.shape[0], generator=torch.Generator().manual_seed(0))
    try:
        for action in actions:
            yield env.step(action)[0]
    finally:
        env.close()


def measure_paired(num_envs: int, blocks: int, block_steps: int = 30, warmup: int = 20) -> dict:
    """Our env (``our_steps``) and the floor (``floor_steps``) built in this process and stepped
    in turn, ``block_steps`` steps each, for ``blocks`` blocks (which goes first alternates), so
    that the machine's load hits both alike. Returns ``{"ours", "floor"}`` -> CPU us per env step
    of each block (``time.thread_time_ns``: this thread's CPU time, which is all both use), and
    ``"same_obs"``: whether the last observations agreed bit for bit (the same physics).

    The ratio of the two in the same block is what to read: on a shared machine single blocks
    move by tens of percent, in the same direction for both."""
    import numpy as np

    count = warmup + blocks * block_steps
    runs = {"floor": floor_steps(num_envs, count), "ours": our_steps(num_envs, count)}
    last = {}
    for _ in range(warmup):
        for kind, run in runs.items():
            last[kind] = next(run)
    out = {kind: [] for kind in runs}
    clock = time.thread_time_ns
    for block in range(blocks):
        for kind in (("floor", "ours") if block % 2 == 0 else ("ours", "floor")):
            run, start = runs[kind], clock()
            for _ in range(block_steps):
                last[kind] = next(run)
            out[kind].append((clock() - start) / 1000 / (block_steps * num_envs))
    out["same_obs"] = bool(np.array_equal(last["floor"], last["ours"].numpy()))
    for run in runs.values():
        run.close()
    return out


MEASUREMENTS = {
    "raw": lambda args: measure_raw(args.num_envs[0], args.steps),
    "floor": lambda args: measure_floor(args.num_envs[0], args.steps),
    "raw_paired": lambda args: measure_paired(args.num_envs[0], args.size),
}


def run(args) -> list[dict]:
    if args.paired:
        return paired_section(args.rounds * 10, tuple(args.num_envs_given or (1,)))
    return section(args.rounds, tuple(args.num_envs_given or (1, 16)))


def paired_section(blocks: int, sizes: tuple[int, ...] = (1,)) -> list[dict]:
    """``measure_paired`` at each size, in a subprocess of its own: our step over the floor's,
    the median over blocks of the two blocks' ratio (and their spread), and each one's median
    CPU us per env step."""
    rows = []
    print(f"\none step of FrankaLift-v1 against the floor, in one process: {blocks} blocks of 30 steps each, "
          "alternated; CPU us per env step, medians over blocks")
    print(f"{'N':>4s} {'floor':>8s} {'ours':>8s} {'ours - floor':>12s} {'ours / floor':>12s} {'(blocks: min-max)':>18s}"
          f" {'same obs':>9s} {'load':>9s}")
    for n in sizes:
        load = os.getloadavg()[0]
        out = run_worker("raw_paired", n, 0, size=blocks)
        load = [min(load, os.getloadavg()[0]), max(load, os.getloadavg()[0])]
        ratios = [o / f for o, f in zip(out["ours"], out["floor"])]
        row = {"num_envs": n, "blocks": blocks, "floor_us": median(out["floor"]), "ours_us": median(out["ours"]),
               "diff_us": median([o - f for o, f in zip(out["ours"], out["floor"])]), "ratio": median(ratios),
               "ratio_min": min(ratios), "ratio_max": max(ratios), "same_obs": out["same_obs"], "load": load}
        rows.append(row)
        print(f"{n:>4d} {row['floor_us']:>8.1f} {row['ours_us']:>8.1f} {row['diff_us']:>12.1f} {row['ratio']:>12.3f} "
              f"{row['ratio_min']:>9.2f}-{row['ratio_max']:<8.2f} {str(row['same_obs']):>9s} "
              f"{load[0]:>4.1f}-{load[1]:<4.1f}", flush=True)
    return rows


def section(count: int, sizes: tuple[int, ...] = (1, 16)) -> list[dict]:
    """Our env against a raw SAPIEN loop over the same scene, and against that loop plus the least
    work a step must add (``measure_floor``), at each batch size in ``sizes``."""
    steps = {n: max(125, 1500 // n) for n in sizes}
    configs = [(kind, n, steps[n]) for n in sizes for kind in ("simulo", "raw", "floor")]
    results = rounds(configs, count, lambda c: f"{c[0]} N={c[1]}")
    rows = []
    print(f"\n{'one step of FrankaLift-v1':28s} {'N':>4s} {'raw SAPIEN steps/s':>18s} {'floor':>8s} {'ours':>8s} "
          f"{'floor x raw':>11s} {'cost x raw':>10s}")
    for n in sizes:
        raw, floor, ours = (median(results[(kind, n, steps[n])]) for kind in ("raw", "floor", "simulo"))
        rows.append({"num_envs": n, "raw_steps_per_second": raw, "floor_steps_per_second": floor,
                     "steps_per_second": ours, "floor_vs_raw": raw / floor, "cost_vs_raw": raw / ours,
                     "rounds": {kind: results[(kind, n, steps[n])] for kind in ("raw", "floor", "simulo")}})
        print(f"{'pd_joint_delta_pos, random':28s} {n:>4d} {raw:>18.0f} {floor:>8.0f} {ours:>8.0f} {raw / floor:>11.2f} "
              f"{raw / ours:>10.2f}")
    return rows
