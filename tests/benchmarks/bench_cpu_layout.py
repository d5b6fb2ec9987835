"""Raw PhysX: one shared PhysxCpuSystem for N envs vs one system per env (Panda + cube each).

    python tests/benchmarks/bench_cpu_layout.py [--num-envs 1 16 64] [--rounds 3]

Only physics: 5 substeps at 100 Hz per env step, drive targets moved each env step by a
random joint increment so the arms keep moving. Prints env steps/s (median of rounds) per
layout. This is the measurement behind the choice documented in
``simulo_envs/sim/physx_cpu.py``. Not a test: pytest does not collect ``bench_*`` files.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import sapien
import sapien.physx as physx
from sapien.wrapper.urdf_loader import URDFLoader

from simulo_envs.agents.panda import REST_QPOS, panda_urdf_path
from simulo_envs.sim.physx_cpu import env_bits


def _build_env(scene: sapien.Scene, origin, groups, urdf: str):
    loader = URDFLoader()
    loader.set_scene(scene)
    loader.fix_root_link = True
    builder = loader.load_file_as_articulation_builder(urdf)
    for link in builder.link_builders:
        link.visual_records = []
        link.collision_groups = [groups[0], groups[1], 1 << 31, 0]
    robot = builder.build()
    robot.set_root_pose(sapien.Pose(origin))
    robot.set_qpos(np.array(REST_QPOS, dtype=np.float32))
    for joint in robot.get_active_joints():
        joint.set_drive_properties(1e3, 1e2, 100.0, "force")
    box = scene.create_actor_builder()
    box.add_box_collision(half_size=[0.025] * 3, density=400.0)
    block = box.build(name="block")
    block.set_pose(sapien.Pose([origin[0] + 0.5, origin[1], 0.025]))
    for shape in block.find_component_by_type(physx.PhysxRigidDynamicComponent).collision_shapes:
        shape.set_collision_groups(groups)
    return robot


def _ground(scene: sapien.Scene) -> None:
    builder = scene.create_actor_builder()
    builder.add_plane_collision(sapien.Pose(q=[0.7071068, 0, -0.7071068, 0]))
    builder.build_static(name="ground")


def make(layout: str, n: int, urdf: str):
    keep, robots, systems = [], [], []
    if layout == "shared":
        system = physx.PhysxCpuSystem()
        system.timestep = 0.01
        systems.append(system)
        for i in range(n):
            scene = sapien.Scene([system])
            keep.append(scene)
            robots.append(_build_env(scene, [0.0, 2.0 * i, 0.0], env_bits(i), urdf))
        _ground(keep[0])
    else:
        for i in range(n):
            system = physx.PhysxCpuSystem()
            system.timestep = 0.01
            scene = sapien.Scene([system])
            keep.append(scene)
            systems.append(system)
            robots.append(_build_env(scene, [0.0, 0.0, 0.0], env_bits(0), urdf))
            _ground(scene)
    return keep, robots, systems


def measure(layout: str, n: int, steps: int, urdf: str, seed: int = 0) -> float:
    keep, robots, systems = make(layout, n, urdf)
    rng = np.random.default_rng(seed)
    joints = [r.get_active_joints() for r in robots]
    start = time.perf_counter()
    for _ in range(steps):
        for robot, js in zip(robots, joints):
            q = robot.qpos
            for j, (joint, dq) in enumerate(zip(js[:7], rng.uniform(-0.1, 0.1, 7))):
                joint.set_drive_target(float(q[j] + dq))
        for _ in range(5):
            for system in systems:
                system.step()
    elapsed = time.perf_counter() - start
    del keep
    return n * steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    physx.set_scene_config(cpu_workers=0)
    physx.set_body_config(solver_position_iterations=15, solver_velocity_iterations=1)
    physx.set_shape_config(contact_offset=0.02, rest_offset=0.0)
    urdf = panda_urdf_path()
    print(f"{'num_envs':>8s} {'shared system':>16s} {'system per env':>16s}  (env steps/s, median of {args.rounds})")
    for n in args.num_envs:
        steps = max(50, 800 // n)
        shared = statistics.median(measure("shared", n, steps, urdf, r) for r in range(args.rounds))
        separate = statistics.median(measure("separate", n, steps, urdf, r) for r in range(args.rounds))
        print(f"{n:>8d} {shared:>16.0f} {separate:>16.0f}")


if __name__ == "__main__":
    main()
