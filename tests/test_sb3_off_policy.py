"""scripts/train_sb3.py --algo sac|td3: SB3's off-policy algorithms on the batched env, with
train_sb3.py's plan line, progress.csv, run.json, --max-minutes, stop signals and --resume, and a
model.zip that scripts/evaluate.py evaluates with the right class."""

from __future__ import annotations

import json
import os
import signal

import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.save_util import load_from_zip_file, save_to_zip_file  # noqa: E402
from stable_baselines3.sac.policies import SACPolicy  # noqa: E402
from stable_baselines3.td3.policies import TD3Policy  # noqa: E402

from simulo_envs.training import sb3_off_policy  # noqa: E402
from script_runs import load_script, table  # noqa: E402
from simulo_envs.training.sb3_off_policy import OffPolicyRun  # noqa: E402

# 4 envs, 100 steps of them: rows every 50 steps (200 env steps); updates (1 per step of the envs)
# once more than 100 env steps are stored, i.e. after steps 26 .. 100 of the envs: 75 gradient steps.
ARGS = ["--env-id", "FrankaReach-v1", "--num-envs", "4", "--seed", "1", "--total-timesteps", "400", "--no-progress"]


@pytest.fixture(autouse=True)
def small_updates(monkeypatch):
    """Updates from env step 100 on, on minibatches of 32: the settings' code path, at test size."""
    monkeypatch.setitem(sb3_off_policy.OFF_POLICY_DEFAULTS, "learning_starts", 100)
    monkeypatch.setitem(sb3_off_policy.OFF_POLICY_DEFAULTS, "batch_size", 32)


def saved(path) -> dict:
    data, _, _ = load_from_zip_file(path, device="cpu")
    return data


def evaluate_json(capsys, checkpoint, episodes: int) -> dict:
    load_script("evaluate").main(["--checkpoint", str(checkpoint), "--episodes", str(episodes), "--json"])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_td3_trains_logs_and_evaluates_and_an_unknown_algorithm_is_refused(tmp_path, capsys):
    log_dir = tmp_path / "td3"
    load_script("train_sb3").main(["--algo", "td3", *ARGS, "--log-dir", str(log_dir), "--eval-episodes", "0"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("training FrankaReach-v1: 400 env steps = 100 steps of 4 envs, each followed by 1 gradient "
                      f"step of 32 transitions from env step 100 on with Stable-Baselines3 TD3; logs in {log_dir}")
    assert out[1].startswith("trained 400 env steps and 75 gradient steps in ")
    assert f"checkpoint {log_dir}/model.zip" in out[1]
    rows = table(log_dir)
    assert [(r["iteration"], r["env_steps"], r["episodes"]) for r in rows] == [("49", "200", "4"), ("99", "400", "8")]
    assert rows[-1]["length"] == "50.0000" and float(rows[-1]["learn_s"]) > 0 and float(rows[-1]["collect_s"]) > 0
    run = json.loads((log_dir / "run.json").read_text())
    assert run["algo"] == "td3" and run["num_envs"] == 4 and run["env_steps"] == 400
    settings = run["hyperparameters"]
    assert (settings["gamma"], settings["tau"], settings["gradient_steps"], settings["buffer_size"]) == (
        0.95, 0.01, 1, 1_000_000)   # FrankaReach-v1's discount; ManiSkill's SAC baseline's tau and buffer
    assert settings["policy_kwargs"] == {"net_arch": [256, 256, 256]} and settings["policy_delay"] == 2
    data = saved(log_dir / "model.zip")
    assert data["policy_class"] is TD3Policy and data["num_timesteps"] == 400
    assert data["simulo_infos"]["algo"] == "td3" and data["simulo_infos"]["gradient_steps"] == 75

    summary = evaluate_json(capsys, log_dir / "model.zip", 5)
    assert summary["env_id"] == "FrankaReach-v1" and summary["episodes"] == 5 and summary["env_steps"] == 400
    assert 0.0 <= summary["success_rate"] <= 1.0 and 1 <= summary["mean_length"] <= 50

    # the same file claiming an algorithm train_sb3.py does not train, and one claiming SAC
    data, params, variables = load_from_zip_file(log_dir / "model.zip", device="cpu")
    for algo, message in (("ddpg", "holds an algorithm 'ddpg' that scripts/train_sb3.py does not train"),
                          ("sac", "says SAC but holds a TD3Policy policy, not SACPolicy")):
        data["simulo_infos"]["algo"] = algo
        save_to_zip_file(tmp_path / f"{algo}.zip", data=data, params=params, pytorch_variables=variables)
        with pytest.raises(SystemExit) as refused:
            load_script("evaluate").main(["--checkpoint", str(tmp_path / f"{algo}.zip"), "--episodes", "1"])
        assert refused.value.code == 2 and message in capsys.readouterr().err


def test_sac_stopped_by_a_signal_saves_resumes_and_evaluates(tmp_path, capsys, monkeypatch):
    log_dir = tmp_path / "sac"
    original, count = OffPolicyRun._on_step, [0]

    def spy(self):
        count[0] += 1
        if count[0] == 30:   # before the 30th step of the envs is stored
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self)

    monkeypatch.setattr(OffPolicyRun, "_on_step", spy)
    main = load_script("train_sb3").main
    with pytest.raises(SystemExit) as stopped:
        main(["--algo", "sac", *ARGS, "--log-dir", str(log_dir)])
    assert stopped.value.code == 143
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"interrupted by SIGTERM after 116 env steps (4 gradient steps): saved {log_dir}/model.zip; "
        f"continue with --resume (the replay buffer is refilled first)")   # 29 steps of 4 envs; updates after 26..29
    assert [r["env_steps"] for r in table(log_dir)] == ["116"]
    data = saved(log_dir / "model.zip")
    assert data["policy_class"] is SACPolicy and data["num_timesteps"] == 116 and data["learning_starts"] == 100
    monkeypatch.setattr(OffPolicyRun, "_on_step", original)

    with pytest.raises(SystemExit) as refused:   # another algorithm cannot continue it
        main(["--algo", "td3", *ARGS, "--log-dir", str(log_dir), "--resume"])
    assert refused.value.code == 2 and "trained with --algo sac, not td3" in capsys.readouterr().err

    main(["--log-dir", str(log_dir), "--resume", "--eval-episodes", "2", "--no-progress"])   # SAC and sizes from the run
    out = capsys.readouterr().out.splitlines()
    # the empty replay buffer is refilled for 100 env steps (25 steps of the envs: 116 -> 216), then
    # 1 update after each of the remaining 46 steps of the envs: 4 + 46 = 50 gradient steps
    assert out[1].startswith("trained 284 env steps (400 and 50 gradient steps in all) in ")
    assert out[2].startswith("evaluation: success rate ") and "over 2 episodes" in out[2]
    assert [r["env_steps"] for r in table(log_dir)] == ["116", "316", "400"]
    data = saved(log_dir / "model.zip")
    assert data["num_timesteps"] == 400 and data["learning_starts"] == 100
    assert data["simulo_infos"]["gradient_steps"] == 50
    summary = json.loads((log_dir / "evaluation.json").read_text())
    assert summary["episodes"] == 2 and 0.0 <= summary["success_rate"] <= 1.0
    assert summary["library"] == "stable-baselines3 SAC"


