"""Video encoding leaves the calling process as it found it."""
import os

import numpy as np
import pytest

from simulo_envs.datasets import video


@pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="Linux scheduling policy")
def test_encoding_keeps_the_callers_scheduling_policy(tmp_path):
    # SVT-AV1 switches the thread that opens an encoder to SCHED_FIFO where permitted (root).
    before = os.sched_getscheduler(0)
    video.encode(str(tmp_path / "clip.mp4"), np.zeros((4, 16, 16, 3), np.uint8), fps=10)
    assert os.sched_getscheduler(0) == before
    assert video.frame_count(str(tmp_path / "clip.mp4")) == 4
