"""Authoring types: Pose, shapes, Physics, Material are plain data validated at construction."""

import math

import pytest

from simulo_envs import Capsule, Cuboid, Cylinder, Material, Physics, Pose, Sphere
from simulo_envs.authoring import DEFAULT_DENSITY

NAN = float("nan")
INF = float("inf")


# ---------------------------------------------------------------- Pose
def test_pose_defaults_to_identity():
    pose = Pose()
    assert pose.position == (0.0, 0.0, 0.0)
    assert pose.quaternion == (1.0, 0.0, 0.0, 0.0)
    assert pose.to_list() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]


def test_pose_layout_is_position_then_scalar_first_quaternion():
    q = (math.cos(0.25), 0.0, 0.0, math.sin(0.25))
    pose = Pose(position=[0.5, -0.1, 0.025], quaternion=q)
    assert pose.position == (0.5, -0.1, 0.025)
    assert pose.to_list()[:3] == [0.5, -0.1, 0.025]
    assert pose.to_list()[3:] == pytest.approx(list(q), abs=1e-12)


def test_pose_normalises_quaternion():
    pose = Pose(quaternion=[2.0, 0.0, 0.0, 0.0])
    assert pose.quaternion == pytest.approx((1.0, 0.0, 0.0, 0.0))
    pose = Pose(quaternion=[1.0, 1.0, 1.0, 1.0])
    assert pose.quaternion == pytest.approx((0.5, 0.5, 0.5, 0.5))
    assert sum(q * q for q in pose.quaternion) == pytest.approx(1.0)


@pytest.mark.parametrize("quat", [[0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0]])
def test_pose_zero_quaternion_raises(quat):
    with pytest.raises(ValueError, match="quaternion"):
        Pose(quaternion=quat)


@pytest.mark.parametrize("position", [[NAN, 0, 0], [0, INF, 0], [0, 0, -INF]])
def test_pose_non_finite_position_raises(position):
    with pytest.raises(ValueError, match="position"):
        Pose(position=position)


@pytest.mark.parametrize("quat", [[NAN, 0, 0, 0], [1, 0, INF, 0]])
def test_pose_non_finite_quaternion_raises(quat):
    with pytest.raises(ValueError, match="quaternion"):
        Pose(quaternion=quat)


@pytest.mark.parametrize("position", [[0, 0], [0, 0, 0, 0], "abc"])
def test_pose_wrong_length_position_raises(position):
    with pytest.raises(ValueError):
        Pose(position=position)


def test_pose_wrong_length_quaternion_raises():
    with pytest.raises(ValueError):
        Pose(quaternion=[1, 0, 0])


# ---------------------------------------------------------------- shapes
def test_cuboid_fields():
    physics = Physics.rigid(mass=0.05)
    material = Material(static_friction=0.5, dynamic_friction=0.4, restitution=0.1, color=(1, 0, 0))
    pose = Pose(position=[0.5, 0.0, 0.025])
    box = Cuboid("Block", (0.05, 0.05, 0.05), pose, physics, material)
    assert box.name == "Block"
    assert box.size == (0.05, 0.05, 0.05)
    assert box.pose == pose
    assert box.physics is physics
    assert box.material is material
    assert box.volume == pytest.approx(0.05 ** 3)
    assert box.mass == pytest.approx(0.05)


def test_cuboid_keywords_as_in_the_seed():
    box = Cuboid(name="Block", size=(0.05, 0.05, 0.05), pose=Pose(position=[0.5, 0.0, 0.025]),
                 physics=Physics.rigid(mass=0.05))
    assert box.pose.position == (0.5, 0.0, 0.025)
    assert box.physics.kind == "rigid"
    assert box.physics.mass == 0.05


def test_shape_defaults():
    box = Cuboid("B")
    assert box.pose == Pose()
    assert box.physics.kind == "rigid"
    assert box.physics.density == DEFAULT_DENSITY
    assert box.mass == pytest.approx(DEFAULT_DENSITY * box.volume)
    assert isinstance(box.material, Material)


def test_sphere_cylinder_capsule_fields_and_volume():
    s = Sphere("S", radius=0.1)
    assert s.radius == 0.1
    assert s.volume == pytest.approx(4 / 3 * math.pi * 0.1 ** 3)
    c = Cylinder("C", radius=0.1, height=0.3)
    assert (c.radius, c.height) == (0.1, 0.3)
    assert c.volume == pytest.approx(math.pi * 0.01 * 0.3)
    k = Capsule("K", radius=0.1, height=0.3)
    assert (k.radius, k.height) == (0.1, 0.3)
    assert k.volume == pytest.approx(math.pi * 0.01 * 0.3 + 4 / 3 * math.pi * 0.001)


