"""Each API point of the isaaclab-cloner seed, tried as the seed writes it (docs/parity.md, Cloner).

One check per table row, named by the row's id (C1..C59). A row marked "same" in the table
passes here with the seed's own usage; a row marked "different" asserts our documented
behaviour instead; a "missing" row asserts the name is absent, so the table cannot drift.

This file holds the package surface (C1..C16) and the replication flow (C57..C59); the plan
rows are in ``test_parity_cloner_plan.py`` (C17..C42), the path and query rows in
``test_parity_cloner_paths.py`` (C43..C56). ``test_every_row_has_a_check`` covers all three.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

import simulo_envs.cloner as cloner
import test_parity_cloner_paths
import test_parity_cloner_plan
from cloner_parity import ENV, block, checker, empty_queue, params, row_order  # noqa: F401  (empty_queue: autouse fixture)
from simulo_envs import Scene
from simulo_envs.sim import SimConfig, make_backend

CHECKS: dict = {}
check = checker(CHECKS)


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
    every = {**CHECKS, **test_parity_cloner_plan.CHECKS, **test_parity_cloner_paths.CHECKS}
    assert sorted(every, key=lambda k: int(k[1:])) == [f"C{i}" for i in range(1, 60)]


@pytest.mark.parametrize("point", row_order(CHECKS))
def test_cloner_seed_point(point):
    CHECKS[point]()
