"""Check the physx_cuda backend on a machine with a GPU; print one JSON line.

    python scripts/gpu_check.py                      # physx_cuda: contracts, expert, benchmark at 1024 and 4096 envs
    python scripts/gpu_check.py --emulated --num-envs 4 8   # the same on the emulator (CPU), small N

Three parts, in one run:

1. Contracts on the backend: tensors on the device; read-your-writes of prop poses and qpos
   (and the TCP following the qpos without a step); a partial reset changes only the listed
   envs; the same seed gives the same episode start twice; a state dict round trip.
2. The scripted expert on FrankaLift-v1 (``pd_ee_delta_pos``): success rate over one episode per
   env of the first ``--num-envs`` (must be >= 95 %).
3. Env steps per second of FrankaLift-v1 and of ManiSkill's PickCube-v1 (state obs,
   ``pd_joint_delta_pos``, uniform random actions, no resets) at each ``--num-envs``, each in its
   own subprocess, same run. ManiSkill runs on its GPU backend for physx_cuda and on its CPU
   backend (one process, same N) for the emulated check.

Exit status 0 when every check passes, 1 when one fails, 2 when the backend cannot start (the
JSON line then holds the error message, e.g. no CUDA GPU or no PhysX GPU library).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def contract_checks(backend: str, num_envs: int) -> dict:
    """The contract checks of part 1; returns ``{name: bool}``."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401

    env = gym.make("FrankaLift-v1", num_envs=num_envs, sim_backend=backend)
    u = env.unwrapped
    out = {}
    obs, _ = env.reset(seed=1)
    out["tensors_on_device"] = obs.device == u.device and u.block.state.pose.device == u.device
    action = torch.zeros(num_envs, u.single_action_space.shape[0], device=u.device)
    for _ in range(3):
        env.step(action)
    pose = u.block.state.pose
    pose[0, 2] += 0.1
    u.block.set_pose(pose[[0]], [0])
    qpos, tcp = u.agent.robot.state.qpos, u.agent.tcp_pose
    qpos[-1, 0] += 0.3
    u.agent.robot.set_qpos(qpos[[-1]], [num_envs - 1])
    moved = (u.agent.tcp_pose - tcp).abs().amax(1)
    out["read_your_writes"] = bool(torch.allclose(u.block.state.pose, pose, atol=1e-5)
                                   and torch.allclose(u.agent.robot.state.qpos, qpos, atol=1e-5)
                                   and moved[-1] > 0.01 and (num_envs == 1 or moved[:-1].max() == 0))
    before = u.get_state()
    env.reset(options={"env_idx": [0]})
    after = u.get_state()
    out["partial_reset_only_listed"] = bool(torch.equal(after[1:], before[1:]) and not torch.equal(after[0], before[0]))
    first = env.reset(seed=5)[0]
    again = env.reset(seed=5)[0]
    out["seeding_reproducible"] = bool(torch.equal(first, again))
    for _ in range(2):
        env.step(action)
    state = u.get_state_dict()
    env.step(action + 0.5)
    u.set_state_dict(state)
    back = u.get_state_dict()
    out["state_dict_round_trip"] = all(torch.allclose(back[k][p], state[k][p], atol=1e-5) for k in state for p in state[k])
    env.close()
    return out


def expert_success(backend: str, num_envs: int, seed: int = 0) -> float:
    """Success rate of the expert over the first episode of every env (part 2)."""
    import gymnasium as gym
    import torch

    import simulo_envs  # noqa: F401
    from simulo_envs.policies import LiftExpert

    env = gym.make("FrankaLift-v1", num_envs=num_envs, sim_backend=backend, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=seed)
    success = torch.zeros(num_envs, dtype=torch.bool, device=env.unwrapped.device)
    done = torch.zeros_like(success)
    while not bool(done.all()):
        _, _, terminated, truncated, info = env.step(expert.act())
        success |= info["success"] & ~done
        done |= terminated | truncated
    env.close()
    return float(success.float().mean())


def steps_per_second(kind: str, backend: str, num_envs: int, steps: int, warmup: int = 10) -> float:
    """Env steps per second of FrankaLift-v1 (``kind="simulo"``) or ManiSkill's PickCube-v1."""
    import gymnasium as gym
    import torch

    if kind == "simulo":
        import simulo_envs  # noqa: F401

        env = gym.make("FrankaLift-v1", num_envs=num_envs, sim_backend=backend)
    else:
        import mani_skill.envs  # noqa: F401

        env = gym.make("PickCube-v1", num_envs=num_envs, obs_mode="state", control_mode="pd_joint_delta_pos",
                       sim_backend=backend)
    env.reset(seed=0)
    device = env.unwrapped.device
    space = env.unwrapped.single_action_space
    low, high = torch.as_tensor(space.low, device=device), torch.as_tensor(space.high, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    actions = low + (high - low) * torch.rand(steps + warmup, num_envs, low.shape[0], generator=gen, device=device)
    for k in range(warmup):
        env.step(actions[k])
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for k in range(warmup, warmup + steps):
        env.step(actions[k])
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    env.close()
    return num_envs * steps / elapsed


def _worker(kind: str, backend: str, num_envs: int, steps: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--worker", kind, "--backend", backend, "--num-envs", str(num_envs),
                          "--steps", str(steps)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{kind} at N={num_envs} on {backend} failed: {out.stderr.strip().splitlines()[-1:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--emulated", action="store_true", help="check physx_cuda_emulated on the CPU instead")
    parser.add_argument("--device", type=int, default=0, help="CUDA device (default 0)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=None,
                        help="benchmark sizes (default 1024 4096; emulated: 4 8); the first also runs the checks")
    parser.add_argument("--steps", type=int, default=None, help="timed steps per benchmark (default 200; emulated 20)")
    parser.add_argument("--worker", choices=["simulo", "maniskill"], help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(steps_per_second(args.worker, args.backend, args.num_envs[0], args.steps))
        return 0
    sizes = args.num_envs or ([4, 8] if args.emulated else [1024, 4096])
    steps = args.steps or (20 if args.emulated else 200)
    if min(sizes) < 1 or steps < 1:
        parser.error("--num-envs and --steps must be >= 1")
    backend = "physx_cuda_emulated" if args.emulated else f"physx_cuda:{args.device}"
    maniskill_backend = "physx_cpu" if args.emulated else "physx_cuda"
    report: dict = {"backend": backend, "num_envs": sizes}
    try:
        from simulo_envs.sim import backend_device

        backend_device(backend if args.emulated else backend)  # fails fast: no CUDA, no library
    except RuntimeError as exc:
        report.update(ok=False, error=str(exc))
        print(json.dumps(report))
        return 2
    checks = contract_checks(backend, min(sizes[0], 64))
    success = expert_success(backend, min(sizes[0], 256))
    bench = []
    for n in sizes:
        ms_n = 1 if args.emulated else n  # ManiSkill's CPU backend runs one env per process
        row = {"num_envs": n, "simulo_steps_per_second": _worker("simulo", backend, n, steps),
               "maniskill_num_envs": ms_n, "maniskill_steps_per_second": _worker("maniskill", maniskill_backend, ms_n, steps)}
        row["ratio"] = row["simulo_steps_per_second"] / row["maniskill_steps_per_second"]
        bench.append(row)
    report.update(contracts=checks, expert_success_rate=success, benchmark=bench,
                  ok=all(checks.values()) and success >= 0.95)
    print(json.dumps(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
