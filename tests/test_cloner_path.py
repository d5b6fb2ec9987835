"""Property tests of the segment-boundary-safe prim-path algebra (simulo_envs.cloner.path)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulo_envs.cloner import path as pth
from simulo_envs.cloner.path import TemplateMatch

# A tiny alphabet makes segments that share character prefixes ("a" / "ab" / "a1") common,
# which is exactly where text prefix tests go wrong.
segment = st.text(alphabet="ab1_", min_size=1, max_size=4)
segments = st.lists(segment, min_size=0, max_size=4)
path = st.lists(segment, min_size=1, max_size=4).map(lambda s: "/" + "/".join(s))
instance = st.one_of(st.integers(0, 10_000).map(str), st.just(".*"), st.just("(0|2)"), segment)


def join(root: str, rest: list[str]) -> str:
    return root + "".join("/" + s for s in rest)


def oracle_relative_to(p: str, root: str) -> str | None:
    """Reference implementation on segment lists, written independently of the module."""
    ps, rs = p.split("/")[1:], root.rstrip("/").split("/")[1:] if root.rstrip("/") else []
    if ps[: len(rs)] != rs:
        return None
    return "".join("/" + s for s in ps[len(rs):])


@given(a=path, rest=segments, b=path)
def test_rebase_round_trips_for_paths_under_src(a, rest, b):
    p = join(a, rest)
    moved = pth.rebase(p, a, b)
    assert moved == join(b, rest)
    assert pth.rebase(moved, b, a) == p


@given(p=path, a=path, b=path)
def test_rebase_leaves_paths_outside_src_unchanged(p, a, b):
    if not pth.under(p, a):
        assert pth.rebase(p, a, b) == p


@given(root=path, extra=segment, rest=segments)
def test_under_is_never_true_across_a_segment_boundary(root, extra, rest):
    # root + extra text glued onto its last segment is a sibling, not a descendant.
    sibling = join(root + extra, rest)
    assert not pth.under(sibling, root)
    assert pth.relative_to(sibling, root) is None
    assert pth.under(join(root, rest), root)
    assert pth.under(join(root, [extra] + rest), root)


@given(p=path, root=path)
def test_relative_to_agrees_with_segment_oracle(p, root):
    got = pth.relative_to(p, root)
    assert got == oracle_relative_to(p, root)
    assert pth.under(p, root) == (got is not None)
    if got is not None:
        assert root + got == p
        assert got == "" or got[0] == "/"


@given(root=path, extra=segment, rest=segments)
def test_relative_to_returns_none_not_a_mid_segment_remainder(root, extra, rest):
    p = join(root + extra, rest)
    assert pth.relative_to(p, root) is None
    assert pth.relative_to(p, root + "/") is None


@given(p=path)
def test_slash_is_the_root_of_every_path_and_trailing_slash_is_insignificant(p):
    assert pth.relative_to(p, "/") == p
    assert pth.relative_to(p + "/", p) == ""
    assert pth.relative_to(p, p + "/") == ""


@pytest.mark.parametrize(
    ("p", "root", "expected"),
    [
        ("/World/RobotArm", "/World/Robot", None),
        ("/World/Robot/base", "/World/Robot", "/base"),
        ("/World/envs/env_10", "/World/envs/env_1", None),
        ("/World/envs/env_10/Cube", "/World/envs/env_10", "/Cube"),
        ("/World/CakeOnPlate/Plate", "/World/Plate", None),
    ],
)
def test_relative_to_named_boundary_cases(p, root, expected):
    assert pth.relative_to(p, root) == expected


@given(pre=st.lists(segment, max_size=3), head=st.sampled_from(["", "env_", "a"]),
       tail=st.sampled_from(["", "_x"]), post=segments, inst=instance, below=segments)
def test_match_captures_instance_text_and_suffix(pre, head, tail, post, inst, below):
    template = join(join("", pre) + "/" + head + "{}" + tail, post)
    p = join(template.format(inst), below)
    expected_suffix = join("", below)
    assert pth.match(p, template) == TemplateMatch(inst, expected_suffix)
    assert pth.relativize(p, template) == expected_suffix
    prefix, suffix = pth.split(template)
    assert prefix + inst + suffix == template.format(inst)


@given(pre=st.lists(segment, min_size=1, max_size=3), post=st.lists(segment, min_size=1, max_size=3),
       inst=instance, extra=segment)
def test_match_is_none_off_the_template(pre, post, inst, extra):
    template = join(join("", pre) + "/env_{}", post)
    # A glued-on last segment (Robot -> RobotArm) is another asset.
    assert pth.match(template.format(inst) + extra, template) is None
    # A differing literal segment above the slot.
    assert pth.match(join("/" + pre[0] + extra + "".join("/" + s for s in pre[1:]) + "/env_" + inst, post),
                     template) is None
    # Stopping above the template root.
    assert pth.match(template.format(inst).rsplit("/", 1)[0], template) is None
    # An empty slot captures nothing.
    assert pth.match(template.format(""), template) is None
    assert pth.relativize(template.format(inst) + extra, template) is None


def test_match_env_1_is_not_env_10():
    template = "/World/envs/env_1{}/Robot"
    assert pth.match("/World/envs/env_10/Robot", template) == TemplateMatch("0", "")
    assert pth.match("/World/envs/env_1/Robot", template) is None
    assert pth.match("/World/envs/env_10/Robot/base", "/World/envs/env_{}/Robot") == TemplateMatch("10", "/base")


@given(p=path)
def test_templates_without_a_slot_raise(p):
    with pytest.raises(ValueError, match="exactly one"):
        pth.split(p)
    with pytest.raises(ValueError):
        pth.match(p, p)
    with pytest.raises(ValueError):
        pth.relativize(p, p)


@given(a=path, b=segments, c=segments)
def test_templates_with_two_slots_raise(a, b, c):
    template = join(join(a + "{}", b) + "/{}", c)
    with pytest.raises(ValueError, match="found 2"):
        pth.split(template)
    with pytest.raises(ValueError):
        pth.match(template.format(1, 2), template)


@pytest.mark.parametrize("bad", ["/World/env_{0}/{}", "/World/{}/x}", "{}/World"])
def test_templates_with_stray_braces_or_a_rootless_slot_raise(bad):
    with pytest.raises(ValueError):
        pth.split(bad)


def test_non_str_and_empty_paths_raise():
    with pytest.raises(TypeError):
        pth.under(None, "/World")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        pth.relative_to("/World", "")
