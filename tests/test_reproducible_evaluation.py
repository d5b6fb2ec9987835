"""Evaluations that do not depend on the batch: ``evaluate`` (PPO and imitation checkpoints) gives
each episode, bit for bit, whatever ``max_envs`` and ``num_workers`` (one PhysX system per env,
rebuilt before each batch, the policy acting env by env; docs/reproducibility.md).

When written, the committed SO-100 lift policy on seeds 10000..10003: returns 3.8917575,
4.4276981, 3.6389546, 4.4380488 (successes after 11, 12, 10 and 12 steps) with 4 envs, 1 env and
3 envs at a time alike, and in 2 worker processes. On another machine's CPU (AMD EPYC with
AVX-512, 2026-12-07) the same episodes returned 3.8924861, 4.4025364, 3.6146577, 4.3979259 (the
same successes and lengths, alike in every batch): floating-point results differ between CPUs,
so the returns are compared to ``RETURN_TOLERANCE`` and the batches to each other bit for bit.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.imitation.rollout import evaluate as evaluate_imitation  # noqa: E402
from simulo_envs.training.evaluation import evaluate, row_by_row  # noqa: E402

TASKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks")

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

RETURN_TOLERANCE = 0.1
"""How far an episode's return may be from the committed figures on another CPU: 2.5x the largest
difference measured between two machines (0.040, module docstring)."""


def test_a_ppo_evaluation_gives_the_same_episodes_whatever_the_batch():
    checkpoint = os.path.join(TASKS, "so100_lift_ppo.pt")
    together = evaluate(checkpoint, episodes=4, seed=10_000, max_envs=4)
    assert together["isolate_envs"] is True
    assert [row[0] for row in together["per_episode"]] == [10_000, 10_001, 10_002, 10_003]
    assert [row[1] for row in together["per_episode"]] == [True] * 4
    assert [row[4] for row in together["per_episode"]] == [11, 12, 10, 12]
    assert [row[3] for row in together["per_episode"]] == pytest.approx([3.8917575, 4.4276981, 3.6389546, 4.4380488],
                                                                        abs=RETURN_TOLERANCE)
    for max_envs in (1, 3):
        alone = evaluate(checkpoint, episodes=4, seed=10_000, max_envs=max_envs)
        assert alone["per_episode"] == together["per_episode"], max_envs   # bit for bit
        assert alone["mean_return"] == together["mean_return"]


@pytest.mark.e2e   # two worker processes: about 20 s of CPU
def test_an_evaluation_in_worker_processes_gives_the_same_episodes():
    checkpoint = os.path.join(TASKS, "so100_lift_ppo.pt")
    here = evaluate(checkpoint, episodes=2, seed=10_000, max_envs=2)
    workers = evaluate(checkpoint, episodes=2, seed=10_000, max_envs=2, num_workers=2)
    assert workers["per_episode"] == here["per_episode"]


def test_a_diffusion_policy_evaluation_gives_the_same_episodes_whatever_the_batch():
    checkpoint = os.path.join(TASKS, "franka_push_diffusion_state.pt")
    together = evaluate_imitation(checkpoint, episodes=2, seed=10_000, max_envs=2)
    alone = evaluate_imitation(checkpoint, episodes=2, seed=10_000, max_envs=1)
    assert together["isolate_envs"] is True and alone["per_episode"] == together["per_episode"]
    assert all(row[1] for row in together["per_episode"])   # both pushes succeed


def test_row_by_row_gives_each_row_what_a_batch_of_one_gives():
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(42, 256), torch.nn.ELU(), torch.nn.Linear(256, 8))
    obs = torch.randn(7, 42)
    with torch.inference_mode():
        rows = row_by_row(net)(obs)
        assert rows.shape == (7, 8)
        for i in range(7):
            assert torch.equal(rows[i], net(obs[i:i + 1])[0])
