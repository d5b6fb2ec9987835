"""The Prop contract (shared/seeds/simulo-prop.txt), point by point."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401  (registers FrankaLift-v1)
from simulo_envs import (Capsule, Cuboid, Cylinder, Physics, Pose, Prop, PropProtocol, PropStateProtocol, Scene,
                         SimConfig, Sphere)
from simulo_envs.sim import make_backend

N = 4
SPACING = 2.0
SPAWN = [0.5, 0.0, 0.025]


def forms_of_1_3():
    return {
        "list": [1, 3],
        "tuple": (1, 3),
        "numpy": np.array([1, 3]),
        "numpy_int32": np.array([1, 3], dtype=np.int32),
        "torch": torch.tensor([1, 3]),
        "torch_int32": torch.tensor([1, 3], dtype=torch.int32),
        "numpy_mask": np.array([False, True, False, True]),
        "torch_mask": torch.tensor([False, True, False, True]),
    }


def make_block():
    return Prop(Cuboid(name="Block", size=(0.05, 0.05, 0.05), pose=Pose(position=SPAWN),
                       physics=Physics.rigid(mass=0.05)))


class World:
    def __init__(self, num_envs=N, spacing=SPACING, ground=True, gravity=(0.0, 0.0, -9.81)):
        self.scene = Scene(num_envs, spacing)
        self.block = self.scene.add(make_block(), at="/World/Block")
        if ground:
            self.scene.add_ground()
        self.backend = make_backend("physx_cpu", num_envs, self.scene.env_origins.numpy(),
                                    SimConfig(env_spacing=spacing, gravity=gravity))
        self.scene.attach(self.backend)

    def close(self):
        self.backend.close()


@pytest.fixture
def world():
    w = World()
    yield w
    w.close()


def full_state(prop):
    return torch.cat([prop.state.pose, prop.state.linear_velocity, prop.state.angular_velocity], dim=1)


def distinct_poses(k, offset=0.0):
    """k distinct, valid world poses [x, y, z, qw, qx, qy, qz] with unit quaternions."""
    out = torch.zeros(k, 7)
    for i in range(k):
        a = 0.3 + 0.2 * i + offset
        out[i, :3] = torch.tensor([1.0 + i + offset, -0.5 * i, 0.3 + 0.1 * i])
        out[i, 3:] = torch.tensor([math.cos(a / 2), 0.0, 0.0, math.sin(a / 2)])
    return out


def distinct_velocities(k, offset=0.0):
    return torch.arange(k * 6, dtype=torch.float32).reshape(k, 6) * 0.1 + 0.05 + offset


# ---------------------------------------------------------------- identity
def test_shape_is_the_authored_shape():
    shape = Cuboid("Block", (0.05,) * 3, Pose(SPAWN), Physics.rigid(mass=0.05))
    prop = Prop(shape)
    assert prop.shape is shape
    assert prop.shape.pose.position == (0.5, 0.0, 0.025)
    assert prop.shape.size == (0.05, 0.05, 0.05)
    assert prop.shape.physics.mass == 0.05


def test_name_comes_from_the_shape():
    prop = make_block()
    assert prop.name == "Block"
    Scene(2, 1.0).add(prop, at="/World/Cube")
    assert prop.name == "Block"


def test_path_is_none_until_added_then_the_scene_path():
    prop = make_block()
    assert prop.path is None
    Scene(2, 1.0).add(prop, at="/World/Block")
    assert prop.path == "/World/Block"


def test_prop_rejects_non_shapes():
    with pytest.raises(TypeError):
        Prop("Block")


def test_attached_prop_satisfies_protocols(world):
    assert isinstance(world.block, PropProtocol)
    assert isinstance(world.block.state, PropStateProtocol)
    assert not isinstance(object(), PropProtocol)


def test_unattached_prop_satisfies_protocol():
    """isinstance must answer True (not raise) for a Prop that is not attached yet: authoring code
    checks props before the simulation exists."""
    prop = make_block()
    assert isinstance(prop, PropProtocol)
    assert isinstance(prop.state, PropStateProtocol)
    Scene(2, 1.0).add(prop, at="/World/Block")
    assert isinstance(prop, PropProtocol)


# ---------------------------------------------------------------- before attach
def test_state_is_the_same_object_on_every_access_before_and_after_attach():
    prop = make_block()
    s = prop.state
    assert prop.state is s
    scene = Scene(2, 1.0)
    scene.add(prop, at="/World/Block")
    assert prop.state is s
    backend = make_backend("physx_cpu", 2, scene.env_origins.numpy(), SimConfig(env_spacing=1.0))
    try:
        scene.attach(backend)
        assert prop.state is s
        assert s.pose.shape == (2, 7)
    finally:
        backend.close()


@pytest.mark.parametrize("member", ["pose", "linear_velocity", "angular_velocity"])
def test_state_members_raise_before_attach(member):
    prop = make_block()
    with pytest.raises(RuntimeError):
        getattr(prop.state, member)
    Scene(2, 1.0).add(prop, at="/World/Block")  # added but not attached yet
    with pytest.raises(RuntimeError):
        getattr(prop.state, member)


def test_default_pose_and_writes_raise_before_attach():
    prop = make_block()
    Scene(2, 1.0).add(prop, at="/World/Block")
    with pytest.raises(RuntimeError):
        prop.default_pose
    with pytest.raises(RuntimeError):
        prop.set_pose(torch.zeros(2, 7))
    with pytest.raises(RuntimeError):
        prop.set_velocity(torch.zeros(2, 6))
    with pytest.raises(RuntimeError):
        prop.reset()


# ---------------------------------------------------------------- state shapes and default pose
def test_state_shapes_and_dtypes(world):
    s = world.block.state
    assert s.pose.shape == (N, 7)
    assert s.linear_velocity.shape == (N, 3)
    assert s.angular_velocity.shape == (N, 3)
    for t in (s.pose, s.linear_velocity, s.angular_velocity):
        assert t.dtype == torch.float32
        assert t.device == torch.device("cpu")


def test_default_pose_is_shape_pose_plus_env_origin(world):
    dp = world.block.default_pose
    assert dp.shape == (N, 7)
    assert dp.dtype == torch.float32
    origins = world.scene.env_origins
    assert torch.count_nonzero(origins) > 0  # spacing 2: the origins differ, so the test means something
    expected = torch.tensor(SPAWN + [1.0, 0.0, 0.0, 0.0]).repeat(N, 1)
    expected[:, :3] += origins
    assert torch.allclose(dp, expected, atol=1e-7)
    # Freshly attached, the live pose equals the spawn pose.
    assert torch.allclose(world.block.state.pose, dp, atol=1e-6)


def test_default_pose_in_franka_lift():
    env = gym.make("FrankaLift-v1", num_envs=2, sim_config=dict(env_spacing=3.0))
    try:
        u = env.unwrapped
        assert isinstance(u.block, PropProtocol)
        origins = u.scene.env_origins
        assert not torch.equal(origins[0], origins[1])
        expected = torch.tensor(SPAWN + [1.0, 0.0, 0.0, 0.0]).repeat(2, 1)
        expected[:, :3] += origins
        assert torch.allclose(u.block.default_pose, expected, atol=1e-6)
        assert u.block.path == "/World/Block"
        assert u.block.name == "Block"
    finally:
        env.close()


# ---------------------------------------------------------------- read-your-writes
def test_set_pose_read_your_writes_without_a_step(world):
    target = distinct_poses(N)
    world.block.set_pose(target)
    assert torch.allclose(world.block.state.pose, target, atol=1e-6)


def test_set_pose_normalises_quaternion(world):
    target = distinct_poses(N)
    scaled = target.clone()
    scaled[:, 3:] *= torch.tensor([[2.0], [0.5], [3.0], [10.0]])
    world.block.set_pose(scaled)
    got = world.block.state.pose
    assert torch.allclose(got, target, atol=1e-6)
    assert torch.allclose(got[:, 3:].norm(dim=1), torch.ones(N), atol=1e-6)


def test_set_pose_does_not_modify_the_argument(world):
    scaled = distinct_poses(N)
    scaled[:, 3:] *= 2.0
    before = scaled.clone()
    world.block.set_pose(scaled)
    assert torch.equal(scaled, before)


def test_set_pose_accepts_numpy_and_lists(world):
    target = distinct_poses(N)
    world.block.set_pose(target.numpy())
    assert torch.allclose(world.block.state.pose, target, atol=1e-6)
    target2 = distinct_poses(N, offset=0.5)
    world.block.set_pose(target2.tolist())
    assert torch.allclose(world.block.state.pose, target2, atol=1e-6)


def test_set_velocity_read_your_writes_without_a_step(world):
    vel = distinct_velocities(N)
    world.block.set_velocity(vel)
    assert torch.allclose(world.block.state.linear_velocity, vel[:, :3], atol=1e-6)
    assert torch.allclose(world.block.state.angular_velocity, vel[:, 3:], atol=1e-6)


def test_set_velocity_is_applied_by_the_next_step():
    w = World(num_envs=2, ground=False, gravity=(0.0, 0.0, 0.0))
    try:
        start = w.block.state.pose
        w.block.set_velocity(torch.tensor([[1.0, 0, 0, 0, 0, 0], [0, -2.0, 0, 0, 0, 0]]))
        w.backend.step(10)  # 10 x 0.01 s, no gravity, no ground
        moved = w.block.state.pose[:, :3] - start[:, :3]
        assert moved[0].tolist() == pytest.approx([0.1, 0.0, 0.0], abs=2e-3)
        assert moved[1].tolist() == pytest.approx([0.0, -0.2, 0.0], abs=2e-3)
    finally:
        w.close()


# ---------------------------------------------------------------- partial writes
@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_partial_set_pose_touches_only_listed_envs(world, form):
    world.block.set_velocity(distinct_velocities(N))
    before = full_state(world.block)
    target = distinct_poses(2, offset=0.25)
    world.block.set_pose(target, env_ids=forms_of_1_3()[form])
    after = full_state(world.block)
    assert torch.allclose(after[[1, 3], :7], target, atol=1e-6)
    assert torch.equal(after[[0, 2]], before[[0, 2]])


@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_partial_set_velocity_touches_only_listed_envs(world, form):
    world.block.set_velocity(distinct_velocities(N))
    before = full_state(world.block)
    vel = -distinct_velocities(2)
    world.block.set_velocity(vel, env_ids=forms_of_1_3()[form])
    after = full_state(world.block)
    assert torch.allclose(after[[1, 3], 7:], vel, atol=1e-6)
    assert torch.equal(after[[0, 2]], before[[0, 2]])
    # A velocity write does not move the body.
    assert torch.equal(after[:, :7], before[:, :7])


def test_partial_write_follows_env_ids_order(world):
    target = distinct_poses(2)
    world.block.set_pose(target, env_ids=[3, 0])
    got = world.block.state.pose
    assert torch.allclose(got[3], target[0], atol=1e-6)
    assert torch.allclose(got[0], target[1], atol=1e-6)


@pytest.mark.parametrize("ids", [2, np.int64(2), [2]])
def test_single_env_write(world, ids):
    before = full_state(world.block)
    target = distinct_poses(1, offset=1.0)
    world.block.set_pose(target, env_ids=ids)
    after = full_state(world.block)
    assert torch.allclose(after[2, :7], target[0], atol=1e-6)
    assert torch.equal(after[[0, 1, 3]], before[[0, 1, 3]])


def test_empty_env_ids_writes_nothing(world):
    before = full_state(world.block)
    world.block.set_pose(torch.zeros(0, 7), env_ids=[])
    world.block.set_velocity(torch.zeros(0, 6), env_ids=[])
    world.block.reset(env_ids=[])
    assert torch.equal(full_state(world.block), before)


def test_rows_must_match_env_ids(world):
    before = full_state(world.block)
    with pytest.raises(ValueError, match="shape"):
        world.block.set_pose(distinct_poses(N), env_ids=[1, 3])  # N rows for 2 envs
    with pytest.raises(ValueError, match="shape"):
        world.block.set_velocity(distinct_velocities(1), env_ids=[1, 3])
    assert torch.equal(full_state(world.block), before)


def test_bad_env_ids_raise_and_write_nothing(world):
    before = full_state(world.block)
    with pytest.raises(IndexError):
        world.block.set_pose(distinct_poses(1), env_ids=[N])
    with pytest.raises(ValueError):
        world.block.set_pose(distinct_poses(2), env_ids=[1, 1])
    with pytest.raises(TypeError):
        world.block.set_velocity(distinct_velocities(1), env_ids=[1.0])
    assert torch.equal(full_state(world.block), before)


# ---------------------------------------------------------------- reset
def test_reset_returns_to_default_pose_with_zero_velocity(world):
    world.block.set_pose(distinct_poses(N))
    world.block.set_velocity(distinct_velocities(N))
    world.block.reset()
    s = full_state(world.block)
    assert torch.allclose(s[:, :7], world.block.default_pose, atol=1e-6)
    assert torch.count_nonzero(s[:, 7:]) == 0


@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_partial_reset_touches_only_listed_envs(world, form):
    world.block.set_pose(distinct_poses(N))
    world.block.set_velocity(distinct_velocities(N))
    before = full_state(world.block)
    world.block.reset(env_ids=forms_of_1_3()[form])
    after = full_state(world.block)
    assert torch.allclose(after[[1, 3], :7], world.block.default_pose[[1, 3]], atol=1e-6)
    assert torch.count_nonzero(after[[1, 3], 7:]) == 0
    assert torch.equal(after[[0, 2]], before[[0, 2]])


def test_reset_after_physics_steps(world):
    world.block.set_pose(distinct_poses(N))  # in the air: it falls
    world.backend.step(5)
    assert world.block.state.linear_velocity[:, 2].max() < -0.1
    world.block.reset()
    s = full_state(world.block)
    assert torch.allclose(s[:, :7], world.block.default_pose, atol=1e-6)
    assert torch.count_nonzero(s[:, 7:]) == 0


# ---------------------------------------------------------------- fresh tensors
def test_returned_tensors_are_fresh(world):
    dp = world.block.default_pose
    dp += 1.0
    assert torch.allclose(world.block.default_pose[:, :3], torch.tensor(SPAWN) + world.scene.env_origins)
    before = full_state(world.block)
    for t in (world.block.state.pose, world.block.state.linear_velocity, world.block.state.angular_velocity):
        t.add_(5.0)
    pose = world.block.state.pose
    pose[:, 2] = 9.0
    assert torch.equal(full_state(world.block), before)


def test_written_tensor_is_not_aliased(world):
    target = distinct_poses(N)
    world.block.set_pose(target)
    target[:, 0] = 99.0
    assert world.block.state.pose[:, 0].max() < 10.0
    vel = distinct_velocities(N)
    world.block.set_velocity(vel)
    vel.zero_()
    assert torch.count_nonzero(world.block.state.linear_velocity) == 3 * N


# ---------------------------------------------------------------- other shapes
@pytest.mark.parametrize("shape", [
    Sphere("Ball", radius=0.03, pose=Pose([0.1, 0.2, 0.03])),
    Cylinder("Can", radius=0.03, height=0.1, pose=Pose([0.1, 0.2, 0.05])),
    Capsule("Pill", radius=0.02, height=0.06, pose=Pose([0.1, 0.2, 0.02])),
    Cuboid("Fixture", (0.1, 0.1, 0.1), Pose([0.1, 0.2, 0.05]), Physics.static()),
    Cuboid("Mover", (0.1, 0.1, 0.1), Pose([0.1, 0.2, 0.05]), Physics.kinematic()),
])
def test_other_shapes_attach_and_report_default_pose(shape):
    scene = Scene(2, SPACING)
    prop = scene.add(Prop(shape), at=f"/World/{shape.name}")
    backend = make_backend("physx_cpu", 2, scene.env_origins.numpy(), SimConfig(env_spacing=SPACING))
    try:
        scene.attach(backend)
        expected = torch.tensor(list(shape.pose.position)) + scene.env_origins
        assert torch.allclose(prop.default_pose[:, :3], expected, atol=1e-6)
        assert torch.allclose(prop.state.pose, prop.default_pose, atol=1e-6)
        assert prop.state.linear_velocity.shape == (2, 3)
    finally:
        backend.close()
