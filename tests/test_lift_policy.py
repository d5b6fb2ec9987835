"""The committed lift policies still lift the cube: FrankaLift-v1 (``tasks/franka_lift_ppo.pt``)
and SO100Lift-v1 (``tasks/so100_lift_ppo.pt``), each trained by the recipe beside it
(``tasks/*_lift_ppo.py``; ``docs/training.md``).

A change to a task, an arm, its controller, the grasp test or the physics that breaks a trained
policy shows up here: on 8 evaluation seeds the Franka policy succeeded in all 8 episodes when it
was committed.
"""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.wrappers.evaluation import evaluate  # noqa: E402

TASKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks")
CHECKPOINT = os.path.join(TASKS, "franka_lift_ppo.pt")


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# A lift takes a reach and a grasp first: never in the first few steps, well before the time
# limit. The SO-100's jaw needs about 0.4 s to close, so its lifts take longer.
@pytest.mark.parametrize(
    "checkpoint, env_id, shortest, longest",
    [("franka_lift_ppo.pt", "FrankaLift-v1", 5, 40), ("so100_lift_ppo.pt", "SO100Lift-v1", 8, 50)],
)
def test_committed_policy_lifts(checkpoint, env_id, shortest, longest):
    summary = evaluate(os.path.join(TASKS, checkpoint), episodes=8, seed=10_000)
    assert summary["env_id"] == env_id and summary["episodes"] == 8
    assert summary["success_rate"] >= 7 / 8
    assert shortest <= summary["mean_length"] <= longest


def test_committed_policy_holds_the_cube_up():
    summary = evaluate(CHECKPOINT, episodes=4, seed=10_100, full_episodes=True)
    assert summary["mean_length"] == 100   # terminations ignored: every episode runs to the limit
    assert summary["success_rate"] >= 3 / 4 and summary["success_at_end"] >= 3 / 4
