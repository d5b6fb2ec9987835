"""LeRobot policy folders as checkpoints of scripts/evaluate.py (simulo_envs/training/lerobot_policies.py);
their evaluation itself runs in the LeRobot venv (integrations/lerobot_env_simulo/tests)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from simulo_envs.training.lerobot_policies import by_policy_folder, is_policy_folder, policy_env, policy_folder, policy_task
from script_runs import ROOT, load_script


def _folder(path, config=None):
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"type": "act"} if config is None else config))
    (path / "model.safetensors").write_bytes(b"")
    return path


def test_a_policy_folder_is_found_itself_or_under_pretrained_model(tmp_path):
    model = _folder(tmp_path / "checkpoints" / "last" / "pretrained_model")
    assert policy_folder(str(model)) == str(model)
    assert policy_folder(str(tmp_path / "checkpoints" / "last")) == str(model)
    assert policy_folder(str(tmp_path)) == str(model)   # a lerobot-train output folder: its last checkpoint
    assert is_policy_folder(str(model)) and not is_policy_folder(str(tmp_path / "checkpoints"))


@pytest.mark.parametrize("config", [{"n_heads": 2}, ["act"]])
def test_a_config_without_a_policy_type_is_not_a_policy_folder(tmp_path, config):
    model = _folder(tmp_path / "model", config)
    assert not is_policy_folder(str(model))
    with pytest.raises(FileNotFoundError, match="not a LeRobot policy folder"):
        policy_folder(str(model))


def test_other_checkpoints_go_to_the_given_functions(tmp_path):
    calls = []
    evaluate, _ = by_policy_folder(lambda path, *a, **k: calls.append((path, a, k)) or "ours", None)
    assert evaluate("model_final.pt", 5, seed=3) == "ours" and calls == [("model_final.pt", (5,), {"seed": 3})]


def test_evaluate_without_lerobot_says_where_a_policy_folder_runs(tmp_path, capsys):
    model = _folder(tmp_path / "pretrained_model")
    with pytest.raises(SystemExit) as exit_info:
        load_script("evaluate").main(["--checkpoint", str(model), "--episodes", "2"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "is a LeRobot policy folder" in error and ".venv-lerobot/bin/python scripts/evaluate.py" in error


def test_a_ppo_checkpoint_where_rsl_rl_is_missing_says_it_runs_in_the_projects_venv(capsys, monkeypatch):
    """The opposite direction: in the LeRobot venv, which has no rsl-rl-lib, a PPO checkpoint is
    named for what it is. ``import rsl_rl`` fails here as it does there (None in sys.modules)."""
    monkeypatch.setitem(sys.modules, "rsl_rl", None)
    for name in [name for name in sys.modules if name.startswith("rsl_rl.") or name in (
            "simulo_envs.training.rsl_rl_env", "simulo_envs.wrappers.rsl_rl")]:
        monkeypatch.delitem(sys.modules, name)
    checkpoint = os.path.join(ROOT, "tasks", "so101_pick_place_ppo.pt")
    with pytest.raises(SystemExit) as exit_info:
        load_script("evaluate").main(["--checkpoint", checkpoint, "--episodes", "2"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].split(": error: ")[1].startswith(
        f"{checkpoint} is a PPO checkpoint of scripts/train.py: evaluate it in the project's venv (`make setup`, "
        f"then `.venv/bin/python scripts/evaluate.py --checkpoint {checkpoint}`); here: ")


def _dataset(path, env_id="SO101Lift-v1"):
    (path / "meta").mkdir(parents=True)
    (path / "meta" / "simulo_env.json").write_text(json.dumps({"env_id": env_id, "fps": 30}))
    return path


def test_the_env_comes_from_train_config_or_from_the_recorded_dataset(tmp_path):
    model = _folder(tmp_path / "a" / "pretrained_model")
    (model / "train_config.json").write_text(json.dumps({"env": {"type": "simulo", "task": "SO101Push-v1"}}))
    assert policy_env(str(model)) == ("env", {"type": "simulo", "task": "SO101Push-v1"})
    assert policy_task(str(model)) == "SO101Push-v1"
    model = _folder(tmp_path / "b" / "pretrained_model")
    dataset = _dataset(tmp_path / "demos")
    (model / "train_config.json").write_text(json.dumps({"env": None, "dataset": {"root": str(dataset)}}))
    assert policy_env(str(model))[0] == "dataset" and policy_task(str(model)) == "SO101Lift-v1"
    model = _folder(tmp_path / "c" / "pretrained_model")   # no train_config.json: nothing says which env
    with pytest.raises(ValueError, match="names no simulo env"):
        policy_task(str(model))


def test_the_benchmark_protocol_takes_a_policy_folder_of_a_suite_task_only(tmp_path, capsys):
    from simulo_envs.training.suite_benchmark import checkpoint_task

    model = _folder(tmp_path / "run" / "checkpoints" / "last" / "pretrained_model")
    (model / "train_config.json").write_text(json.dumps({"env": {"type": "simulo", "task": "SO101Lift-v1"}}))
    assert checkpoint_task(str(model.parent)) == "SO101Lift-v1"
    (model / "train_config.json").write_text(json.dumps({"env": {"type": "simulo", "task": "FrankaLift-v1"}}))
    with pytest.raises(SystemExit):
        load_script("benchmark_suite").main(["--checkpoint", str(model), "--episodes", "2"])
    assert "a policy for FrankaLift-v1, not a suite task" in capsys.readouterr().err
    with pytest.raises(SystemExit):   # a folder that holds no policy
        load_script("benchmark_suite").main(["--checkpoint", str(tmp_path), "--episodes", "2"])
    assert "is a folder, not a checkpoint file" in capsys.readouterr().err
