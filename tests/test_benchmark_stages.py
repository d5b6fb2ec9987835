"""``scripts/benchmark.py --stages``: one env's step stage by stage, against the floor's stages."""

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from benchmark_sections import SECTION_NAMES, stages  # noqa: E402
from benchmark_sections.common import run_worker  # noqa: E402
from benchmark_sections.raw import FLOOR_STAGES, stage_clock  # noqa: E402


def test_the_stage_clock_adds_each_stage_and_is_a_no_op_without_totals():
    assert stage_clock(None)(3) is None
    totals = [0, 0]
    mark = stage_clock(totals)
    mark(0)
    end = time.thread_time_ns() + 2_000_000
    while time.thread_time_ns() < end:  # 2 ms of CPU in stage 0
        pass
    mark(1)
    mark(2)
    assert 2_000_000 <= totals[0] < 200_000_000 and 0 <= totals[1] < totals[0]


def test_our_timed_step_keeps_the_fast_path_and_its_stages_cover_the_step():
    assert "stages" in SECTION_NAMES and set(FLOOR_STAGES) == set(stages.STAGES)
    paired = run_worker("stages_paired", 1, 0, size=1)  # raises if the wrapped env left the CPU fast path
    (ours,), (floor,) = paired["ours"], paired["floor"]  # one block each, in the same process
    for timed in (ours, floor):
        assert set(timed) == set(stages.STAGES) | {"total"}
        assert all(timed[stage] > 0 for stage in stages.STAGES)
        assert timed["physics"] > timed["controller"]  # 5 PhysX steps against one write of 9 targets
        assert abs(sum(timed[stage] for stage in stages.STAGES) - timed["total"]) < 1e-6 * timed["total"]
