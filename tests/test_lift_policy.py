"""The committed FrankaLift-v1 policy (``tasks/franka_lift_ppo.pt``, trained by the recipe in
``tasks/franka_lift_ppo.py``; ``docs/lift_training.md``) still lifts the cube.

A change to the task, the Panda, its controller or the physics that breaks the trained policy
shows up here: on 8 evaluation seeds it succeeded in all 8 episodes when it was committed.
"""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.wrappers.evaluation import evaluate  # noqa: E402

CHECKPOINT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks", "franka_lift_ppo.pt")


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_committed_policy_lifts():
    summary = evaluate(CHECKPOINT, episodes=8, seed=10_000)
    assert summary["env_id"] == "FrankaLift-v1" and summary["episodes"] == 8
    assert summary["success_rate"] >= 7 / 8
    # A lift takes a grasp first: never in the first few steps, well before the time limit.
    assert 5 <= summary["mean_length"] <= 40


def test_committed_policy_holds_the_cube_up():
    summary = evaluate(CHECKPOINT, episodes=4, seed=10_100, full_episodes=True)
    assert summary["mean_length"] == 100   # terminations ignored: every episode runs to the limit
    assert summary["success_rate"] >= 3 / 4 and summary["success_at_end"] >= 3 / 4
