"""Heterogeneous scenes and the cloner on our Scene (issue 6): variants per env, plan, origins."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs import Cuboid, MultiShapeProp, Physics, Pose, Prop, Scene, SimConfig, Sphere
from simulo_envs.cloner import CloneCfg, grid_transforms, path_env_ids, path_to_clone, path_to_source
from simulo_envs.policies import LiftExpert
from simulo_envs.sim.physx_cpu import PhysxCpuBackend


def _attach(scene):
    backend = PhysxCpuBackend(scene.num_envs, scene.env_origins.numpy(), SimConfig())
    scene.attach(backend)
    return backend


@pytest.mark.parametrize("n", [1, 4, 5, 7, 12])
def test_grid_origins_agree_everywhere(n):
    env = gym.make("FrankaLift-v1", num_envs=n, sim_config=dict(env_spacing=1.5))
    u = env.unwrapped
    expected, quat = grid_transforms(n, 1.5)
    assert torch.equal(quat[:, 0], torch.ones(n))
    assert torch.allclose(u.scene.env_origins, expected)
    assert torch.allclose(u.scene.clone_plan.positions, expected)
    assert torch.allclose(u.agent.robot.state.root_pose[:, :3], expected, atol=1e-6)
    env.close()


def test_multishape_prop_keeps_one_row_per_env():
    scene = Scene(5, env_spacing=1.0)
    cube = Cuboid("Cube", (0.04, 0.04, 0.04), Pose([0.1, 0.0, 0.02]), Physics.rigid(mass=0.1))
    ball = Sphere("Ball", 0.03, Pose([0.0, 0.2, 0.03]), Physics.rigid(mass=0.1))
    prop = scene.add(MultiShapeProp("Thing", [cube, ball]), at="/World/Thing")
    scene.add_ground()
    _attach(scene)
    assert prop.variant_of_env.tolist() == [0, 1, 0, 1, 0]
    assert prop.shape_of_env(1) is ball
    origins = scene.env_origins
    expected = torch.tensor([cube.pose.to_list(), ball.pose.to_list()] * 3)[:5]
    expected[:, :3] += origins
    assert torch.allclose(prop.default_pose, expected)
    assert prop.state.pose.shape == (5, 7)
    moved = prop.default_pose
    moved[:, 2] += 0.5
    prop.set_pose(moved[[1, 3]], env_ids=[1, 3])
    pose = prop.state.pose
    assert torch.allclose(pose[[1, 3]], moved[[1, 3]], atol=1e-6)
    assert torch.allclose(pose[[0, 2, 4]], expected[[0, 2, 4]], atol=1e-6)
    prop.reset([1])
    assert torch.allclose(prop.state.pose[1], expected[1], atol=1e-6)


def test_random_strategy_is_seeded():
    def variants(seed):
        scene = Scene(16, clone_cfg=CloneCfg(clone_strategy="random", seed=seed))
        prop = scene.add(MultiShapeProp("X", [Cuboid("A", (0.1,) * 3), Sphere("B", 0.05)]), at="/World/X")
        _attach(scene)
        return prop.variant_of_env.tolist()

    first = variants(3)
    assert first == variants(3)
    assert set(first) == {0, 1}
    assert first != variants(4)


def test_scene_lookups_on_segment_boundaries():
    scene = Scene(12)
    names = ["Robot", "RobotArm", "Plate", "CakeOnPlate/Plate"]
    for name in names:
        scene.add(Prop(Cuboid(name.replace("/", "_"), (0.05,) * 3)), at=f"/World/{name}")
    _attach(scene)
    plan = scene.clone_plan
    for name in names:
        proto = f"/World/envs/env_0/{name}"
        clones = [path_to_clone(plan, proto, e) for e in range(12)]
        assert clones == [f"/World/envs/env_{e}/{name}" for e in range(12)]
        assert clones == [scene.env_path(f"/World/{name}", e) for e in range(12)]
        assert path_env_ids(plan, proto) == tuple(range(12))
        source = path_to_source(plan, f"/World/envs/env_11/{name}")
        assert source[0] == proto
    assert path_to_clone(plan, "/World/envs/env_0/RobotArmX", 3) is None


def test_mixed_task_expert_lifts_every_shape():
    env = gym.make("FrankaLiftMixed-v1", num_envs=3, control_mode="pd_ee_delta_pos")
    u = env.unwrapped
    assert u.block.variant_of_env.tolist() == [0, 1, 2]
    expert = LiftExpert(env)
    env.reset(seed=11)
    success = np.zeros(3, dtype=bool)
    for _ in range(80):
        _, _, terminated, _, info = env.step(expert.act())
        success |= info["success"].numpy()
        if success.all():
            break
    assert success.all(), success
    env.close()


def test_filter_collisions_gives_each_env_its_bit():
    from simulo_envs.cloner import filter_collisions

    scene = Scene(33)
    scene.add(Prop(Cuboid("B", (0.05,) * 3)), at="/World/B")
    backend = _attach(scene)
    groups = filter_collisions(backend)
    assert len(groups) == 33
    assert groups[0] == [1, 1, 0, 0] and groups[31] == [1 << 31, 1 << 31, 0, 0]
    assert groups[32] == groups[0]  # beyond 32 envs, env_spacing keeps envs sharing a bit apart
    assert len({g[0] for g in groups[:32]}) == 32
