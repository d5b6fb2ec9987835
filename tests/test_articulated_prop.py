"""ArticulatedProp: the Prop contract for objects with joints (a drawer, a door), point by point."""

import math

import numpy as np
import pytest
import torch

from simulo_envs import (ArticulatedProp, Articulation, Cuboid, Joint, Link, Physics, Pose, Prop, Scene, SimConfig)
from simulo_envs.authoring.cabinet import door_cabinet, drawer_cabinet
from simulo_envs.sim import make_backend

N = 4
SPACING = 2.0
SPAWN = (0.8, 0.1, 0.0)
TRAVEL = 0.25


def yaw_quat(angle):
    return [math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2)]


BACKENDS = ["physx_cpu", "physx_cuda_emulated"]


class World:
    def __init__(self, articulation=None, num_envs=N, ground=True, gravity=(0.0, 0.0, -9.81), backend="physx_cpu"):
        self.scene = Scene(num_envs, SPACING)
        spec = articulation or drawer_cabinet(pose=Pose(SPAWN), travel=TRAVEL)
        self.cabinet = self.scene.add(ArticulatedProp(spec), at="/World/Cabinet")
        if ground:
            self.scene.add_ground()
        self.backend = make_backend(backend, num_envs, self.scene.env_origins.numpy(),
                                    SimConfig(env_spacing=SPACING, gravity=gravity))
        self.scene.attach(self.backend)

    def close(self):
        self.backend.close()


@pytest.fixture(params=BACKENDS)
def world(request):
    w = World(backend=request.param)
    yield w
    w.close()


def full_state(prop):
    s = prop.state
    return torch.cat([s.root_pose, s.root_linear_velocity, s.root_angular_velocity, s.qpos, s.qvel], dim=1)


def forms_of_1_3():
    return {"list": [1, 3], "numpy": np.array([1, 3]), "torch": torch.tensor([1, 3]),
            "mask": torch.tensor([False, True, False, True])}


# ---------------------------------------------------------------- authoring validation
def box(name="b", size=(0.1, 0.1, 0.1), physics=None, collision=True):
    return Cuboid(name, size, physics=physics or Physics.rigid(mass=1.0), collision=collision)


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="ball"), "kind"),
    (dict(kind="prismatic", axis=(0, 0, 0), limits=(0, 1)), "axis"),
    (dict(kind="prismatic", limits=(1, 0)), "lower <= upper"),
    (dict(kind="prismatic", limits=(0, math.inf)), "finite"),
    (dict(kind="revolute", limits=(0, 1), friction=-1), "friction"),
    (dict(kind="revolute", limits=(0, 1), damping=math.nan), "damping"),
    (dict(kind="prismatic", limits=(0, 0.2), default_position=0.3), "outside the limits"),
])
def test_joint_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Joint(**kwargs)


def test_joint_normalises_axis_and_defaults_to_the_limit_nearest_zero():
    joint = Joint.prismatic(axis=(0, 0, -2), limits=(0.1, 0.3))
    assert joint.axis == (0.0, 0.0, -1.0)
    assert joint.default_position == pytest.approx(0.1)
    assert Joint.revolute(axis=(0, 0, 1), limits=(-1, 1)).default_position == 0.0
    assert Joint.fixed().dof == 0


