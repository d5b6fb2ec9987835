"""Each API point of the simulo-prop seed, tried as the seed writes it (docs/parity.md, Prop).

One check per table row (P1..P29). The seed's snippet runs verbatim with the package imported
under the seed's name (``import simulo_envs as simulo``).
"""

from __future__ import annotations

import pytest
import torch

import simulo_envs as simulo
from simulo_envs.sim import SimConfig, make_backend

N, SPACING = 3, 2.0
CHECKS = {}


def check(fn):
    CHECKS[fn.__name__.split("_")[0].upper()] = fn
    return fn


def seed_block():
    # The seed's snippet, as written.
    return simulo.Prop(
        simulo.Cuboid(
            name="Block",
            size=(0.05, 0.05, 0.05),
            pose=simulo.Pose(position=[0.5, 0.0, 0.025]),
            physics=simulo.Physics.rigid(mass=0.05),
        )
    )


class World:
    """A scene holding the seed's block, attached to a CPU backend."""

    def __init__(self, attach=True):
        self.scene = simulo.Scene(N, SPACING)
        self.block = seed_block()
        self.scene.add(self.block, at="/World/Block")
        self.scene.add_ground()
        self.backend = None
        if attach:
            self.backend = make_backend("physx_cpu", N, self.scene.env_origins.numpy(), SimConfig(env_spacing=SPACING))
            self.scene.attach(self.backend)
        self.device = torch.device("cpu")

    def close(self):
        if self.backend is not None:
            self.backend.close()


@pytest.fixture
def world():
    w = World()
    yield w
    w.close()


def spawn_world(w):
    return torch.tensor([0.5, 0.0, 0.025]) + w.scene.env_origins


# ---------------------------------------------------------------- the snippet


@check
def p1_prop_of_a_shape(w):
    assert isinstance(w.block, simulo.Prop)
    with pytest.raises(TypeError):
        simulo.Prop("not a shape")


@check
def p2_cuboid_keywords(w):
    assert w.block.shape.size == (0.05, 0.05, 0.05) and w.block.shape.name == "Block"


@check
def p3_pose_position(w):
    assert list(w.block.shape.pose.position) == [0.5, 0.0, 0.025]


@check
def p4_physics_rigid_mass(w):
    assert w.block.shape.physics.mass == 0.05


@check
def p5_scene_add_at(w):
    assert w.scene.objects["/World/Block"] is w.block


@check
def p6_default_pose_indexed_clone(w):
    env_ids = torch.tensor([0, 2])
    pose = w.block.default_pose[env_ids].clone()
    assert pose.shape == (2, 7)


@check
def p7_set_pose_subset(w):
    env_ids = torch.tensor([0, 2])
    count = len(env_ids)
    pose = w.block.default_pose[env_ids].clone()
    pose[:, 0] += torch.empty(count, device=w.device).uniform_(-0.10, 0.10)
    pose[:, 1] += torch.empty(count, device=w.device).uniform_(-0.20, 0.20)
    before = w.block.state.pose[1].clone()
    w.block.set_pose(pose, env_ids=env_ids)
    torch.testing.assert_close(w.block.state.pose[env_ids, :3], pose[:, :3], rtol=0, atol=1e-6)
    assert torch.equal(w.block.state.pose[1], before)  # env 1 keeps its pose


@check
def p8_set_velocity_subset(w):
    env_ids = torch.tensor([1])
    w.block.set_velocity(torch.zeros(1, 6, device=w.device), env_ids=env_ids)
    assert w.block.state.linear_velocity[1].abs().max().item() == 0.0


# ---------------------------------------------------------------- state


@check
def p9_state_members(w):
    s = w.block.state
    assert s.pose.shape == (N, 7) and s.linear_velocity.shape == (N, 3) and s.angular_velocity.shape == (N, 3)


@check
def p10_height_from_state_pose(w):
    assert w.block.state.pose[:, 2].tolist() == pytest.approx([0.025] * N)


@check
def p11_world_frame_batched(w):
    torch.testing.assert_close(w.block.state.pose[:, :3], spawn_world(w), rtol=0, atol=1e-6)
    assert len(set(map(tuple, w.block.state.pose[:, :3].tolist()))) == N  # one row per env, distinct origins


@check
def p12_typed_state_protocol(w):
    assert isinstance(w.block.state, simulo.PropStateProtocol)


# ---------------------------------------------------------------- attributes


@check
def p13_shape(w):
    assert isinstance(w.block.shape, simulo.PrimitiveShape)


@check
def p14_shape_pose_is_spawn(w):
    torch.testing.assert_close(w.block.default_pose[:, :3], spawn_world(w), rtol=0, atol=1e-6)


