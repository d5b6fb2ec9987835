"""The isaaclab-cloner seed's behaviours: the TerrainImporter grid, iter_sources on concrete paths,
combination edge cases, spawner variant counts, and the replication queue run against our Scene."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
import torch

from simulo_envs import MultiShapeProp, Prop, Scene
from simulo_envs.authoring import Cuboid, Pose, Sphere
from simulo_envs.cloner import (
    REPLICATION_QUEUE,
    ClonePlan,
    InclusionSet,
    PrototypeCfg,
    ReplicateSession,
    SceneReplicateContext,
    clone_plan_from_env_0,
    grid_transforms,
    iter_sources,
    make_clone_plan,
    make_valid_clone_combinations,
    num_spawn_variants,
    path_to_source,
    queue_replication,
    replicate,
)
from simulo_envs.sim import SimConfig, make_backend

ENV = "/World/envs/env_{}"


@pytest.fixture(autouse=True)
def empty_queue():
    REPLICATION_QUEUE.clear()
    yield
    REPLICATION_QUEUE.clear()


# ---------------------------------------------------------------- grid_transforms (TerrainImporter layout)


def terrain_grid(n: int, spacing: float, up_axis: str) -> list[list[float]]:
    """Written from the documented rule of Isaac Lab's TerrainImporter grid: rows = ceil(n /
    floor(sqrt n)), cols = ceil(n / rows), filled row by row; x = -(row - (rows-1)/2) * spacing,
    y = (col - (cols-1)/2) * spacing; the up axis takes 0 and the plane is (x, 0, y) for "y" up."""
    rows = math.ceil(n / math.floor(math.sqrt(n)))
    cols = math.ceil(n / rows)
    out = []
    for k in range(n):
        r, c = divmod(k, cols)
        x = -(r - (rows - 1) / 2) * spacing
        y = (c - (cols - 1) / 2) * spacing
        out.append({"z": [x, y, 0.0], "y": [x, 0.0, y], "x": [0.0, x, y]}[up_axis])
    return out


@pytest.mark.parametrize("up_axis", ["z", "y", "x"])
@pytest.mark.parametrize("n", range(1, 13))
def test_grid_matches_the_terrain_importer_rule(n, up_axis):
    pos, quat = grid_transforms(n, 1.5, up_axis=up_axis)
    assert pos.shape == (n, 3) and pos.dtype == torch.float32
    torch.testing.assert_close(pos, torch.tensor(terrain_grid(n, 1.5, up_axis)), rtol=0.0, atol=1e-6)
    assert quat.tolist() == [[1.0, 0.0, 0.0, 0.0]] * n  # scalar-first identity


def test_grid_examples_by_hand():
    # Two envs at spacing 2 sit at (+1, 0) and (-1, 0): two rows of one column.
    assert grid_transforms(2, 2.0)[0].tolist() == [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]
    # Three envs: three rows of one column.
    assert grid_transforms(3, 1.0)[0].tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]
    # Four envs with y up: the grid spans x and z.
    assert grid_transforms(4, 2.0, up_axis="y")[0].tolist() == [
        [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, -1.0], [-1.0, 0.0, 1.0]]


def test_scene_origins_and_built_bodies_follow_the_grid():
    scene = Scene(3, 2.0)
    block = scene.add(Prop(Cuboid("Block", size=(0.1, 0.1, 0.1), pose=Pose(position=[0.5, 0.0, 0.05]))),
                      at="/World/Block")
    assert scene.env_origins.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-2.0, 0.0, 0.0]]
    backend = make_backend("physx_cpu", 3, scene.env_origins.numpy(), SimConfig(env_spacing=2.0))
    scene.attach(backend)
    expected = torch.tensor([[2.5, 0, 0.05], [0.5, 0, 0.05], [-1.5, 0, 0.05]])
    torch.testing.assert_close(block.state.pose[:, :3], expected, rtol=0.0, atol=1e-5)
    backend.close()


# ---------------------------------------------------------------- iter_sources on concrete paths


def test_iter_sources_on_a_concrete_path_yields_every_populated_row():
    robot = SimpleNamespace(prim_path="/World/envs/env_.*/Robot", spawn=SimpleNamespace(variants=["a", "b", "c"]))
    plan = make_clone_plan([robot], 6, 1.0)
    rows = list(iter_sources(plan, "/World/envs/env_3/Robot/base"))
    assert rows == [
        ("/World/envs/env_0/Robot", "/World/envs/env_{}/Robot", "/World/envs/env_0/Robot/base", (0, 3)),
        ("/World/envs/env_1/Robot", "/World/envs/env_{}/Robot", "/World/envs/env_1/Robot/base", (1, 4)),
        ("/World/envs/env_2/Robot", "/World/envs/env_{}/Robot", "/World/envs/env_2/Robot/base", (2, 5)),
    ]
    assert list(iter_sources(plan, "/World/envs/env_.*/Robot/base")) == rows
    # The one variant env 3 holds is path_to_source's answer.
    assert path_to_source(plan, "/World/envs/env_3/Robot/base")[0] == "/World/envs/env_0/Robot/base"


def test_an_unpopulated_nearer_template_does_not_hide_a_populated_ancestor():
    plan = ClonePlan(("/World/envs/env_0", "/World/proto/Robot"), (ENV, ENV + "/Robot"),
                     torch.tensor([[True, True, True], [False, False, False]]))
    assert list(iter_sources(plan, "/World/envs/env_2/Robot/base")) == [
        ("/World/envs/env_0", ENV, "/World/envs/env_0/Robot/base", (0, 1, 2))]
    # path_to_source ranks every row: the empty nearest owner answers None (stage fallback).
    assert path_to_source(plan, "/World/envs/env_2/Robot/base") is None


# ---------------------------------------------------------------- make_valid_clone_combinations edges


def test_no_assets_raises_and_an_empty_combination_list_is_the_full_product():
    with pytest.raises(ValueError, match="at least one asset"):
        make_valid_clone_combinations([], [])
    full = [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert make_valid_clone_combinations(["A", "B"], [2, 3], []).tolist() == full
    assert make_valid_clone_combinations(["A", "B"], [2, 3], None).tolist() == full
    assert make_valid_clone_combinations(["A", "B"], [2, 3], ()).tolist() == full


def test_a_plan_with_nothing_env_scoped_is_empty():
    plan = make_clone_plan([SimpleNamespace(prim_path="/World/Ground", spawn=object())], 3, 1.0)
    assert plan.sources == () and tuple(plan.clone_mask.shape) == (0, 3)
    assert plan.env_ids.tolist() == [0, 1, 2] and plan.positions.shape == (3, 3)


# ---------------------------------------------------------------- num_spawn_variants on Isaac Lab spawner cfgs


@dataclass
class MultiAssetSpawnerCfg:  # the fields Isaac Lab's spawner config counts by
    assets_cfg: list = field(default_factory=list)
    random_choice: bool = True


@dataclass
class MultiUsdFileCfg:
    usd_path: str | list = ""


@dataclass
class UsdFileCfg:
    usd_path: str = ""


def test_num_spawn_variants_counts_assets_and_usd_paths():
    assert num_spawn_variants(MultiAssetSpawnerCfg(assets_cfg=["cone", "cuboid", "sphere"])) == 3
    assert num_spawn_variants(MultiUsdFileCfg(usd_path=["mug.usd", "bowl.usd"])) == 2
    assert num_spawn_variants(MultiUsdFileCfg(usd_path=("a.usd",))) == 1
    assert num_spawn_variants(MultiUsdFileCfg(usd_path="mug.usd")) == 1
    assert num_spawn_variants(UsdFileCfg(usd_path="robot.usd")) == 1
    with pytest.raises(ValueError, match="empty"):
        num_spawn_variants(MultiAssetSpawnerCfg(assets_cfg=[]))
    with pytest.raises(ValueError, match="empty"):
        num_spawn_variants(MultiUsdFileCfg(usd_path=[]))
    # make_clone_plan expands them into one row per variant.
    cfg = SimpleNamespace(prim_path="/World/envs/env_.*/Object", spawn=MultiUsdFileCfg(usd_path=["a.usd", "b.usd"]))
    plan = make_clone_plan([cfg], 4, 1.0)
    assert plan.sources == ("/World/envs/env_0/Object", "/World/envs/env_1/Object")
    assert plan.clone_mask.tolist() == [[True, False, True, False], [False, True, False, True]]


# ---------------------------------------------------------------- the replication queue on our Scene


def block_cfg(name="Block", x=0.5):
    prop = Prop(Cuboid(name, size=(0.05, 0.05, 0.05), pose=Pose(position=[x, 0.0, 0.025])))
    return PrototypeCfg(prim_path=f"/World/envs/env_.*/{name}", spawn=prop)


def test_the_seed_flow_runs_against_our_scene():
    scene = Scene(4, env_spacing=2.0)
    ground = SimpleNamespace(prim_path="/World/Ground", spawn=None)  # global: not cloned
    block, ball = block_cfg(), block_cfg("Ball", x=0.3)
    for cfg in (block, ball, ground):  # what each asset constructor does
        queue_replication(cfg)
    positions, _ = grid_transforms(4, 3.0)
    plan = clone_plan_from_env_0("/World/envs/env_0", "/World/envs/env_{}", 4, "cpu", positions)
    assert plan.cfg_rows == {id(block): (0,), id(ball): (0,)}
    replicate(plan, stage=scene)
    assert REPLICATION_QUEUE == []
    assert scene.clone_plan is plan
    assert list(scene.objects) == ["/World/Block", "/World/Ball"]
    assert torch.equal(scene.env_origins, positions)
    assert path_to_source(scene.clone_plan, "/World/envs/env_3/Block") == (
        "/World/envs/env_0/Block", "/World/envs/env_.*", "/Block")
    backend = make_backend("physx_cpu", 4, scene.env_origins.numpy(), SimConfig(env_spacing=3.0))
    scene.attach(backend)
    expected = positions + torch.tensor([0.5, 0.0, 0.025])
    assert torch.allclose(block.spawn.state.pose[:, :3], expected, atol=1e-6)
    assert torch.allclose(ball.spawn.default_pose[:, :3], positions + torch.tensor([0.3, 0.0, 0.025]))
    backend.close()


def test_variants_follow_the_rows_of_a_heterogeneous_plan():
    shapes = [Cuboid("c", size=(0.05,) * 3), Sphere("s", radius=0.03), Cuboid("t", size=(0.1, 0.02, 0.02))]
    cfg = PrototypeCfg("/World/envs/env_.*/Thing", MultiShapeProp("Thing", shapes))
    scene = Scene(5, 1.0)
    with ReplicateSession([cfg], 5, 1.0, "cpu", stage=scene) as session:
        queue_replication(cfg)
        assert session.plan.sources == tuple(f"/World/envs/env_{v}/Thing" for v in range(3))
    backend = make_backend("physx_cpu", 5, scene.env_origins.numpy(), SimConfig(env_spacing=1.0))
    scene.attach(backend)
    assert cfg.spawn.variant_of_env.tolist() == [0, 1, 2, 0, 1]
    backend.close()
    # The same prop copied from env 0 everywhere: every env holds env 0's variant.
    cfg0 = PrototypeCfg("/World/envs/env_.*/Thing", MultiShapeProp("Thing", shapes))
    scene0 = Scene(3, 1.0)
    queue_replication(cfg0)
    replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu"), stage=scene0)
    backend = make_backend("physx_cpu", 3, scene0.env_origins.numpy(), SimConfig(env_spacing=1.0))
    scene0.attach(backend)
    assert cfg0.spawn.variant_of_env.tolist() == [0, 0, 0]
    backend.close()


def test_objects_added_directly_are_covered_by_the_env_root_row():
    scene = Scene(2, 1.0)
    robot_like = scene.add(Cuboid("Base", size=(0.2, 0.2, 0.2)), at="/World/Base")
    cfg = block_cfg()
    queue_replication(cfg)
    replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 2, "cpu"), stage=scene)
    assert list(scene.objects) == ["/World/Base", "/World/Block"]
    assert scene.objects["/World/Base"] is robot_like


def test_replicate_refuses_bad_input_and_changes_nothing():
    scene = Scene(3, 1.0)
    # A plan that leaves env 2 without the block.
    cfg = block_cfg()
    queue_replication(cfg)
    plan = ClonePlan(("/World/envs/env_0/Block",), (ENV + "/Block",), torch.tensor([[True, True, False]]),
                     env_ids=torch.arange(3), cfg_rows={id(cfg): (0,)})
    with pytest.raises(ValueError, match=r"envs \[2\] get no copy"):
        replicate(plan, stage=scene)
    assert REPLICATION_QUEUE == [] and scene.objects == {} and cfg.spawn.path is None
    with pytest.raises(RuntimeError):
        scene.clone_plan
    # Another env count, no env ids, a stage that is not a Scene, physics off.
    queue_replication(cfg)
    with pytest.raises(ValueError, match="env_ids"):
        replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 4, "cpu"), stage=scene)
    with pytest.raises(ValueError, match="env_ids is required"):
        replicate(ClonePlan(("/World/envs/env_0",), (ENV,), torch.ones(1, 3, dtype=torch.bool)), stage=scene)
    with pytest.raises(TypeError, match="Scene"):
        replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu"), stage=object())
    with pytest.raises(ValueError, match="replicate_physics"):
        replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu"), stage=scene, replicate_physics=False)
    with pytest.raises(TypeError, match="prim_path"):
        queue_replication(SimpleNamespace(spawn=None))
    assert scene.objects == {}
    # A good replicate publishes once; a second one, or scene.add afterwards, is refused.
    queue_replication(cfg)
    replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu"), stage=scene)
    with pytest.raises(RuntimeError, match="replicated once"):
        replicate(clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu"), stage=scene)
    with pytest.raises(ValueError, match="already published"):
        scene.add(Cuboid("Late", size=(0.1, 0.1, 0.1)), at="/World/Late")


def test_a_failing_session_empties_the_queue_and_leaves_the_scene():
    scene, cfg = Scene(2, 1.0), block_cfg()
    with pytest.raises(KeyError):
        with ReplicateSession([cfg], 2, 1.0, stage=scene):
            queue_replication(cfg)
            raise KeyError("boom")
    assert REPLICATION_QUEUE == [] and scene.objects == {}
    with pytest.raises(RuntimeError, match="with block"):
        ReplicateSession([cfg], 2, 1.0, stage=scene).plan


def test_scene_context_queue_rows_directly():
    scene = Scene(3, 1.0)
    scene.add(Cuboid("Block", size=(0.1, 0.1, 0.1)), at="/World/Block")
    ctx = SceneReplicateContext(scene)
    ctx.queue("/World/envs/env_0", ENV, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"envs \[2\]"):
        ctx.replicate()
    ctx.queue("/World/envs/env_2", ENV, torch.tensor([2]), positions=torch.zeros(3, 3))
    ctx.replicate()
    assert torch.count_nonzero(scene.env_origins) == 0
    with pytest.raises(ValueError, match="outside"):
        ctx.queue("/World/envs/env_0", ENV, torch.tensor([3]))


def test_scene_honours_clone_combinations_and_refuses_an_absent_object():
    from simulo_envs.cloner import CloneCfg

    shapes = [Cuboid("c", size=(0.05,) * 3), Sphere("s", radius=0.03)]
    # Two combinations holding both assets, weights 1 and 2: rows A0, B0, B1, A1, B0, B1.
    both = ["Thing", "Block"]
    scene = Scene(4, 1.0, clone_cfg=CloneCfg(clone_combinations=[InclusionSet(both, 1), InclusionSet(both, 2)]))
    thing = scene.add(MultiShapeProp("Thing", shapes), at="/World/Thing")
    scene.add(Cuboid("Block", size=(0.05,) * 3), at="/World/Block")
    backend = make_backend("physx_cpu", 4, scene.env_origins.numpy(), SimConfig(env_spacing=1.0))
    scene.attach(backend)
    assert thing.variant_of_env.tolist() == [0, 0, 1, 1]  # without the combinations: [0, 1, 0, 1]
    backend.close()
    # Combinations that leave the block out of some envs cannot apply: every env needs each object.
    scene = Scene(2, 1.0, clone_cfg=CloneCfg(clone_combinations=[InclusionSet(["Thing"]), InclusionSet(["Block"])]))
    scene.add(MultiShapeProp("Thing", shapes), at="/World/Thing")
    scene.add(Cuboid("Block", size=(0.05,) * 3), at="/World/Block")
    backend = make_backend("physx_cpu", 2, scene.env_origins.numpy(), SimConfig(env_spacing=1.0))
    with pytest.raises(ValueError, match="get no copy"):
        scene.attach(backend)
    backend.close()
    with pytest.raises(ValueError, match="replicate_physics"):
        CloneCfg(replicate_physics=False)
