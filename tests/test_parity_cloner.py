"""Each API point of the isaaclab-cloner seed, tried as the seed writes it (docs/parity.md, Cloner).

One check per table row, named by the row's id (C1..C59). A row marked "same" in the table
passes here with the seed's own usage; a row marked "different" asserts our documented
behaviour instead; a "missing" row asserts the name is absent, so the table cannot drift.
"""

from __future__ import annotations

import importlib
import inspect
from types import SimpleNamespace

import pytest
import torch

import simulo_envs.cloner as cloner
from simulo_envs import Prop, Scene
from simulo_envs.authoring import Cuboid
from simulo_envs.sim import SimConfig, make_backend

ENV = "/World/envs/env_{}"
CHECKS = {}


def check(fn):
    CHECKS[fn.__name__.split("_")[0].upper()] = fn
    return fn


@pytest.fixture(autouse=True)
def empty_queue():
    cloner.REPLICATION_QUEUE.clear()
    yield
    cloner.REPLICATION_QUEUE.clear()


def params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def cfg(name, variants=1):
    spawn = SimpleNamespace(assets_cfg=[f"{name}{v}" for v in range(variants)]) if variants > 1 else object()
    return SimpleNamespace(prim_path=f"/World/envs/env_.*/{name}", spawn=spawn)


def block(name="Block"):
    return cloner.PrototypeCfg(f"/World/envs/env_.*/{name}", Prop(Cuboid(name, size=(0.05, 0.05, 0.05))))


# ---------------------------------------------------------------- package surface


@check
def c1_path_submodule():
    assert cloner.path.rebase("/World/envs/env_0/Robot", "/World/envs/env_0", "/World/envs/env_3") == \
        "/World/envs/env_3/Robot"


@check
def c2_query_submodule():
    plan = cloner.clone_plan_from_env_0("/World/envs/env_0", ENV, 2, "cpu")
    assert cloner.query.path_env_ids(plan, "/World/envs/env_0/Robot") == (0, 1)


@check
def c3_cloneplan_class():
    assert cloner.ClonePlan is cloner.plan.ClonePlan


@check
def c4_clonecfg():
    c = cloner.CloneCfg(clone_strategy=cloner.sequential, clone_combinations=[cloner.InclusionSet(["A"])],
                        device="cpu", replicate_physics=True)
    assert c.clone_strategy is cloner.sequential and c.device == "cpu"


@check
def c5_inclusionset():
    s = cloner.InclusionSet(assets=["lift_table", "lift_object"], weight=1)
    assert s.assets == ("lift_table", "lift_object") and s.weight == 1


@check
def c6_replicatesession():
    assert params(cloner.ReplicateSession)[:4] == ["cfgs", "num_clones", "env_spacing", "device"]
    assert {"stage", "clone_strategy", "valid_set", "replicate_physics", "env_template"} <= set(
        params(cloner.ReplicateSession))


@check
def c7_usdreplicatecontext():  # different: named SceneReplicateContext, its stage is a Scene
    assert not hasattr(cloner, "UsdReplicateContext")
    ctx = cloner.SceneReplicateContext(Scene(2))
    assert callable(ctx.queue) and callable(ctx.queue_mapping) and callable(ctx.replicate)


@check
def c8_clone_plan_from_env_0_signature():
    assert params(cloner.clone_plan_from_env_0)[:5] == ["source", "destination", "num_clones", "device", "positions"]


@check
def c9_make_clone_plan_signature():
    assert params(cloner.make_clone_plan)[:4] == ["cfgs", "num_clones", "env_spacing", "device"]
    assert {"clone_strategy", "valid_set"} <= set(params(cloner.make_clone_plan))


@check
def c10_make_valid_clone_combinations_signature():
    assert params(cloner.make_valid_clone_combinations) == [
        "asset_names", "variant_counts", "clone_combinations", "device", "all_asset_names"]


@check
def c11_num_spawn_variants():
    assert cloner.num_spawn_variants(SimpleNamespace(assets_cfg=[1, 2])) == 2