@pytest.mark.parametrize("make, match", [
    (lambda: Link("a/b", [box()]), "name"),
    (lambda: Link("a", []), "at least one"),
    (lambda: Link("a", [box(physics=Physics.static())]), "Physics.rigid"),
    (lambda: Link("a", [box(collision=False)]), "colliding shape"),
    (lambda: Link("a", [box()], parent="root"), "parent and joint"),
    (lambda: Link("a", [box()], joint=Joint.fixed()), "parent and joint"),
])
def test_link_rejects_bad_values(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_articulation_checks_the_tree():
    root = Link("root", [box()])
    child = Link("child", [box()], parent="root", joint=Joint.prismatic((1, 0, 0), (0, 1)))
    with pytest.raises(ValueError, match="root"):
        Articulation("A", [child, root])
    with pytest.raises(ValueError, match="not listed before"):
        Articulation("A", [root, Link("x", [box()], parent="nowhere", joint=Joint.fixed())])
    with pytest.raises(ValueError, match="duplicate link"):
        Articulation("A", [root, Link("root", [box()], parent="root", joint=Joint.fixed())])
    with pytest.raises(ValueError, match="second root"):
        Articulation("A", [root, Link("r2", [box()])])
    with pytest.raises(ValueError, match="Links"):
        Articulation("A", [])
    assert Articulation("A", [root, child]).dof == 1


def test_articulated_prop_rejects_non_articulations():
    with pytest.raises(TypeError):
        ArticulatedProp(box())


def test_before_attach_everything_raises():
    prop = ArticulatedProp(drawer_cabinet())
    assert prop.name == "Cabinet" and prop.path is None
    Scene(2, 1.0).add(prop, at="/World/Cab")
    assert prop.path == "/World/Cab"
    for read in (lambda: prop.state.qpos, lambda: prop.state.root_pose, lambda: prop.default_pose,
                 lambda: prop.default_qpos, lambda: prop.qlimits, lambda: prop.reset(),
                 lambda: prop.set_qpos(torch.zeros(2, 1))):
        with pytest.raises(RuntimeError, match="not attached"):
            read()


# ---------------------------------------------------------------- attached: identity and defaults
def test_names_limits_friction_and_defaults(world):
    cab = world.cabinet
    assert cab.dof == 1
    assert cab.joint_names == ["drawer_joint"]
    assert cab.link_names == ["body", "drawer"]
    assert torch.allclose(cab.qlimits, torch.tensor([[0.0, TRAVEL]]))
    assert torch.allclose(cab.joint_friction, torch.full((N, 1), 0.05))  # as authored, per env
    assert torch.allclose(cab.joint_damping, torch.full((N, 1), 2.0))
    assert torch.equal(cab.joint_stiffness, torch.zeros(N, 1))  # passive: no drive pulls the drawer
    origins = world.scene.env_origins
    assert torch.count_nonzero(origins) > 0
    expected = torch.tensor([*SPAWN, 1.0, 0, 0, 0]).repeat(N, 1)
    expected[:, :3] += origins
    assert torch.allclose(cab.default_pose, expected, atol=1e-6)
    assert torch.equal(cab.default_qpos, torch.zeros(N, 1))
    s = full_state(cab)
    assert s.shape == (N, 15) and s.dtype == torch.float32
    assert torch.allclose(s[:, :7], expected, atol=1e-6)
    assert torch.count_nonzero(s[:, 7:]) == 0


def test_returned_tensors_are_fresh(world):
    cab = world.cabinet
    before = full_state(cab)
    for t in (cab.state.qpos, cab.state.root_pose, cab.default_pose, cab.default_qpos, cab.qlimits):
        t.add_(1.0)
    assert torch.equal(full_state(cab), before)
    assert torch.equal(cab.default_qpos, torch.zeros(N, 1))


def test_drawer_link_sits_at_the_joint_origin_and_follows_qpos_without_a_step(world):
    cab = world.cabinet
    closed = cab.state.link_pose("drawer")
    cab.set_qpos(torch.tensor([[0.0], [0.1], [0.2], [TRAVEL]]))
    assert torch.allclose(cab.state.qpos[:, 0], torch.tensor([0.0, 0.1, 0.2, TRAVEL]), atol=1e-6)
    opened = cab.state.link_pose("drawer")
    # The drawer slides along the cabinet's -x axis (world -x here: no yaw), nothing else moves.
    delta = opened[:, :3] - closed[:, :3]
    assert torch.allclose(delta, torch.tensor([[-q, 0.0, 0.0] for q in (0.0, 0.1, 0.2, TRAVEL)]), atol=1e-5)
    assert torch.allclose(cab.state.link_pose("body"), cab.default_pose, atol=1e-6)
    with pytest.raises(KeyError, match="drawer"):
        cab.state.link_pose("lid")


# ---------------------------------------------------------------- writes: read-your-writes, partial, validation
def test_set_pose_moves_the_root_and_keeps_qpos(world):
    cab = world.cabinet
    cab.set_qpos(torch.full((N, 1), 0.1))
    pose = cab.default_pose
    pose[:, 0] += 0.3
    pose[:, 3:] = torch.tensor(yaw_quat(math.pi / 2))
    cab.set_pose(pose)
    assert torch.allclose(cab.state.root_pose, pose, atol=1e-6)
    assert torch.allclose(cab.state.qpos, torch.full((N, 1), 0.1), atol=1e-6)
    # Turned a quarter turn about z, the drawer now opens along world -y.
    drawer = cab.state.link_pose("drawer")[:, :3] - pose[:, :3]
    cab.set_qpos(torch.zeros(N, 1))
    closed = cab.state.link_pose("drawer")[:, :3] - pose[:, :3]
    assert torch.allclose(drawer - closed, torch.tensor([0.0, -0.1, 0.0]).expand(N, 3), atol=1e-5)


@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_partial_writes_touch_only_listed_envs(world, form):
    cab = world.cabinet
    cab.set_qpos(torch.full((N, 1), 0.05))
    cab.set_qvel(torch.full((N, 1), 0.01))
    before = full_state(cab)
    ids = forms_of_1_3()[form]
    cab.set_qpos(torch.tensor([[0.2], [0.15]]), env_ids=ids)
    cab.set_qvel(torch.tensor([[-0.3], [0.4]]), env_ids=ids)
    pose = cab.default_pose[[1, 3]]
    pose[:, 2] += 0.05
    cab.set_pose(pose, env_ids=ids)
    after = full_state(cab)
    assert torch.allclose(after[[1, 3], 13], torch.tensor([0.2, 0.15]), atol=1e-6)
    assert torch.allclose(after[[1, 3], 14], torch.tensor([-0.3, 0.4]), atol=1e-6)
    assert torch.allclose(after[[1, 3], :7], pose, atol=1e-6)
    assert torch.equal(after[[0, 2]], before[[0, 2]])


@pytest.mark.parametrize("form", list(forms_of_1_3()))
def test_partial_reset_touches_only_listed_envs(world, form):
    cab = world.cabinet
    pose = cab.default_pose
    pose[:, 1] += 0.2
    cab.set_pose(pose)
    cab.set_qpos(torch.full((N, 1), 0.2))
    cab.set_qvel(torch.full((N, 1), 0.1))
    before = full_state(cab)
    cab.reset(env_ids=forms_of_1_3()[form])
    after = full_state(cab)
    assert torch.allclose(after[[1, 3], :7], cab.default_pose[[1, 3]], atol=1e-6)
    assert torch.count_nonzero(after[[1, 3], 7:]) == 0
    assert torch.equal(after[[0, 2]], before[[0, 2]])


@pytest.mark.parametrize("write, match", [
    (lambda c: c.set_qpos(torch.full((N, 1), TRAVEL + 0.01)), "outside the limits"),
    (lambda c: c.set_qpos(torch.zeros(N, 2)), "shape"),
    (lambda c: c.set_qvel(torch.full((N, 1), math.nan)), "NaN"),
    (lambda c: c.set_pose(torch.zeros(N, 7)), "zero"),
    (lambda c: c.set_pose(torch.zeros(2, 7), env_ids=[0]), "shape"),
    (lambda c: c.set_velocity(torch.zeros(N, 3)), "shape"),
    (lambda c: c.set_qpos(torch.zeros(1, 1), env_ids=[N]), "outside"),
    (lambda c: c.set_qpos(torch.zeros(2, 1), env_ids=[1, 1]), "duplicates"),
])
def test_bad_writes_raise_and_change_nothing(world, write, match):
    cab = world.cabinet
    cab.set_qpos(torch.full((N, 1), 0.1))
    before = full_state(cab)
    with pytest.raises((ValueError, IndexError), match=match):
        write(cab)
    assert torch.equal(full_state(cab), before)


def test_env_ids_type_errors(world):
    with pytest.raises(TypeError):
        world.cabinet.reset(env_ids=[1.5])


# ---------------------------------------------------------------- physics
def test_drawer_slides_along_its_axis_and_stops_at_its_limit(world):
    cab = world.cabinet
    closed = cab.state.link_pose("drawer")
    cab.set_qvel(torch.tensor([[2.0], [0.5], [0.0], [-0.5]]))  # env 3 pushes into the closed stop
    world.backend.step(100)  # 1 s
    q = cab.state.qpos[:, 0]
    assert q[0] == pytest.approx(TRAVEL, abs=5e-3)  # fast: hits the open stop
    assert 0.02 < q[1] < TRAVEL - 0.02  # slowed by damping and friction before the stop
    assert abs(q[2]) < 1e-4 and abs(q[3]) < 5e-3  # at rest stays; pushed in stays closed
    drawer = cab.state.link_pose("drawer")
    assert torch.allclose(drawer[:, 0] - closed[:, 0], -q, atol=2e-3)  # slides along -x only
    assert torch.allclose(drawer[:, 1:3], closed[:, 1:3], atol=2e-3)
    assert cab.state.qvel.abs().max() < 0.05  # damping has brought every drawer to rest
    assert torch.allclose(cab.state.root_pose, cab.default_pose, atol=1e-6)  # the base is fixed


def test_more_damping_slows_the_drawer_more():
    travelled = []
    for damping in (1.0, 8.0):
        w = World(drawer_cabinet(pose=Pose(SPAWN), travel=TRAVEL, damping=damping), num_envs=1)
        try:
            w.cabinet.set_qvel(torch.tensor([[0.4]]))
            w.backend.step(50)
            travelled.append(float(w.cabinet.state.qpos[0, 0]))
        finally:
            w.close()
    assert travelled[0] > 1.5 * travelled[1] > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_door_turns_about_its_hinge(backend):
    w = World(door_cabinet(pose=Pose(SPAWN)), num_envs=2, backend=backend)
    try:
        door = w.cabinet
        assert door.joint_names == ["door_joint"]
        assert torch.allclose(door.qlimits, torch.tensor([[0.0, math.pi / 2]]), atol=1e-6)
        door.set_qpos(torch.tensor([[0.0], [math.pi / 2]]))
        pose = door.state.link_pose("door")
        # Opened a quarter turn about +z: the door frame's orientation is a 90 degree yaw.
        assert torch.allclose(pose[1, 3:], torch.tensor(yaw_quat(math.pi / 2)), atol=1e-5)
        assert torch.allclose(pose[0, 3:], torch.tensor([1.0, 0, 0, 0]), atol=1e-5)
        local = pose[:, :3] - w.scene.env_origins
        assert torch.allclose(local[0], local[1], atol=1e-5)  # the hinge axis does not move
        assert torch.allclose(local[0], torch.tensor([SPAWN[0] - 0.15, SPAWN[1] - 0.2, 0.15]), atol=1e-5)
        door.set_qvel(torch.tensor([[2.0], [0.0]]))
        w.backend.step(20)
        assert 0.05 < float(door.state.qpos[0, 0]) < math.pi / 2
    finally:
        w.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_free_base_falls_onto_the_ground_and_takes_root_velocity(backend):
    spec = Articulation("Box", [
        Link("base", [Cuboid("b", (0.2, 0.2, 0.1), physics=Physics.rigid(mass=1.0))]),
        Link("lid", [Cuboid("l", (0.2, 0.2, 0.02), physics=Physics.rigid(mass=0.2))], parent="base",
             joint=Joint.revolute((0, 1, 0), (0.0, 1.5), origin=Pose((0, 0, 0.06)), damping=0.1)),
    ], pose=Pose((0.0, 0.0, 0.5)), fix_base=False)
    w = World(spec, num_envs=2, backend=backend)
    try:
        box_ = w.cabinet
        box_.set_velocity(torch.tensor([[0.0, 0.0, 0.0, 0, 0, 0], [1.0, 0, 0, 0, 0, 0]]))
        assert torch.allclose(box_.state.root_linear_velocity[1], torch.tensor([1.0, 0, 0]), atol=1e-6)
        w.backend.step(150)
        z = box_.state.root_pose[:, 2]
        assert torch.allclose(z, torch.full((2,), 0.05), atol=5e-3)  # resting on the ground
        moved = box_.state.root_pose[:, 0] - box_.default_pose[:, 0]
        assert abs(float(moved[0])) < 1e-3 and float(moved[1]) > 0.1
    finally:
        w.close()


def test_links_collide_with_a_prop_in_their_env():
    scene = Scene(2, SPACING)
    cab = scene.add(ArticulatedProp(drawer_cabinet(pose=Pose(SPAWN), travel=TRAVEL)), at="/World/Cabinet")
    # A heavy block stands in front of the drawer: its face at x = 0.5, the handle's front at 0.59.
    block = scene.add(Prop(Cuboid("Block", (0.1, 0.3, 0.3), Pose((0.45, 0.1, 0.15)), Physics.rigid(mass=50.0))),
                      at="/World/Block")
    scene.add_ground()
    backend = make_backend("physx_cpu", 2, scene.env_origins.numpy(), SimConfig(env_spacing=SPACING))
    try:
        scene.attach(backend)
        block.set_pose(block.default_pose[1:] + torch.tensor([0.0, 0.0, 3.0, 0, 0, 0, 0]), env_ids=[1])  # away
        cab.set_qvel(torch.full((2, 1), 0.5))
        backend.step(60)
        q = cab.state.qpos[:, 0]
        assert float(q[0]) == pytest.approx(0.09, abs=0.01)  # env 0: stopped by the block
        assert float(q[1]) > 0.12  # env 1 (block lifted away): nothing in the way
    finally:
        backend.close()
