"""The isaaclab-cloner seed's path and query rows (docs/parity.md, Cloner, C43..C56): the prim-path
primitives and walking a plan, tried as the seed writes them. One check per table row; see
``test_parity_cloner.py`` for the package surface and the completeness check."""

from __future__ import annotations

import pytest
import torch

import simulo_envs.cloner as cloner
from cloner_parity import ENV, cfg, checker, empty_queue, row_order  # noqa: F401  (empty_queue: autouse fixture)

CHECKS: dict = {}
check = checker(CHECKS)


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


@pytest.mark.parametrize("point", row_order(CHECKS))
def test_cloner_seed_point(point):
    CHECKS[point]()