@check
def c12_grid_transforms_signature():
    assert params(cloner.grid_transforms) == ["N", "spacing", "up_axis", "device"]
    pos, ori = cloner.grid_transforms(4, 1.0, "z", "cpu")
    assert pos.shape == (4, 3) and ori.shape == (4, 4)


@check
def c13_replicate():  # different: replicate_physics=False is refused
    assert params(cloner.replicate) == ["plan", "stage", "replicate_physics"]
    plan = cloner.clone_plan_from_env_0("/World/envs/env_0", ENV, 2, "cpu")
    with pytest.raises(ValueError, match="replicate_physics"):
        cloner.replicate(plan, stage=Scene(2), replicate_physics=False)
    cloner.replicate(plan, stage=Scene(2), replicate_physics=True)


@check
def c14_queue_replication():
    c = block()
    cloner.queue_replication(c)
    assert cloner.REPLICATION_QUEUE == [c]


@check
def c15_usd_replicate():  # missing: there is no USD stage
    assert not hasattr(cloner, "usd_replicate")


@check
def c16_filter_collisions():  # different: reports the isolation the backend applies
    assert params(cloner.filter_collisions) == ["backend"]
    scene = Scene(3, 1.0)
    backend = make_backend("physx_cpu", 3, scene.env_origins.numpy(), SimConfig(env_spacing=1.0))
    scene.attach(backend)
    groups = cloner.filter_collisions(backend)
    assert len(groups) == 3 and len({tuple(g) for g in groups}) == 3
    backend.close()


# ---------------------------------------------------------------- ClonePlan


def a_plan():
    return cloner.ClonePlan(("/World/envs/env_0",), (ENV,), torch.ones(1, 3, dtype=torch.bool))


@check
def c17_sources():
    assert a_plan().sources == ("/World/envs/env_0",)


@check
def c18_destinations():
    assert a_plan().destinations == (ENV,)


@check
def c19_clone_mask():
    assert a_plan().clone_mask.dtype == torch.bool and a_plan().clone_mask.shape == (1, 3)


@check
def c20_env_ids():
    assert a_plan().env_ids is None
    assert cloner.clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu").env_ids.tolist() == [0, 1, 2]


@check
def c21_positions():
    assert a_plan().positions is None
    assert cloner.make_clone_plan([cfg("R")], 3, 2.0, "cpu").positions.shape == (3, 3)


@check
def c22_cfg_rows():
    assert a_plan().cfg_rows == {}


@check
def c23_init():
    plan = cloner.ClonePlan(sources=("/a",), destinations=("/b/{}",), clone_mask=torch.ones(1, 2, dtype=torch.bool),
                            env_ids=torch.tensor([0, 1]), positions=torch.zeros(2, 3), cfg_rows={7: (0,)})
    assert plan.cfg_rows == {7: (0,)}
    with pytest.raises(Exception):
        plan.sources = ()  # frozen


# ---------------------------------------------------------------- grid_transforms


@check
def c24_terrain_importer_layout():
    assert cloner.grid_transforms(2, 2.0)[0].tolist() == [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]
    assert cloner.grid_transforms(3, 1.0)[0][:, 0].tolist() == [1.0, 0.0, -1.0]


@check
def c25_up_axis():
    assert cloner.grid_transforms(2, 2.0, up_axis="y")[0].tolist() == [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]
    assert cloner.grid_transforms(4, 2.0, up_axis="y")[0][0].tolist() == [1.0, 0.0, -1.0]
    assert cloner.grid_transforms(4, 2.0, up_axis="x")[0][0].tolist() == [0.0, 1.0, -1.0]


@check
def c26_orientation_order():  # different: identity quaternions are scalar-first (w, x, y, z)
    assert cloner.grid_transforms(2)[1].tolist() == [[1.0, 0.0, 0.0, 0.0]] * 2


# ---------------------------------------------------------------- num_spawn_variants


@check
def c27_multi_asset():
    assert cloner.num_spawn_variants(SimpleNamespace(assets_cfg=["cone", "cuboid", "sphere"], random_choice=True)) == 3


