"""LeRobot policy folders as checkpoints of scripts/evaluate.py (simulo_envs/lerobot/policy_folder.py);
their evaluation itself runs in the LeRobot venv (integrations/lerobot_env_simulo/tests)."""

from __future__ import annotations

import json

import pytest

from simulo_envs.lerobot.policy_folder import by_policy_folder, is_policy_folder, policy_folder
from script_runs import load_script


def _folder(path, config=None):
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"type": "act"} if config is None else config))
    (path / "model.safetensors").write_bytes(b"")
    return path


def test_a_policy_folder_is_found_itself_or_under_pretrained_model(tmp_path):
    model = _folder(tmp_path / "checkpoints" / "last" / "pretrained_model")
    assert policy_folder(str(model)) == str(model)
    assert policy_folder(str(tmp_path / "checkpoints" / "last")) == str(model)
    assert is_policy_folder(str(model)) and not is_policy_folder(str(tmp_path))


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