def test_density_gives_mass():
    s = Sphere("S", radius=0.1, physics=Physics.rigid(density=500.0))
    assert s.mass == pytest.approx(500.0 * 4 / 3 * math.pi * 0.001)


@pytest.mark.parametrize("size", [(-0.05, 0.05, 0.05), (0.05, 0.0, 0.05), (0.05, 0.05, NAN), (0.05, INF, 0.05)])
def test_cuboid_bad_size_raises(size):
    with pytest.raises(ValueError, match="size"):
        Cuboid("B", size)


def test_cuboid_size_wrong_length_raises():
    with pytest.raises(ValueError):
        Cuboid("B", (0.05, 0.05))


@pytest.mark.parametrize("radius", [-0.1, 0.0, NAN])
def test_sphere_bad_radius_raises(radius):
    with pytest.raises(ValueError, match="radius"):
        Sphere("S", radius=radius)


@pytest.mark.parametrize("cls", [Cylinder, Capsule])
@pytest.mark.parametrize("radius,height", [(-0.1, 0.2), (0.1, -0.2), (NAN, 0.2), (0.1, NAN), (0.0, 0.2)])
def test_cylinder_capsule_bad_dims_raise(cls, radius, height):
    with pytest.raises(ValueError):
        cls("C", radius=radius, height=height)


@pytest.mark.parametrize("name", ["", "a/b", None])
def test_bad_shape_name_raises(name):
    with pytest.raises(ValueError, match="name"):
        Cuboid(name)


def test_shape_bad_pose_type_raises():
    with pytest.raises(ValueError, match="pose"):
        Cuboid("B", pose=[0, 0, 0])


# ---------------------------------------------------------------- Physics
def test_physics_constructors():
    r = Physics.rigid(mass=0.05)
    assert (r.kind, r.mass, r.density) == ("rigid", 0.05, None)
    d = Physics.rigid(density=700)
    assert (d.kind, d.mass, d.density) == ("rigid", None, 700.0)
    default = Physics.rigid()
    assert default.density == DEFAULT_DENSITY and default.mass is None
    assert Physics.kinematic().kind == "kinematic"
    assert Physics.static().kind == "static"


@pytest.mark.parametrize("mass", [-0.05, 0.0, NAN, INF])
def test_physics_bad_mass_raises(mass):
    with pytest.raises(ValueError, match="mass"):
        Physics.rigid(mass=mass)


@pytest.mark.parametrize("density", [-1.0, 0.0, NAN])
def test_physics_bad_density_raises(density):
    with pytest.raises(ValueError, match="density"):
        Physics.rigid(density=density)


def test_physics_mass_and_density_raises():
    with pytest.raises(ValueError):
        Physics.rigid(mass=1.0, density=1000.0)


def test_physics_unknown_kind_raises():
    with pytest.raises(ValueError):
        Physics(kind="floating")


# ---------------------------------------------------------------- Material
def test_material_fields_and_rgb_padding():
    m = Material(static_friction=1.0, dynamic_friction=0.8, restitution=0.5, color=(0.1, 0.2, 0.3))
    assert (m.static_friction, m.dynamic_friction, m.restitution) == (1.0, 0.8, 0.5)
    assert m.color == pytest.approx((0.1, 0.2, 0.3, 1.0))
    assert Material(color=(0.1, 0.2, 0.3, 0.4)).color == pytest.approx((0.1, 0.2, 0.3, 0.4))


@pytest.mark.parametrize("kwargs", [
    dict(static_friction=-0.1),
    dict(dynamic_friction=-1.0),
    dict(static_friction=NAN),
    dict(restitution=-0.1),
    dict(restitution=1.5),
    dict(restitution=NAN),
    dict(color=(1.2, 0, 0, 1)),
    dict(color=(NAN, 0, 0, 1)),
    dict(color=(1, 0)),
])
def test_material_bad_values_raise(kwargs):
    with pytest.raises(ValueError):
        Material(**kwargs)


def test_authoring_types_are_frozen():
    pose = Pose()
    with pytest.raises(Exception):
        pose.position = (1.0, 0.0, 0.0)
    box = Cuboid("B")
    with pytest.raises(Exception):
        box.size = (1.0, 1.0, 1.0)
