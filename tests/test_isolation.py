"""Isolation: envs never touch each other, even with env_spacing = 0 (up to 32 envs on physx_cpu)."""

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs import Cuboid, Physics, Pose, Prop, Scene, SimConfig
from simulo_envs.sim import make_backend

HALF = 0.025  # block half size [m]
DROP = [0.5, 0.3, 0.3]  # world position, away from the arm (TCP rests at (0.615, 0, 0.17))


@pytest.fixture(scope="module")
def env():
    e = gym.make("FrankaLift-v1", num_envs=4, sim_config=dict(env_spacing=0.0))
    yield e
    e.close()


def test_all_env_origins_coincide(env):
    assert torch.count_nonzero(env.unwrapped.scene.env_origins) == 0


def test_cubes_dropped_at_the_same_world_position_all_rest_on_the_ground(env):
    u = env.unwrapped
    env.reset(seed=0)
    pose = torch.tensor([DROP + [1.0, 0.0, 0.0, 0.0]] * 4)
    u.block.set_pose(pose)
    u.block.set_velocity(torch.zeros(4, 6))
    for _ in range(40):
        env.step(torch.zeros(4, 8))
    final = u.block.state.pose
    assert torch.allclose(final[:, 2], torch.full((4,), HALF), atol=0.002), final
    # Dropped straight down, nothing pushed them sideways.
    assert torch.allclose(final[:, :2], torch.tensor([DROP[:2]] * 4), atol=0.005), final
    # At rest.
    assert u.block.state.linear_velocity.abs().max() < 0.01


def test_overlapping_blocks_of_different_envs_do_not_interact(env):
    """Two envs' blocks resting in exactly the same place stay exactly there."""
    u = env.unwrapped
    env.reset(seed=0)
    pose = torch.tensor([[0.5, -0.3, HALF, 1.0, 0.0, 0.0, 0.0]] * 4)
    u.block.set_pose(pose)
    u.block.set_velocity(torch.zeros(4, 6))
    for _ in range(10):
        env.step(torch.zeros(4, 8))
    final = u.block.state.pose
    assert torch.allclose(final[:, :3], pose[:, :3], atol=1e-3), final
    assert u.block.state.linear_velocity.abs().max() < 0.01
    assert u.block.state.angular_velocity.abs().max() < 0.05


def test_one_env_moving_its_block_leaves_the_others_alone(env):
    """Push env 0's block hard through the place where the other envs' blocks rest."""
    u = env.unwrapped
    env.reset(seed=0)
    pose = torch.tensor([[0.5, -0.3, HALF, 1.0, 0.0, 0.0, 0.0]] * 4)
    u.block.set_pose(pose)
    u.block.set_velocity(torch.zeros(4, 6))
    env.step(torch.zeros(4, 8))
    rest = u.block.state.pose
    u.block.set_pose(torch.tensor([[0.5, -0.45, HALF, 1.0, 0.0, 0.0, 0.0]]), env_ids=[0])
    u.block.set_velocity(torch.tensor([[0.0, 2.0, 0.0, 0.0, 0.0, 0.0]]), env_ids=[0])
    for _ in range(4):
        env.step(torch.zeros(4, 8))
    moved = u.block.state.pose
    assert moved[0, 1] > -0.3  # env 0's block slid through the others' spot
    assert torch.allclose(moved[1:, :3], rest[1:, :3], atol=1e-3), moved


# ---------------------------------------------------------------- without the robot: the control experiment
def _two_blocks_world(num_envs):
    scene = Scene(num_envs, 0.0)
    a = scene.add(Prop(Cuboid("A", (0.05,) * 3, Pose([0.0, 0.0, HALF]), Physics.rigid(mass=0.05))), at="/World/A")
    b = scene.add(Prop(Cuboid("B", (0.05,) * 3, Pose([1.0, 0.0, HALF]), Physics.rigid(mass=0.05))), at="/World/B")
    scene.add_ground()
    backend = make_backend("physx_cpu", num_envs, scene.env_origins.numpy(), SimConfig(env_spacing=0.0))
    scene.attach(backend)
    return scene, a, b, backend


def test_bodies_of_the_same_env_do_collide_but_of_different_envs_do_not():
    """Control: overlap inside one env is pushed apart; the same overlap across envs is not."""
    scene, a, b, backend = _two_blocks_world(2)
    try:
        # B of env 0 is put 1 cm from A of env 0 (deep overlap); B of env 1 stays away.
        overlap = torch.tensor([[0.01, 0.0, HALF, 1.0, 0.0, 0.0, 0.0]])
        b.set_pose(overlap, env_ids=[0])
        backend.step(20)
        gap_same_env = (b.state.pose[0, :2] - a.state.pose[0, :2]).norm()
        assert gap_same_env > 0.04, "blocks of one env must push each other apart"
        # Across envs: env 1's A overlaps env 0's A exactly; neither moves.
        assert torch.allclose(a.state.pose[1, :3], torch.tensor([0.0, 0.0, HALF]), atol=1e-3)
    finally:
        backend.close()


def test_32_envs_stacked_in_one_place_do_not_interact():
    scene = Scene(32, 0.0)
    block = scene.add(Prop(Cuboid("Block", (0.05,) * 3, Pose([0.0, 0.0, 0.3]), Physics.rigid(mass=0.05))),
                      at="/World/Block")
    scene.add_ground()
    backend = make_backend("physx_cpu", 32, scene.env_origins.numpy(), SimConfig(env_spacing=0.0))
    try:
        scene.attach(backend)
        backend.step(150)
        final = block.state.pose
        assert torch.allclose(final[:, 2], torch.full((32,), HALF), atol=0.002), final[:, 2]
        assert final[:, :2].abs().max() < 1e-3
    finally:
        backend.close()