@check
def p15_name(w):
    assert w.block.name == "Block"
    # A shape always carries a name, so the scene never has to supply one.
    with pytest.raises(ValueError):
        simulo.Sphere(name=None, radius=0.02)
    p = simulo.Scene(1).add(simulo.Prop(simulo.Sphere(name="Ball", radius=0.02)), at="/World/Other")
    assert p.name == "Ball" and p.path == "/World/Other"


@check
def p16_path(w):
    assert w.block.path == "/World/Block"
    assert seed_block().path is None


@check
def p17_state_same_object(w):
    assert w.block.state is w.block.state


@check
def p18_state_reads_through(w):
    w.block.set_pose(torch.tensor([[0.1, 0.2, 0.3, 1.0, 0.0, 0.0, 0.0]] * N))
    assert w.block.state.pose[:, 2].tolist() == pytest.approx([0.3] * N)
    w.backend.step(substeps=10)
    assert all(z < 0.3 for z in w.block.state.pose[:, 2].tolist())  # it fell: live, not cached


@check
def p19_state_raises_until_attached(w):
    unattached = World(attach=False)
    with pytest.raises(RuntimeError):
        unattached.block.state.pose


@check
def p20_default_pose_shape_world(w):
    d = w.block.default_pose
    assert d.shape == (N, 7)
    torch.testing.assert_close(d[:, :3], spawn_world(w), rtol=0, atol=1e-6)
    assert d[:, 3:].tolist() == [[1.0, 0.0, 0.0, 0.0]] * N


@check
def p21_default_pose_raises_until_attached(w):
    with pytest.raises(RuntimeError):
        World(attach=False).block.default_pose


# ---------------------------------------------------------------- writes


@check
def p22_set_pose_all(w):
    pose = w.block.default_pose
    pose[:, 2] += 0.5
    w.block.set_pose(pose)
    torch.testing.assert_close(w.block.state.pose, pose, rtol=0, atol=1e-6)


@check
def p23_set_pose_subset_shape(w):
    with pytest.raises(ValueError):
        w.block.set_pose(w.block.default_pose, env_ids=[0])  # (N, 7) for one env


@check
def p24_pose_layout_scalar_first(w):
    half = 0.5 ** 0.5
    pose = w.block.default_pose
    pose[:, 3:] = torch.tensor([half, 0.0, 0.0, half])  # 90 degrees about z, [qw, qx, qy, qz]
    w.block.set_pose(pose)
    torch.testing.assert_close(w.block.state.pose[:, 3:], pose[:, 3:], rtol=0, atol=1e-6)


@check
def p25_set_velocity_layout(w):
    v = torch.tensor([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]] * N)
    w.block.set_velocity(v)
    torch.testing.assert_close(w.block.state.linear_velocity, v[:, :3], rtol=0, atol=1e-6)
    torch.testing.assert_close(w.block.state.angular_velocity, v[:, 3:], rtol=0, atol=1e-6)


@check
def p26_set_velocity_all(w):
    w.block.set_velocity(torch.ones(N, 6))
    assert w.block.state.linear_velocity.tolist() == [[1.0, 1.0, 1.0]] * N


@check
def p27_reset_subset(w):
    moved = w.block.default_pose
    moved[:, 0] += 1.0
    w.block.set_pose(moved)
    w.block.set_velocity(torch.ones(N, 6))
    w.block.reset(env_ids=[2])
    torch.testing.assert_close(w.block.state.pose[2], w.block.default_pose[2], rtol=0, atol=1e-6)
    assert w.block.state.linear_velocity[2].abs().max().item() == 0.0
    torch.testing.assert_close(w.block.state.pose[0], moved[0], rtol=0, atol=1e-6)


@check
def p28_reset_all(w):
    w.block.set_velocity(torch.ones(N, 6))
    w.block.reset()
    torch.testing.assert_close(w.block.state.pose, w.block.default_pose, rtol=0, atol=1e-6)
    assert w.block.state.angular_velocity.abs().max().item() == 0.0


@check
def p29_prop_protocol(w):
    assert isinstance(w.block, simulo.PropProtocol)
    assert isinstance(seed_block(), simulo.PropProtocol)  # unattached too: no property runs
    assert not isinstance(object(), simulo.PropProtocol)


def test_every_row_has_a_check():
    assert sorted(CHECKS, key=lambda k: int(k[1:])) == [f"P{i}" for i in range(1, 30)]


@pytest.mark.parametrize("point", sorted(CHECKS, key=lambda k: int(k[1:])))
def test_prop_seed_point(point, world):
    CHECKS[point](world)