def test_max_minutes_stops_an_off_policy_run(tmp_path, capsys):
    log_dir = tmp_path / "run"
    load_script("train_sb3").main(["--algo", "sac", *ARGS[:-3], "--total-timesteps", "1000000", "--no-progress",
                                   "--max-minutes", "0.03", "--log-dir", str(log_dir), "--eval-episodes", "0"])
    line = capsys.readouterr().out.splitlines()[1]
    steps = int(line.split("trained ")[1].split(" env steps")[0].replace(",", ""))
    assert 4 <= steps < 1_000_000 and steps % 4 == 0
    assert line.endswith(f"; the wall-clock limit stopped it at {steps:,} of the budget's 1,000,000 env steps: "
                         "continue with --resume")
    assert int(table(log_dir)[-1]["env_steps"]) == steps and saved(log_dir / "model.zip")["num_timesteps"] == steps


def test_bad_algo_and_budget_fail_at_parse_time(tmp_path, capsys):
    main = load_script("train_sb3").main
    with pytest.raises(SystemExit) as refused:
        main(["--algo", "ddpg", "--log-dir", str(tmp_path / "a")])
    assert refused.value.code == 2 and "argument --algo: invalid choice: 'ddpg'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["--algo", "td3", *ARGS[:-3], "--total-timesteps", "3", "--log-dir", str(tmp_path / "b")])
    assert refused.value.code == 2
    assert "total_timesteps 3 is less than one step of the 4 envs: ask for at least 4" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_budget_that_ends_before_the_first_update_is_named_in_the_plan():
    plan = sb3_off_policy.plan_off_policy("sac", "FrankaReach-v1", num_envs=4, total_timesteps=100)
    assert plan.describe() == ("FrankaReach-v1: 100 env steps = 25 steps of 4 envs, each followed by 1 gradient step "
                               "of 32 transitions from env step 100 on")
    assert plan.warning() == ("warning: this budget ends before the first gradient step (env step 100): random "
                              "actions only, nothing learned; give --total-timesteps above 100 to train")
    assert sb3_off_policy.plan_off_policy("sac", "FrankaReach-v1", num_envs=4, total_timesteps=104).warning() is None
