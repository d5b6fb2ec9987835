"""The isaaclab-cloner seed's plan rows (docs/parity.md, Cloner, C17..C42): ``ClonePlan``,
``grid_transforms``, ``num_spawn_variants``, ``make_valid_clone_combinations``, ``make_clone_plan``
and ``clone_plan_from_env_0``, tried as the seed writes them. One check per table row; the
package surface and the replication flow are in ``test_parity_cloner.py``, which also checks
that every row has a check."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest
import torch

import simulo_envs.cloner as cloner
from cloner_parity import ENV, cfg, checker, empty_queue, row_order  # noqa: F401  (empty_queue: autouse fixture)

CHECKS: dict = {}
check = checker(CHECKS)


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


@pytest.mark.parametrize("point", row_order(CHECKS))
def test_cloner_seed_point(point):
    CHECKS[point]()
