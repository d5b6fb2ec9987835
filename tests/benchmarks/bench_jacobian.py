"""TCP Jacobian of the Panda on CPU: SAPIEN's Pinocchio model (C++, a call per env) against
pytorch_kinematics (batched torch, float32 and float64), for N envs.

    python tests/benchmarks/bench_jacobian.py [--num-envs 1 16 64] [--repeats 200]
    python tests/benchmarks/bench_jacobian.py --num-envs 1 64 1024 4096 --repeats 40   # the GPU backend's sizes

Prints microseconds per batched Jacobian (all N envs), median of 5 rounds. This is the
measurement behind the choices in ``simulo_envs/controllers/ee.py`` (CPU) and
``simulo_envs/sim/physx_cuda.py`` (GPU, see docs/gpu.md). Not a test.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from simulo_envs.agents.panda import REST_QPOS, TCP_LINK, panda_urdf_path


def pinocchio_fn():
    import sapien
    import sapien.physx as physx
    from sapien.wrapper.urdf_loader import URDFLoader

    scene = sapien.Scene([physx.PhysxCpuSystem()])
    loader = URDFLoader()
    loader.set_scene(scene)
    loader.fix_root_link = True
    builder = loader.load_file_as_articulation_builder(panda_urdf_path())
    for link in builder.link_builders:
        link.visual_records = []
    robot = builder.build()
    model = robot.create_pinocchio_model()
    tcp = [l.name for l in robot.links].index(TCP_LINK)

    def jacobian(qpos: np.ndarray) -> np.ndarray:
        return np.stack([model.compute_single_link_local_jacobian(q, tcp) for q in qpos])

    return jacobian, (scene, robot)


def pytorch_kinematics_fn(dtype=torch.float32):
    import pytorch_kinematics as pk

    with open(panda_urdf_path(), "rb") as f:
        chain = pk.build_serial_chain_from_urdf(f.read(), TCP_LINK).to(dtype=dtype)

    def jacobian(qpos: np.ndarray) -> torch.Tensor:
        return chain.jacobian(torch.from_numpy(qpos[:, :7]).to(dtype))

    return jacobian, chain


def time_it(fn, qpos: np.ndarray, repeats: int) -> float:
    fn(qpos)
    start = time.perf_counter()
    for _ in range(repeats):
        fn(qpos)
    return (time.perf_counter() - start) / repeats * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    pin, keep = pinocchio_fn()
    pk_fn, _ = pytorch_kinematics_fn()
    pk64_fn, _ = pytorch_kinematics_fn(torch.float64)
    print(f"{'num_envs':>8s} {'pinocchio us':>14s} {'pytorch_kinematics f32 us':>26s} {'f64 us':>10s}")
    for n in args.num_envs:
        qpos = np.tile(np.asarray(REST_QPOS, dtype=np.float64), (n, 1))
        a = statistics.median(time_it(pin, qpos, max(3, args.repeats // max(1, n // 64))) for _ in range(5))
        b = statistics.median(time_it(pk_fn, qpos, max(20, args.repeats // 10)) for _ in range(5))
        c = statistics.median(time_it(pk64_fn, qpos, max(20, args.repeats // 10)) for _ in range(5))
        print(f"{n:>8d} {a:>14.1f} {b:>26.1f} {c:>10.1f}")


if __name__ == "__main__":
    main()
