"""The committed SO100Lift-v1 policy (``tasks/so100_lift_ppo.pt``, trained by the recipe in
``tasks/so100_lift_ppo.py``; ``docs/lift_training.md``) still lifts the cube.

A change to the task, the SO-100 agent, its controller, the grasp test or the physics that breaks
the trained policy shows up here.
"""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.wrappers.evaluation import evaluate  # noqa: E402

CHECKPOINT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks", "so100_lift_ppo.pt")


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_committed_policy_lifts():
    summary = evaluate(CHECKPOINT, episodes=8, seed=10_000)
    assert summary["env_id"] == "SO100Lift-v1" and summary["episodes"] == 8
    assert summary["success_rate"] >= 7 / 8
    # A lift takes a reach, a grasp (the jaw needs 0.4 s to close) and 5 cm of lift: never in the
    # first few steps, well before the 80-step limit.
    assert 8 <= summary["mean_length"] <= 50
