"""``scripts/benchmark.py --render``: the camera throughput section's rows and one measurement."""

import os
import sys

import pytest

from simulo_envs.sim.render import vulkan_available

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from benchmark_sections import SECTION_NAMES, render  # noqa: E402


def test_every_row_has_a_maniskill_reference_and_the_goal_rows_are_in_the_short_run():
    assert "render" in SECTION_NAMES
    for config in render.CONFIGS:
        reference = render._reference(config)
        assert reference[0] == "maniskill" and reference[2] == config[2] and reference[4] == 1
    goals = {("simulo", "fast", "rgb", 128, 1), ("simulo", "fast", "rgb+depth+segmentation", 128, 1),
             ("simulo", "before", "render", 512, 1), ("simulo", "fast", "render", 512, 1),
             ("paired", "fast", "rgb", 128, 16)}
    assert goals <= set(render.CORE)
    assert render.WORKERS == [("paired", "fast", "rgb", 128, 16)]  # --render-workers: the sharded goal row only
    sizes = {(c[2], c[3], c[4]) for c in render.CONFIGS if c[0] == "simulo"}
    assert {("rgb", s, n) for s in (64, 128) for n in (1, 4, 16)} <= sizes


@pytest.mark.skipif(not vulkan_available(), reason="no Vulkan driver")
def test_one_measurement_counts_every_image():
    # In this process (its shaders are compiled once): 2 envs at 32x32, 3 frames after the warm-up.
    result = render.measure("simulo", "fast", "rgb", 32, 2, 3)
    assert sorted(result) == ["cpu", "wall"]
    assert result["wall"] > 0 and result["cpu"] > 0
    with pytest.raises(ValueError, match="visual_detail"):
        render.measure("simulo", "medium", "rgb", 32, 1, 1)
