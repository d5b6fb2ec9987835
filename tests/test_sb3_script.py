"""scripts/train_sb3.py as scripts/train.py: the plan line, the progress bar, a progress.csv that
agrees with the summary (whole, trained rollouts only), stop signals and --resume, and a model.zip
that scripts/evaluate.py evaluates (success once, at end) and films."""

from __future__ import annotations

import json
import os
import signal

import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.save_util import load_from_zip_file  # noqa: E402

from script_runs import load_script, table  # noqa: E402
from simulo_envs.training.sb3_train import SB3Run  # noqa: E402

ARGS = ["--env-id", "FrankaReach-v1", "--num-envs", "4", "--seed", "1"]


def saved_steps(path) -> tuple[int, int]:
    data, _, _ = load_from_zip_file(path, device="cpu")
    return data["num_timesteps"], data["simulo_infos"]["env_steps"]


@pytest.mark.e2e
def test_bar_summary_and_progress_agree_and_model_zip_evaluates_and_films(tmp_path, capsys):
    log_dir = tmp_path / "run"
    load_script("train_sb3").main([*ARGS, "--total-timesteps", "300", "--log-dir", str(log_dir),
                                   "--eval-episodes", "3"])
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0] == (f"training FrankaReach-v1: 300 env steps = 3 PPO iterations x 4 envs x 25 steps with "
                      f"Stable-Baselines3 PPO; logs in {log_dir}")
    assert out[1].startswith("trained 300 env steps in ") and f"checkpoint {log_dir}/model.zip" in out[1]
    assert out[2].startswith("evaluation: success rate ") and "over 3 episodes" in out[2]
    assert "FrankaReach-v1: 300/300 steps (100%)" in captured.err and "\r" not in captured.err   # plain lines
    rows = table(log_dir)
    assert [r["env_steps"] for r in rows] == ["100", "200", "300"] and rows[-1]["episodes"] == "4"
    assert float(rows[-1]["learn_s"]) > 0 and float(rows[-1]["collect_s"]) > 0
    assert saved_steps(log_dir / "model.zip") == (300, 300)
    assert json.loads((log_dir / "evaluation.json").read_text())["episodes"] == 3
    assert json.loads((log_dir / "run.json").read_text())["algo"] == "ppo"   # the default --algo

    videos = tmp_path / "videos"
    load_script("evaluate").main(["--checkpoint", str(log_dir / "model.zip"), "--episodes", "2", "--json",
                                  "--video-dir", str(videos), "--video-full-episodes"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["env_id"] == "FrankaReach-v1" and summary["episodes"] == 2 and summary["env_steps"] == 300
    assert {"success_rate", "success_at_end"} <= set(summary) and summary["video"] == str(videos / "FrankaReach-v1.mp4")
    import imageio.v3 as iio

    assert iio.imread(summary["video"]).shape[0] >= 51   # the full 50-step episode: reset frame + 50 steps


def test_the_wall_clock_cap_counts_trained_rollouts_only(tmp_path, capsys):
    log_dir = tmp_path / "run"
    load_script("train_sb3").main([*ARGS, "--total-timesteps", "100000", "--max-minutes", "0.05", "--no-progress",
                                   "--log-dir", str(log_dir), "--eval-episodes", "0"])
    line = capsys.readouterr().out.splitlines()[1]
    steps = int(line.split("trained ")[1].split(" env steps")[0].replace(",", ""))
    rows = table(log_dir)
    assert 100 <= steps < 100000 and steps % 100 == 0
    assert line.endswith(f"; the wall-clock limit stopped it at {steps:,} of the budget's 100,000 env steps: "
                         "continue with --resume")
    assert int(rows[-1]["env_steps"]) == steps and len(rows) == steps // 100
    assert saved_steps(log_dir / "model.zip") == (steps, steps)


def test_a_signal_saves_model_zip_and_resume_finishes_the_run(tmp_path, capsys, monkeypatch):
    log_dir = tmp_path / "run"
    original, count = SB3Run._on_step, [0]

    def spy(self):
        count[0] += 1
        if count[0] == 25 + 5:     # in the second rollout (25 steps each)
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self)

    monkeypatch.setattr(SB3Run, "_on_step", spy)
    main = load_script("train_sb3").main
    with pytest.raises(SystemExit) as stopped:   # the envs in worker processes: they end with the session
        main([*ARGS, "--total-timesteps", "300", "--no-progress", "--log-dir", str(log_dir), "--num-workers", "2"])
    assert stopped.value.code == 143
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"interrupted by SIGTERM after 1 PPO iteration (100 env steps): saved {log_dir}/model.zip; continue with --resume")
    assert [r["env_steps"] for r in table(log_dir)] == ["100"] and saved_steps(log_dir / "model.zip") == (100, 100)

    monkeypatch.undo()
    # a resumed session with a raised budget, stopped at its first env step, keeps it
    monkeypatch.setattr(SB3Run, "_on_step", lambda self: os.kill(os.getpid(), signal.SIGTERM) or original(self))
    with pytest.raises(SystemExit):
        main(["--no-progress", "--log-dir", str(log_dir), "--resume", "--total-timesteps", "400"])
    monkeypatch.undo()
    (log_dir / "evaluation.json").write_text('{"episodes": 3}')   # of the model before the resumed session
    capsys.readouterr()
    main(["--no-progress", "--log-dir", str(log_dir), "--resume", "--eval-episodes", "0",
          "--sim-backend", "physx_cpu"])   # settings from the run; the backend it used by default agrees
    out = capsys.readouterr().out
    assert "trained 300 env steps, 400 in all in " in out
    assert f"removed {log_dir}/evaluation.json: it evaluated the model before this session" in out
    assert not (log_dir / "evaluation.json").exists()
    assert [r["env_steps"] for r in table(log_dir)] == ["100", "200", "300", "400"]
    assert saved_steps(log_dir / "model.zip") == (400, 400)
    with pytest.raises(SystemExit) as refused:   # a spent budget: refused before the plan is printed
        main(["--no-progress", "--log-dir", str(log_dir), "--resume", "--total-timesteps", "450"])
    captured = capsys.readouterr()
    assert refused.value.code == 2 and captured.out == ""
    assert ("already trained 400 env steps, at least the budget of 400 (budget 450 rounded down to whole iterations); give "
            "--total-timesteps 500 or more to train further") in captured.err
