"""The SO-101 suite's benchmark protocol (simulo_envs/training/suite_benchmark.py,
scripts/benchmark_suite.py): Wilson intervals, the published seeds, the mean, the outputs."""

from __future__ import annotations

import json
import os

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.training.evaluation import load_policy
from simulo_envs.training.suite_benchmark import (FIRST_SEEDS, checkpoint_task, markdown_table, run_checkpoint,
                                                  run_expert, suite_tasks, summarize, wilson_interval)
from script_runs import ROOT, load_script

CHECKPOINT = os.path.join(ROOT, "tasks", "so100_lift_ppo.pt")


def test_wilson_interval_matches_the_formula_by_hand():
    # 25 of 50, z = 1.96: centre 0.5, half-width 1.96 * sqrt(0.005 + 0.000384) / 1.0768 = 0.1336.
    low, high = wilson_interval(25, 50)
    assert low == pytest.approx(0.36645, abs=1e-4) and high == pytest.approx(0.63355, abs=1e-4)
    # All successes: the lower bound is n / (n + z^2) = 50 / 53.84; none: its mirror image.
    assert wilson_interval(50, 50) == (pytest.approx(50 / (50 + 1.959964 ** 2), abs=1e-5), 1.0)
    assert wilson_interval(0, 50) == (0.0, pytest.approx(1 - 50 / (50 + 1.959964 ** 2), abs=1e-5))


@pytest.mark.parametrize("successes, episodes", [(1, 0), (-1, 5), (6, 5)])
def test_wilson_interval_refuses_impossible_counts(successes, episodes):
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(successes, episodes)


def test_the_suite_is_the_registered_so101_variant_tasks():
    tasks = suite_tasks()
    assert {"SO101Lift-v1", "SO101Push-v1", "SO101Pull-v1"} <= set(tasks)
    assert all(task.startswith("SO101") for task in tasks) and "SO100Lift-v1" not in tasks
    every = suite_tasks("")
    assert {"SO100Lift-v1", "SO100Pull-v1"} <= set(every) and set(tasks) < set(every)
    assert "FrankaLift-v1" not in every


def test_checkpoint_task_reads_both_kinds_of_checkpoint():
    assert checkpoint_task(CHECKPOINT) == "SO100Lift-v1"
    assert checkpoint_task(os.path.join(ROOT, "tasks", "franka_push_diffusion_state.pt")) == "FrankaPush-v1"
    with pytest.raises(ValueError, match="not a suite task"):
        run_checkpoint(os.path.join(ROOT, "tasks", "franka_lift_ppo.pt"), "train", 2)


def test_summary_mean_is_the_mean_rate_with_the_pooled_interval():
    rows = [{"env_id": "A", "split": "train", "policy": "expert", "episodes": 50, "seeds": [1, 50],
             "success_once": 1.0, "success_once_ci95": list(wilson_interval(50, 50)),
             "success_at_end": 0.9, "success_at_end_ci95": list(wilson_interval(45, 50)), "wall_s": 1.0},
            {"env_id": "B", "split": "train", "policy": "expert", "episodes": 50, "seeds": [1, 50],
             "success_once": 0.5, "success_once_ci95": list(wilson_interval(25, 50)),
             "success_at_end": 0.3, "success_at_end_ci95": list(wilson_interval(15, 50)), "wall_s": 1.0}]
    summary = summarize(rows)
    mean = summary["mean"]["train"]
    assert mean["tasks"] == 2 and mean["episodes"] == 100
    assert mean["success_once"] == pytest.approx(0.75) and mean["success_at_end"] == pytest.approx(0.6)
    assert mean["success_once_ci95"] == list(wilson_interval(75, 100))
    table = markdown_table(summary)
    assert "| A | train | expert | 50 (1-50) | 100 % [93, 100] | 90 % [79, 96] |" in table
    assert "| **mean of 2 tasks** | train | | 100 | 75 % [66, 82] | 60 % [50, 69] |" in table


def test_episode_k_runs_the_published_seed_first_plus_k():
    # A batch reset with the split's first seed gives env 2 the state a lone env seeded first + 2 gets.
    first = FIRST_SEEDS["heldout"]
    cubes = []
    for num_envs, seed in ((3, first), (1, first + 2)):
        env = gym.make("SO101Push-v1", num_envs=num_envs, variant="heldout")
        try:
            env.reset(seed=seed)
            base = env.unwrapped
            cubes.append((base.cube.state.pose[-1, :3] - base.env_origins[-1]).clone())
        finally:
            env.close()
    assert torch.allclose(cubes[0], cubes[1], atol=1e-6)


def test_expert_row_counts_success_once_and_at_the_end():
    row = run_expert("SO101Push-v1", "train", 4)
    assert row["seeds"] == [FIRST_SEEDS["train"], FIRST_SEEDS["train"] + 3]
    assert row["success_once"] == 1.0 and row["success_at_end"] == 1.0
    assert row["success_at_end_ci95"] == list(wilson_interval(4, 4))
    with pytest.raises(ValueError, match="split"):
        run_expert("SO101Push-v1", "test", 4)


def test_a_checkpoint_runs_in_the_split_variant():
    env, _, infos = load_policy(CHECKPOINT, 2, seed=0, env_kwargs={"variant": "heldout"})
    try:
        base = env.venv.unwrapped
        assert infos["env_id"] == "SO100Lift-v1" and base.variant == "heldout"
        assert base.cfg.colors == ("orange", "purple", "cyan", "pink")
    finally:
        env.close()


def test_the_so100_twins_run_the_protocol_and_one_task_is_one_task(tmp_path, capsys):
    load_script("benchmark_suite").main(["--tasks", "SO100Pull-v1", "--splits", "train", "--episodes", "2"])
    table = capsys.readouterr().out
    assert "| SO100Pull-v1 | train | expert | 2 (1000000-1000001) |" in table
    assert "| **mean of 1 task** | train |" in table


def test_the_script_writes_one_json_and_one_table(tmp_path):
    load_script("benchmark_suite").main(["--tasks", "SO101Pull-v1", "--splits", "heldout", "--episodes", "2",
                                        "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "benchmark_suite.json").read_text())
    assert [(row["env_id"], row["split"], row["episodes"]) for row in summary["rows"]] == [("SO101Pull-v1", "heldout", 2)]
    assert summary["first_seeds"] == {"heldout": FIRST_SEEDS["heldout"]}
    assert summary["mean"]["heldout"]["episodes"] == 2
    assert (tmp_path / "benchmark_suite.md").read_text().startswith("| task | split |")


@pytest.mark.parametrize("argv, message", [
    (["--tasks", "FrankaLift-v1"], "not suite tasks: ['FrankaLift-v1']"),
    (["--episodes", "0"], "--episodes"),
    (["--checkpoint", "missing.pt"], "no such checkpoint"),
    # A checkpoint runs its own task: --tasks beside it would be ignored, so it is refused.
    (["--checkpoint", CHECKPOINT, "--tasks", "SO101Push-v1"], "give one of the two"),
    # A policy for a task without variants is refused before any episode runs (it raised a TypeError).
    (["--checkpoint", os.path.join(ROOT, "tasks", "franka_lift_ppo.pt")], "a policy for FrankaLift-v1, not a suite task"),
    (["--checkpoint", os.path.join(ROOT, "tasks", "franka_push_diffusion_state.pt")],
     "a policy for FrankaPush-v1, not a suite task"),
    (["--checkpoint", os.path.join(ROOT, "README.md")], "not a torch checkpoint")])
def test_the_script_refuses_bad_input_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_script("benchmark_suite").main(argv)
    assert message in capsys.readouterr().err