@check
def c28_multi_usd():
    assert cloner.num_spawn_variants(SimpleNamespace(usd_path=["a.usd", "b.usd"])) == 2
    assert cloner.num_spawn_variants(SimpleNamespace(usd_path="a.usd")) == 1


@check
def c29_other_spawner():
    assert cloner.num_spawn_variants(SimpleNamespace(radius=0.1)) == 1


# ---------------------------------------------------------------- make_valid_clone_combinations


@check
def c30_weighted_round_robin():
    rows = cloner.make_valid_clone_combinations(
        ["A", "B"], [1, 2], [cloner.InclusionSet(["A"], 2), cloner.InclusionSet(["B"], 1)])
    assert rows.tolist() == [[0, -1], [0, -1], [-1, 0], [0, -1], [0, -1], [-1, 1]]


@check
def c31_unmentioned_active_absent_minus_one():
    # C is named by no combination: active in every row; A and B are absent where not named.
    rows = cloner.make_valid_clone_combinations(["A", "B", "C"], [1, 1, 2],
                                                [cloner.InclusionSet(["A"]), cloner.InclusionSet(["B"])])
    assert rows.tolist() == [[0, -1, 0], [-1, 0, 0], [0, -1, 1], [-1, 0, 1]]


@check
def c32_none_is_full_product():
    full = [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert cloner.make_valid_clone_combinations(["A", "B"], [2, 2]).tolist() == full
    assert cloner.make_valid_clone_combinations(["A", "B"], [2, 2], []).tolist() == full


@check
def c33_all_asset_names():
    rows = cloner.make_valid_clone_combinations(["A"], [2], [cloner.InclusionSet(["A", "Table"])],
                                                all_asset_names=["A", "Table"])
    assert rows.tolist() == [[0], [1]]


@check
def c34_raises_value_error():
    for bad in [([], []), (["A"], [1, 2]), (["A"], [0])]:
        with pytest.raises(ValueError):
            cloner.make_valid_clone_combinations(*bad)
    with pytest.raises(ValueError):
        cloner.make_valid_clone_combinations(["A"], [1], [cloner.InclusionSet(["A"], 0)])
    with pytest.raises(ValueError):
        cloner.make_valid_clone_combinations(["A"], [1], [cloner.InclusionSet(["Z"])])


# ---------------------------------------------------------------- make_clone_plan


@check
def c35_per_variant_rows_and_cfg_rows():
    robot, cube = cfg("Robot", 2), cfg("Cube")
    plan = cloner.make_clone_plan([robot, cube], 4, 1.0, "cpu")
    assert plan.sources == ("/World/envs/env_0/Robot", "/World/envs/env_1/Robot", "/World/envs/env_0/Cube")
    assert plan.cfg_rows == {id(robot): (0, 1), id(cube): (2,)}


@check
def c36_spawn_paths_mutated():
    robot = cfg("Robot", 2)
    cloner.make_clone_plan([robot], 4, 1.0, "cpu")
    assert robot.spawn_paths == ("/World/envs/env_0/Robot", "/World/envs/env_1/Robot")
    assert robot.spawn_path == "/World/envs/env_0/Robot"


@check
def c37_global_and_spawnless_skipped():
    ground = SimpleNamespace(prim_path="/World/Ground", spawn=object())
    marker = SimpleNamespace(prim_path="/World/envs/env_.*/Marker", spawn=None)
    plan = cloner.make_clone_plan([ground, marker, cfg("Cube")], 2, 1.0, "cpu")
    assert plan.sources == ("/World/envs/env_0/Cube",) and id(ground) not in plan.cfg_rows


@check
def c38_clone_strategy():
    assert inspect.signature(cloner.make_clone_plan).parameters["clone_strategy"].default is cloner.sequential
    first = lambda combos, n, device: combos[torch.zeros(n, dtype=torch.long)]  # noqa: E731
    plan = cloner.make_clone_plan([cfg("R", 2)], 3, 1.0, "cpu", clone_strategy=first)
    assert plan.clone_mask.tolist() == [[True] * 3, [False] * 3]


@check
def c39_valid_set():
    plan = cloner.make_clone_plan([cfg("R", 3)], 4, 1.0, "cpu", valid_set=torch.tensor([[2]]))
    assert plan.clone_mask[2].tolist() == [True] * 4


@check
def c40_env_ids_and_grid_positions():
    plan = cloner.make_clone_plan([cfg("R")], 5, 2.0, "cpu")
    assert plan.env_ids.tolist() == list(range(5))
    assert torch.equal(plan.positions, cloner.grid_transforms(5, 2.0)[0])


# ---------------------------------------------------------------- clone_plan_from_env_0


@check
def c41_one_row_every_env():
    plan = cloner.clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu", positions=torch.zeros(3, 3))
    assert plan.sources == ("/World/envs/env_0",) and plan.clone_mask.tolist() == [[True] * 3]
    assert plan.positions.shape == (3, 3)


@check
def c42_cfg_rows_from_queue():
    robot, light = cfg("Robot"), SimpleNamespace(prim_path="/World/Light", spawn=None)
    cloner.queue_replication(robot)
    cloner.queue_replication(light)
    plan = cloner.clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu")
    assert plan.cfg_rows == {id(robot): (0,)}


# ---------------------------------------------------------------- path


@check
def c43_template_match():
    m = cloner.path.TemplateMatch(instance="3", suffix="/base")
    assert m == ("3", "/base") and m.instance == "3" and m.suffix == "/base"


@check
def c44_split():
    assert cloner.path.split("/World/envs/env_{}/Robot") == ("/World/envs/env_", "/Robot")
    assert cloner.path.split("/World/envs/env_{}/") == ("/World/envs/env_", "")
    with pytest.raises(ValueError):
        cloner.path.split("/World/{}/env_{}")


@check
def c45_match():
    assert cloner.path.match("/World/envs/env_3/Robot/base", "/World/envs/env_{}/Robot") == \
        cloner.path.TemplateMatch(instance="3", suffix="/base")
    assert cloner.path.match("/World/envs/env_.*/Robot", "/World/envs/env_{}/Robot").instance == ".*"
    assert cloner.path.match("/World/Ground", "/World/envs/env_{}/Robot") is None


@check
def c46_relative_to():
    assert cloner.path.relative_to("/World/envs/env_0/Robot", "/World/envs/env_0") == "/Robot"
    assert cloner.path.relative_to("/World/envs/env_0", "/World/envs/env_0/") == ""
    assert cloner.path.relative_to("/World/RobotArm", "/World/Robot") is None
    assert cloner.path.relative_to("/World/Robot", "/") == "/World/Robot"


@check
def c47_under():
    assert cloner.path.under("/World/Robot/base", "/World/Robot")
    assert not cloner.path.under("/World/RobotArm", "/World/Robot")


@check
def c48_rebase():
    assert cloner.path.rebase("/World/envs/env_1/x/env_1", "/World/envs/env_1", "/World/envs/env_2") == \
        "/World/envs/env_2/x/env_1"
    assert cloner.path.rebase("/World/envs/env_10/x", "/World/envs/env_1", "/World/envs/env_2") == \
        "/World/envs/env_10/x"


@check
def c49_relativize():
    assert cloner.path.relativize("/World/envs/env_.*/Robot/base", "/World/envs/env_{}/Robot") == "/base"
    assert cloner.path.relativize("/World/envs/env_3/Robot", "/World/envs/env_{}/Robot") == ""
    assert cloner.path.relativize("/World/Ground", "/World/envs/env_{}/Robot") is None


# ---------------------------------------------------------------- query


def hetero():
    robot = cfg("Robot", 2)
    return cloner.make_clone_plan([robot], 4, 1.0, "cpu")


@check
def c50_path_env_ids():
    plan = hetero()
    assert cloner.query.path_env_ids(plan, "/World/envs/env_1/Robot/base") == (1, 3)
    assert cloner.query.path_env_ids(plan, "/World/Ground") == ()


@check
def c51_path_to_clone():
    plan = hetero()
    assert cloner.query.path_to_clone(plan, "/World/envs/env_1/Robot/base", 3) == "/World/envs/env_3/Robot/base"
    assert cloner.query.path_to_clone(plan, "/World/envs/env_1/Robot/base", 2) is None
    assert cloner.query.path_to_clone(plan, "/World/envs/env_1/Robot/base", 9) is None


@check
def c52_path_to_source_variant_by_env():
    plan = hetero()
    assert cloner.query.path_to_source(plan, "/World/envs/env_3/Robot/base")[0] == "/World/envs/env_1/Robot/base"
    assert cloner.query.path_to_source(plan, "/World/envs/env_.*/Robot")[0] == "/World/envs/env_0/Robot"
    assert cloner.query.path_to_source(plan, "/World/envs/env_.*/Robot", env_id=3)[0] == "/World/envs/env_1/Robot"
    assert cloner.query.path_to_source(plan, "/World/Ground") is None


@check
def c53_path_to_source_tuple_and_partial_glob():
    plan = hetero()
    assert cloner.query.path_to_source(plan, "/World/envs/env_.*/Robot/base") == (
        "/World/envs/env_0/Robot/base", "/World/envs/env_(0|2)/Robot", "/base")


@check
def c54_path_to_source_ambiguity():
    plan = cloner.ClonePlan(("/a/R", "/b/R"), ("/World/envs/env_{}/R", "/World/envs/{}/R"),
                            torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError):
        cloner.query.path_to_source(plan, "/World/envs/env_1/R")


@check
def c55_iter_sources_example():
    plan = cloner.ClonePlan(("/World/source/Robot",), ("/World/scenes/{}/Robot",),
                            torch.tensor([[True, False, True]]))
    assert list(cloner.query.iter_sources(plan, "/World/scenes/.*/Robot/base")) == [
        ("/World/source/Robot", "/World/scenes/{}/Robot", "/World/source/Robot/base", (0, 2))]


@check
def c56_iter_sources_concrete_path():
    assert [t[3] for t in cloner.query.iter_sources(hetero(), "/World/envs/env_3/Robot")] == [(0, 2), (1, 3)]
    plan = cloner.ClonePlan(("/World/envs/env_0", "/p/Robot"), (ENV, ENV + "/Robot"),
                            torch.tensor([[True, True], [False, False]]))
    assert [t[0] for t in cloner.query.iter_sources(plan, "/World/envs/env_1/Robot")] == ["/World/envs/env_0"]


# ---------------------------------------------------------------- the replication flow


@check
def c57_replication_queue():
    assert cloner.REPLICATION_QUEUE is importlib.import_module("simulo_envs.cloner.replicate").REPLICATION_QUEUE
    assert isinstance(cloner.REPLICATION_QUEUE, list)


@check
def c58_replicate_drains_and_publishes():
    scene, b, stray = Scene(3, 1.0), block(), block("Stray")
    cloner.queue_replication(b)
    plan = cloner.clone_plan_from_env_0("/World/envs/env_0", ENV, 3, "cpu")
    cloner.queue_replication(stray)  # queued after planning: not in cfg_rows, so skipped
    cloner.replicate(plan, stage=scene)
    assert cloner.REPLICATION_QUEUE == [] and scene.clone_plan is plan and list(scene.objects) == ["/World/Block"]


@check
def c59_replicate_session():
    scene, b = Scene(2, 1.0), block()
    with cloner.ReplicateSession([b], 2, 1.0, "cpu", stage=scene) as session:
        cloner.queue_replication(b)
    assert scene.clone_plan is session.plan and b.spawn_path == "/World/envs/env_0/Block"


def test_every_row_has_a_check():
    assert sorted(CHECKS, key=lambda k: int(k[1:])) == [f"C{i}" for i in range(1, 60)]


@pytest.mark.parametrize("point", sorted(CHECKS, key=lambda k: int(k[1:])))
def test_cloner_seed_point(point):
    CHECKS[point]()
