"""Scene: prim-path registry (segment-safe), env paths and env origins."""

import numpy as np
import pytest
import torch

from simulo_envs import Cuboid, Physics, Pose, Prop, Scene, SimConfig
from simulo_envs.cloner.grid import grid_transforms
from simulo_envs.sim import make_backend


def block(name="Block"):
    return Prop(Cuboid(name, (0.05,) * 3, Pose([0.5, 0, 0.025]), Physics.rigid(mass=0.05)))


def test_add_registers_prop_and_binds_path_and_name():
    scene = Scene(3, 2.0)
    prop = block()
    out = scene.add(prop, at="/World/Block")
    assert out is prop
    assert prop.path == "/World/Block"
    assert prop.name == "Block"
    assert scene.objects == {"/World/Block": prop}


def test_add_bare_shape_wraps_it_in_a_prop():
    scene = Scene(2, 1.0)
    out = scene.add(Cuboid("Cube", (0.1,) * 3), at="/World/Cube")
    assert isinstance(out, Prop)
    assert out.path == "/World/Cube"
    assert scene.objects["/World/Cube"] is out


def test_duplicate_path_raises():
    scene = Scene(2, 1.0)
    scene.add(block(), at="/World/Block")
    with pytest.raises(ValueError, match="already"):
        scene.add(block(), at="/World/Block")
    with pytest.raises(ValueError, match="already"):
        scene.add(block(), at="/World/Block/")  # trailing slash is the same path


def test_same_prop_twice_raises():
    scene = Scene(2, 1.0)
    prop = block()
    scene.add(prop, at="/World/A")
    with pytest.raises(ValueError):
        scene.add(prop, at="/World/B")


@pytest.mark.parametrize("path", ["/Block", "/Worlds/Block", "/WorldBlock", "World/Block", "/World", "/World/",
                                  "", "/", "/world/Block", "/World//Block"])
def test_path_outside_world_raises(path):
    scene = Scene(2, 1.0)
    with pytest.raises(ValueError):
        scene.add(block(), at=path)
    assert scene.objects == {}


@pytest.mark.parametrize("path", ["/World/envs", "/World/envs/Block", "/World/envs/env_0/Block"])
def test_envs_root_is_reserved(path):
    scene = Scene(2, 1.0)
    with pytest.raises(ValueError, match="envs"):
        scene.add(block(), at=path)


def test_envs_prefix_on_segment_boundary_is_allowed():
    scene = Scene(2, 1.0)
    prop = scene.add(block(), at="/World/envsX")
    assert prop.path == "/World/envsX"


def test_segment_boundaries_robot_and_robotarm_are_distinct():
    scene = Scene(2, 1.0)
    a = scene.add(block("A"), at="/World/Robot")
    b = scene.add(block("B"), at="/World/RobotArm")
    c = scene.add(block("C"), at="/World/Robot/Arm")  # nested under /World/Robot is a different path
    assert list(scene.objects) == ["/World/Robot", "/World/RobotArm", "/World/Robot/Arm"]
    assert scene.objects["/World/Robot"] is a
    assert scene.objects["/World/RobotArm"] is b
    assert scene.objects["/World/Robot/Arm"] is c
    assert scene.env_path("/World/Robot", 1) == "/World/envs/env_1/Robot"
    assert scene.env_path("/World/RobotArm", 1) == "/World/envs/env_1/RobotArm"


def test_env_path():
    scene = Scene(12, 1.0)
    scene.add(block(), at="/World/Block")
    scene.add(block("Lid"), at="/World/Table/Lid")
    assert scene.env_path("/World/Block", 0) == "/World/envs/env_0/Block"
    assert scene.env_path("/World/Block", 3) == "/World/envs/env_3/Block"
    assert scene.env_path("/World/Block", 11) == "/World/envs/env_11/Block"
    assert scene.env_path("/World/Table/Lid", 2) == "/World/envs/env_2/Table/Lid"
    with pytest.raises(IndexError):
        scene.env_path("/World/Block", 12)
    with pytest.raises(KeyError):
        scene.env_path("/World/Nope", 0)
    with pytest.raises(KeyError):
        scene.env_path("/World/Bloc", 0)


@pytest.mark.parametrize("n,spacing", [(1, 2.0), (4, 2.0), (5, 1.5), (9, 0.0), (16, 3.0)])
def test_env_origins_equal_grid_transforms(n, spacing):
    scene = Scene(n, spacing)
    origins = scene.env_origins
    assert origins.shape == (n, 3)
    assert origins.dtype == torch.float32
    expected, _ = grid_transforms(n, spacing)
    assert torch.equal(origins, expected)


def test_env_origins_are_fresh():
    scene = Scene(4, 2.0)
    origins = scene.env_origins
    origins += 100.0
    assert torch.equal(scene.env_origins, grid_transforms(4, 2.0)[0])


def test_env_origins_spacing_zero_all_at_world_origin():
    assert torch.count_nonzero(Scene(4, 0.0).env_origins) == 0


def test_env_origins_neighbours_are_spacing_apart():
    origins = Scene(4, 2.0).env_origins
    d = torch.cdist(origins, origins)
    off = d[~torch.eye(4, dtype=torch.bool)]
    assert off.min().item() == pytest.approx(2.0)


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_bad_num_envs_raises(n):
    with pytest.raises(ValueError):
        Scene(n, 1.0)


def test_add_wrong_type_raises():
    scene = Scene(2, 1.0)
    with pytest.raises(TypeError):
        scene.add("not a prop", at="/World/X")


def test_attach_places_clones_at_env_origins_and_add_after_attach_raises():
    scene = Scene(3, 2.0)
    prop = scene.add(block(), at="/World/Block")
    backend = make_backend("physx_cpu", 3, scene.env_origins.numpy(), SimConfig(env_spacing=2.0))
    try:
        scene.attach(backend)
        expected = torch.tensor([0.5, 0, 0.025]) + scene.env_origins
        assert torch.allclose(prop.state.pose[:, :3], expected, atol=1e-6)
        with pytest.raises(ValueError):
            scene.add(block("Other"), at="/World/Other")
        with pytest.raises(RuntimeError):
            scene.attach(backend)
    finally:
        backend.close()
