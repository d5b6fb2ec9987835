"""Training's wall-clock cap (``train(max_wall_s=...)``, ``scripts/train.py --max-minutes``)."""

from __future__ import annotations

import csv

import pytest
import torch

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.training.rsl_rl_train import describe_result, train  # noqa: E402


def _rows(log_dir) -> list[dict]:
    with open(log_dir / "progress.csv") as handle:
        return list(csv.DictReader(handle))


def test_wall_clock_cap_stops_between_iterations(tmp_path):
    torch.set_num_threads(1)
    # 4 envs x 25 steps = 100 env steps per iteration; 5 planned. Any iteration outlasts 1 ms.
    result = train("FrankaReach-v1", num_envs=4, total_timesteps=500, seed=0, log_dir=str(tmp_path),
                   progress=False, max_wall_s=0.001)
    assert result.env_steps == 100
    assert [row["env_steps"] for row in _rows(tmp_path)] == ["100"]
    saved = torch.load(result.checkpoint, weights_only=False)
    assert saved["infos"]["env_steps"] == 100
    assert describe_result(result).endswith("; the wall-clock limit stopped it at 100 of the budget's 500 env steps: "
                                            "continue with --resume")
    resumed = train("FrankaReach-v1", num_envs=4, total_timesteps=500, seed=0, log_dir=str(tmp_path),
                    progress=False, resume=True)
    assert resumed.env_steps == 500 and "wall-clock" not in describe_result(resumed)


def test_generous_cap_trains_the_whole_budget(tmp_path):
    torch.set_num_threads(1)
    result = train("FrankaReach-v1", num_envs=4, total_timesteps=200, seed=0, log_dir=str(tmp_path),
                   progress=False, max_wall_s=3600)
    assert result.env_steps == 200 and len(_rows(tmp_path)) == 2


@pytest.mark.parametrize("bad", [0, -1.0, "10", True])
def test_bad_cap(tmp_path, bad):
    with pytest.raises(ValueError, match="max_wall_s"):
        train("FrankaReach-v1", num_envs=4, total_timesteps=200, log_dir=str(tmp_path), progress=False,
              max_wall_s=bad)
    assert not (tmp_path / "progress.csv").exists()
