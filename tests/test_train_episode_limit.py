"""A recipe's ``train_max_episode_steps`` shortens training episodes only: evaluation runs the
task's own time limit, the one its success (and success at the last step) is judged by."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("rsl_rl")

from simulo_envs.tasks import franka_lift_ppo  # noqa: E402
from simulo_envs.training.rsl_rl_train import make_rsl_env, plan_training, train_config_for  # noqa: E402


def test_training_envs_truncate_at_the_recipes_limit_and_evaluation_envs_at_the_tasks():
    config = {**train_config_for("FrankaLift-v1"), "train_max_episode_steps": 3}
    training = make_rsl_env("FrankaLift-v1", 2, config, 0)
    try:
        assert training.max_episode_length == 3
        zeros = torch.zeros(2, training.num_actions)
        dones = [bool(training.step(zeros)[2].all()) for _ in range(4)]
        assert dones == [False, False, True, False]   # truncated at step 3, then a fresh episode
    finally:
        training.close()
    evaluation = make_rsl_env("FrankaLift-v1", 2, config, 0, evaluation=True, full_episodes=True)
    try:
        assert evaluation.max_episode_length == 100
    finally:
        evaluation.close()


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "50"])
def test_a_bad_training_limit_is_refused_before_anything_is_built(monkeypatch, bad):
    monkeypatch.setitem(franka_lift_ppo.TRAIN_CONFIG, "train_max_episode_steps", bad)
    with pytest.raises(ValueError, match="train_max_episode_steps"):
        plan_training("FrankaLift-v1", num_envs=2, total_timesteps=100)
