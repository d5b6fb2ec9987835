"""The SO-101 suite's PPO recipes (``tasks/so101_*_ppo.py``): which recipe each task trains with
and how it differs from the one it is built on (``docs/training_so_arms.md`` has the figures)."""

from __future__ import annotations

import pytest

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.training.rsl_rl_train import train_config_for


@pytest.mark.parametrize("env_id", ["SO101Push-v1", "SO101Pull-v1", "SO100Push-v1", "SO100Pull-v1"])
def test_push_and_pull_hold_their_success_with_franka_pushs_recipe_on_small_networks(env_id):
    """FrankaPush-v1's holding recipe (terminations ignored, discount 0.95) with 50-step training
    episodes, 8 minibatches and 3 x 128-unit networks; the SO-100 twins train with it too."""
    franka = train_config_for("FrankaPush-v1")
    config = train_config_for(env_id)
    assert config["vector_kwargs"] == {"ignore_terminations": True}
    assert config["train_max_episode_steps"] == 50 and franka["train_max_episode_steps"] == 30
    assert config["runner"]["algorithm"]["gamma"] == 0.95
    assert config["runner"]["algorithm"]["num_mini_batches"] == 8
    assert config["runner"]["actor"]["hidden_dims"] == config["runner"]["critic"]["hidden_dims"] == [128, 128, 128]
    assert config["env_kwargs"] == {"reward_mode": "normalized_dense", "control_mode": "pd_ee_delta_pos"}
    changed = ("train_max_episode_steps", "total_timesteps")
    assert {k: v for k, v in config.items() if k not in changed + ("runner",)} == \
        {k: v for k, v in franka.items() if k not in changed + ("runner",)}
    for part in ("algorithm", "actor", "critic"):
        ours = {k: v for k, v in config["runner"][part].items() if k not in ("num_mini_batches", "hidden_dims")}
        theirs = {k: v for k, v in franka["runner"][part].items() if k not in ("num_mini_batches", "hidden_dims")}
        assert ours == theirs


def test_pull_trains_with_the_push_recipe():
    assert train_config_for("SO101Pull-v1") == train_config_for("SO101Push-v1")
