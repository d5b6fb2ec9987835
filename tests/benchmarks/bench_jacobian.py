"""TCP Jacobian of the Panda on CPU: SAPIEN's Pinocchio model (C++, a call per env) against
pytorch_kinematics (batched torch), for N envs.

    python tests/benchmarks/bench_jacobian.py [--num-envs 1 16 64] [--repeats 200]

Prints microseconds per batched Jacobian (all N envs), median of 5 rounds. This is the
measurement behind the choice in ``simulo_envs/controllers/ee.py``. Not a test.
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


def pytorch_kinematics_fn():
    import pytorch_kinematics as pk

    with open(panda_urdf_path(), "rb") as f:
        chain = pk.build_serial_chain_from_urdf(f.read(), TCP_LINK)

    def jacobian(qpos: np.ndarray) -> torch.Tensor:
        return chain.jacobian(torch.from_numpy(qpos[:, :7]).to(torch.float32))

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
    print(f"{'num_envs':>8s} {'pinocchio us':>14s} {'pytorch_kinematics us':>22s}")
    for n in args.num_envs:
        qpos = np.tile(np.asarray(REST_QPOS, dtype=np.float64), (n, 1))
        a = statistics.median(time_it(pin, qpos, args.repeats) for _ in range(5))
        b = statistics.median(time_it(pk_fn, qpos, max(20, args.repeats // 10)) for _ in range(5))
        print(f"{n:>8d} {a:>14.1f} {b:>22.1f}")


if __name__ == "__main__":
    main()
