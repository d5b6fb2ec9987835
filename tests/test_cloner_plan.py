"""Clone plans and the queries over them (simulo_envs.cloner.plan / .query)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from simulo_envs.cloner import (
    ClonePlan,
    InclusionSet,
    clone_plan_from_env_0,
    grid_transforms,
    iter_sources,
    make_clone_plan,
    make_valid_clone_combinations,
    num_spawn_variants,
    path_env_ids,
    path_to_clone,
    path_to_source,
)

ENV = "/World/envs/env_{}"


def asset(name: str, variants: int = 1) -> SimpleNamespace:
    spawn = SimpleNamespace(variants=[f"{name}_{v}" for v in range(variants)]) if variants > 1 else object()
    return SimpleNamespace(prim_path=f"/World/envs/env_.*/{name}", spawn=spawn)


def populated(plan: ClonePlan, row: int) -> tuple[int, ...]:
    ids = plan.env_ids.tolist() if plan.env_ids is not None else list(range(plan.num_clones))
    return tuple(sorted(ids[j] for j in range(plan.num_clones) if plan.clone_mask[row, j]))


# ---------------------------------------------------------------- round trip over random plans

NAMES = ["Robot", "RobotArm", "Plate", "CakeOnPlate", "CakeOnPlate/Plate", "Cube"]


@st.composite
def random_plan(draw):
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
    counts = [draw(st.integers(1, 3)) for _ in names]
    cfgs = [asset(n, c) for n, c in zip(names, counts)]
    combos = None
    if draw(st.booleans()):
        subsets = st.lists(st.sampled_from(names), min_size=1, unique=True)
        combos = [InclusionSet(tuple(draw(subsets)), draw(st.integers(1, 3))) for _ in range(draw(st.integers(1, 3)))]
    valid = make_valid_clone_combinations(names, counts, combos)
    strategy = draw(st.sampled_from(["sequential", "random"]))
    plan = make_clone_plan(cfgs, draw(st.integers(1, 13)), 1.5, clone_strategy=strategy, valid_set=valid,
                           seed=draw(st.integers(0, 99)))
    return plan


@settings(max_examples=150, deadline=None)
@given(plan=random_plan(), below=st.sampled_from(["", "/base", "/base/visual"]))
def test_clone_then_source_returns_to_the_prototype_row(plan, below):
    for row, src in enumerate(plan.sources):
        p = src + below
        for e in populated(plan, row):
            clone = path_to_clone(plan, p, e)
            assert clone == plan.destinations[row].format(e) + below
            found = path_to_source(plan, clone)
            assert found is not None
            assert found[0] == p
            assert found[2] == below
            # The glob names exactly the envs of p's row.
            assert found[1] == plan.destinations[row].format(_glob(populated(plan, row), plan.num_clones))
        for e in set(range(plan.num_clones)) - set(populated(plan, row)):
            if not any(plan.sources[r] == src and plan.clone_mask[r, e] for r in range(len(plan.sources))):
                assert path_to_clone(plan, p, e) is None


def _glob(envs, n):
    if envs == tuple(range(n)):
        return ".*"
    return str(envs[0]) if len(envs) == 1 else "(" + "|".join(map(str, envs)) + ")"


@settings(max_examples=150, deadline=None)
@given(plan=random_plan())
def test_path_env_ids_equals_the_masks_populated_envs(plan):
    for row, src in enumerate(plan.sources):
        same_root = [r for r, s in enumerate(plan.sources) if s == src]
        expected = tuple(sorted({e for r in same_root for e in populated(plan, r)}))
        assert path_env_ids(plan, src) == expected
        assert path_env_ids(plan, src + "/base/link") == expected
    assert path_env_ids(plan, "/World/Ground") == ()


def test_env_ids_are_not_mask_columns():
    plan = ClonePlan(("/World/envs/env_3/Cube",), ("/World/envs/env_{}/Cube",),
                     torch.tensor([[True, False, True]]), env_ids=torch.tensor([3, 7, 10]))
    assert path_env_ids(plan, "/World/envs/env_3/Cube/mesh") == (3, 10)
    assert path_to_clone(plan, "/World/envs/env_3/Cube", 10) == "/World/envs/env_10/Cube"
    assert path_to_clone(plan, "/World/envs/env_3/Cube", 7) is None  # in the plan, not populated
    assert path_to_clone(plan, "/World/envs/env_3/Cube", 2) is None  # column 2, but not an env id
    assert path_to_source(plan, "/World/envs/env_10/Cube") == ("/World/envs/env_3/Cube", "/World/envs/env_(3|10)/Cube", "")
    assert path_to_source(plan, "/World/envs/env_2/Cube") is None


# ---------------------------------------------------------------- partial coverage and variants


def test_partial_coverage_yields_globs_over_just_those_envs():
    robot, cube = asset("Robot"), asset("Cube")
    valid = make_valid_clone_combinations(["Robot", "Cube"], [1, 1],
                                          [InclusionSet(("Robot", "Cube")), InclusionSet(("Robot",))])
    assert valid.tolist() == [[0, 0], [0, -1]]
    plan = make_clone_plan([robot, cube], 4, 1.0, valid_set=valid)
    assert plan.sources == ("/World/envs/env_0/Robot", "/World/envs/env_0/Cube")
    assert plan.clone_mask.tolist() == [[True] * 4, [True, False, True, False]]
    assert path_env_ids(plan, "/World/envs/env_0/Cube/mesh") == (0, 2)
    assert path_to_source(plan, "/World/envs/env_.*/Cube/mesh") == (
        "/World/envs/env_0/Cube/mesh", "/World/envs/env_(0|2)/Cube", "/mesh")
    assert path_to_source(plan, "/World/envs/env_.*/Robot") == ("/World/envs/env_0/Robot", "/World/envs/env_.*/Robot", "")
    assert path_to_source(plan, "/World/envs/env_1/Cube") is None
    assert path_to_clone(plan, "/World/envs/env_0/Cube", 3) is None
    one = make_clone_plan([asset("Cube")], 3, 1.0, valid_set=torch.tensor([[-1], [-1], [0]]))
    assert path_to_source(one, "/World/envs/env_.*/Cube") == ("/World/envs/env_2/Cube", "/World/envs/env_2/Cube", "")


def test_variants_are_picked_by_env_and_cfgs_record_their_prototypes():
    robot, ground = asset("Robot", 2), SimpleNamespace(prim_path="/World/Ground", spawn=object())
    nothing = SimpleNamespace(prim_path="/World/envs/env_.*/Marker", spawn=None)
    plan = make_clone_plan([ground, robot, nothing], 5, 1.0)
    assert plan.sources == ("/World/envs/env_0/Robot", "/World/envs/env_1/Robot")
    assert plan.cfg_rows == {id(robot): (0, 1)}
    assert robot.spawn_paths == ("/World/envs/env_0/Robot", "/World/envs/env_1/Robot")
    assert robot.spawn_path == "/World/envs/env_0/Robot"
    assert path_to_source(plan, "/World/envs/env_3/Robot/base")[0] == "/World/envs/env_1/Robot/base"
    assert path_to_source(plan, "/World/envs/env_4/Robot/base")[0] == "/World/envs/env_0/Robot/base"
    assert path_to_source(plan, "/World/envs/env_.*/Robot", env_id=3)[0] == "/World/envs/env_1/Robot"
    assert path_to_source(plan, "/World/envs/env_.*/Robot")[1] == "/World/envs/env_(0|2|4)/Robot"
    assert path_to_source(plan, "/World/envs/env_(1|3)/Robot")[0] == "/World/envs/env_1/Robot"
    assert [t[2:] for t in iter_sources(plan, "/World/envs/env_.*/Robot/base")] == [
        ("/World/envs/env_0/Robot/base", (0, 2, 4)), ("/World/envs/env_1/Robot/base", (1, 3))]
    # A concrete clone path yields every populated row of its template, not only env 3's.
    assert [t[3] for t in iter_sources(plan, "/World/envs/env_3/Robot")] == [(0, 2, 4), (1, 3)]
    assert path_to_clone(plan, "/World/envs/env_0/Robot/base", 3) is None
    assert list(iter_sources(plan, "/World/Ground")) == []


def test_an_unused_variant_has_a_row_but_no_spawn_path():
    cube = asset("Cube", 3)
    plan = make_clone_plan([cube], 2, 1.0)
    assert plan.clone_mask.tolist() == [[True, False], [False, True], [False, False]]
    assert cube.spawn_paths == ("/World/envs/env_0/Cube", "/World/envs/env_1/Cube", None)
    assert [t[3] for t in iter_sources(plan, "/World/envs/env_.*/Cube")] == [(0,), (1,)]


def test_equally_near_distinct_templates_raise_in_path_to_source():
    plan = ClonePlan(("/World/a/Robot", "/World/b/Robot"), ("/World/envs/env_{}/Robot", "/World/envs/{}/Robot"),
                     torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="equally near"):
        path_to_source(plan, "/World/envs/env_1/Robot/base")
    # iter_sources yields every row whose destination owns the path, both templates here.
    assert [t[:3] for t in iter_sources(plan, "/World/envs/env_1/Robot")] == [
        ("/World/a/Robot", "/World/envs/env_{}/Robot", "/World/a/Robot"),
        ("/World/b/Robot", "/World/envs/{}/Robot", "/World/b/Robot")]


def test_nearest_template_wins_over_the_whole_env_row():
    plan = ClonePlan(("/World/envs/env_0", "/World/proto/Robot"), (ENV, ENV + "/Robot"),
                     torch.tensor([[True, True], [False, True]]))
    assert path_to_source(plan, "/World/envs/env_1/Robot/base") == (
        "/World/proto/Robot/base", "/World/envs/env_1/Robot", "/base")
    assert path_to_source(plan, "/World/envs/env_0/Robot/base") is None  # nearest row skips env 0
    assert path_to_source(plan, "/World/envs/env_1/Cube") == ("/World/envs/env_0/Cube", "/World/envs/env_.*", "/Cube")


# ---------------------------------------------------------------- twelve envs, look-alike names

TWELVE = ["Robot", "RobotArm", "Plate", "CakeOnPlate/Plate"]


@pytest.mark.parametrize("kind", ["per_asset", "from_env_0"])
def test_twelve_envs_each_lookup_returns_exactly_the_right_paths(kind):
    cfgs = [asset(n) for n in TWELVE]
    if kind == "per_asset":
        plan = make_clone_plan(cfgs, 12, 2.0)
        assert plan.cfg_rows == {id(c): (i,) for i, c in enumerate(cfgs)}
    else:
        plan = clone_plan_from_env_0("/World/envs/env_0", ENV, 12, cfgs=cfgs + [SimpleNamespace(prim_path="/World/L")])
        assert plan.cfg_rows == {id(c): (0,) for c in cfgs}
    for name in TWELVE:
        proto = f"/World/envs/env_0/{name}/mesh"
        assert path_env_ids(plan, proto) == tuple(range(12))
        clones = [path_to_clone(plan, proto, e) for e in range(12)]
        assert clones == [f"/World/envs/env_{e}/{name}/mesh" for e in range(12)]
        sources = [path_to_source(plan, c)[0] for c in clones]
        assert sources == [proto] * 12
        assert path_to_clone(plan, proto, 12) is None
        found = path_to_source(plan, f"/World/envs/env_.*/{name}/mesh")
        if kind == "per_asset":
            assert found == (proto, f"/World/envs/env_.*/{name}", "/mesh")
            assert [t[0] for t in iter_sources(plan, f"/World/envs/env_11/{name}")] == [f"/World/envs/env_0/{name}"]
        else:
            assert found == (proto, "/World/envs/env_.*", f"/{name}/mesh")
    if kind == "per_asset":
        assert path_env_ids(plan, "/World/envs/env_0/RobotArm2") == ()
        assert path_env_ids(plan, "/World/envs/env_0/CakeOnPlate") == ()
        assert path_to_source(plan, "/World/envs/env_10/RobotArm")[1] == "/World/envs/env_.*/RobotArm"


# ---------------------------------------------------------------- combinations and strategies


def test_make_valid_clone_combinations_worked_example():
    # Robot has 2 variants, Plate 1, Cube 3. Combination A = {Robot, Plate} weight 2: Robot x Plate
    # = (0,0,-1), (1,0,-1), 2 tuples. Combination B = {Robot, Cube} weight 1: (0,-1,0) (0,-1,1)
    # (0,-1,2) (1,-1,0) (1,-1,1) (1,-1,2), 6 tuples. lcm(2, 6) = 6 turns; each turn emits 2 rows of
    # A then 1 of B, each cycling through its own tuples: A gets 12 rows (6 per tuple), B 6 (1 each).
    a0, a1 = [0, 0, -1], [1, 0, -1]
    b = [[0, -1, 0], [0, -1, 1], [0, -1, 2], [1, -1, 0], [1, -1, 1], [1, -1, 2]]
    expected = []
    for turn in range(6):
        expected += [a0, a1, b[turn]]
    got = make_valid_clone_combinations(
        ["Robot", "Plate", "Cube"], [2, 1, 3],
        [InclusionSet(("Robot", "Plate"), 2), InclusionSet(("Robot", "Cube"), 1), InclusionSet(("Table",), 0)],
        all_asset_names=["Robot", "Plate", "Cube", "Table"])
    assert got.dtype == torch.long
    assert got.tolist() == expected
    assert got[:3].tolist() == [a0, a1, b[0]]  # the first sum(weights) rows hold both combinations


def test_unclaimed_assets_are_active_everywhere_and_bad_inputs_raise():
    got = make_valid_clone_combinations(["Robot", "Cube"], [1, 2], [InclusionSet(("Cube",), 1)])
    assert got.tolist() == [[0, 0], [0, 1]]
    assert make_valid_clone_combinations(["A", "B"], [2, 2]).tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    with pytest.raises(ValueError, match="unknown"):
        make_valid_clone_combinations(["A"], [1], [InclusionSet(("Z",))])
    with pytest.raises(ValueError, match="weight 0"):
        make_valid_clone_combinations(["A"], [1], [InclusionSet(("A",), 0)])
    with pytest.raises(ValueError):
        make_valid_clone_combinations(["A", "B"], [1])
    with pytest.raises(ValueError):
        InclusionSet(("A",), -1)
    with pytest.raises(ValueError):
        make_clone_plan([asset("A", 2)], 3, 1.0, valid_set=torch.tensor([[2]]))


def test_random_strategy_is_seeded_and_draws_every_combination():
    cfgs = [asset("Cube", 4)]
    first = make_clone_plan(cfgs, 200, 1.0, clone_strategy="random", seed=7).clone_mask
    again = make_clone_plan(cfgs, 200, 1.0, clone_strategy="random", seed=7).clone_mask
    other = make_clone_plan(cfgs, 200, 1.0, clone_strategy="random", seed=8).clone_mask
    assert torch.equal(first, again) and not torch.equal(first, other)
    assert first.sum(0).tolist() == [1] * 200  # one variant per env
    assert all(25 <= n <= 75 for n in first.sum(1).tolist())
    seq = make_clone_plan(cfgs, 6, 1.0).clone_mask
    assert seq.tolist() == [[j % 4 == v for j in range(6)] for v in range(4)]


def test_num_spawn_variants_and_plan_validation():
    assert num_spawn_variants(SimpleNamespace(variants=("a", "b", "c"))) == 3
    assert num_spawn_variants(SimpleNamespace(path="cube.obj")) == 1
    with pytest.raises(ValueError):
        num_spawn_variants(SimpleNamespace(variants=[]))
    with pytest.raises(ValueError):
        ClonePlan(("/a",), ("/b/{}", "/c/{}"), torch.ones(1, 2, dtype=torch.bool))
    with pytest.raises(ValueError):
        ClonePlan(("/a",), ("/b/{}",), torch.ones(1, 2, dtype=torch.bool), env_ids=torch.tensor([1, 1]))
    with pytest.raises(TypeError):
        ClonePlan(("/a",), ("/b/{}",), torch.ones(1, 2))
    with pytest.raises(TypeError):
        path_to_clone(clone_plan_from_env_0("/World/envs/env_0", ENV, 2), "/World/envs/env_0", 1.0)


# ---------------------------------------------------------------- env origins


@pytest.mark.parametrize("n", [1, 4, 5, 7, 12])
def test_grid_transforms_agrees_with_the_plans_positions(n):
    plan = make_clone_plan([asset("Robot")], n, 2.5)
    pos, quat = grid_transforms(n, 2.5)
    assert plan.positions.shape == (n, 3)
    assert torch.equal(plan.positions, pos)
    assert quat.tolist() == [[1.0, 0.0, 0.0, 0.0]] * n  # scalar-first identity
    assert plan.positions[:, 2].abs().max().item() == 0.0
    if n > 1:  # neighbours sit exactly one spacing apart
        d = torch.cdist(pos, pos) + torch.eye(n) * 1e9
        assert d.min().item() == pytest.approx(2.5)


@pytest.mark.parametrize(("n", "expected"), [
    (1, [[0, 0, 0]]),
    # 5 envs: ceil(5 / floor(sqrt 5)) = 3 rows, ceil(5 / 3) = 2 columns;
    # x = -(row - 1) * s, y = (col - 0.5) * s with s = 2.
    (5, [[2, -1, 0], [2, 1, 0], [0, -1, 0], [0, 1, 0], [-2, -1, 0]]),
    # 7 envs: 4 rows, 2 columns; x = -(row - 1.5) * s, y = (col - 0.5) * s.
    (7, [[3, -1, 0], [3, 1, 0], [1, -1, 0], [1, 1, 0], [-1, -1, 0], [-1, 1, 0], [-3, -1, 0]]),
])
def test_plan_positions_hand_computed(n, expected):
    plan = make_clone_plan([asset("Robot")], n, 2.0)
    assert plan.positions.tolist() == [[float(v) for v in row] for row in expected]
