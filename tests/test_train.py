"""scripts/train.py writes a checkpoint that scripts/evaluate.py loads (issue 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("rsl_rl")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args: str) -> str:
    result = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


def test_train_then_evaluate(tmp_path):
    log_dir = tmp_path / "run"
    _run("scripts/train.py", "--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "200",
         "--seed", "1", "--log-dir", str(log_dir), "--no-progress")
    checkpoint = log_dir / "model_final.pt"
    assert checkpoint.exists() and (log_dir / "model_0.pt").exists()
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(log_dir))
    rows = (log_dir / "progress.csv").read_text().splitlines()
    assert rows[0].startswith("iteration,env_steps") and len(rows) == 1 + 2  # 200 steps = 2 iterations of 4 x 25
    out = _run("scripts/evaluate.py", "--checkpoint", str(checkpoint), "--episodes", "3",
               "--video-dir", str(tmp_path / "videos"), "--json")
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["env_id"] == "FrankaReach-v1" and summary["episodes"] == 3
    assert 0.0 <= summary["success_rate"] <= 1.0
    import imageio.v3 as iio

    video = iio.imread(summary["video"])
    assert video.ndim == 4 and video.shape[0] >= 2 and video.shape[-1] == 3
