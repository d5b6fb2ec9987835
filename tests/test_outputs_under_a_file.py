"""An output path under a regular file (or a folder given for a file) is refused before any work,
with a message that says so, by every script that writes or reads one."""

from __future__ import annotations

import os

import pytest

from script_runs import load_script


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "afile"
    path.write_text("a regular file")
    return path


def _refused(script: str, argv: list, capsys) -> str:
    with pytest.raises(SystemExit) as stopped:
        load_script(script).main(argv)
    assert stopped.value.code == 2
    return capsys.readouterr().err


def test_train_il_checks_its_export_path_before_training(tmp_path, a_file, capsys):
    # It trained first and then failed with "17" (the errno of the OSError).
    error = _refused("train_il", ["--dataset", str(tmp_path / "demos"), "--out", str(tmp_path / "run"),
                                  "--export", str(a_file / "policy.pt")], capsys)
    assert "is a file, not a folder" in error and "17" not in error.splitlines()[-1].split(":")[-1]
    assert not (tmp_path / "run").exists()


def test_a_dataset_under_a_file_says_the_parent_is_a_file(a_file, capsys):
    # It said "... is not writable".
    error = _refused("collect_demos", ["--env-id", "FrankaLift-v1", "--num-episodes", "1",
                                       "--out", str(a_file / "sub")], capsys)
    assert f"{a_file} is a file, not a folder" in error and "not writable" not in error


def test_a_folder_given_as_a_checkpoint_is_named_a_folder(tmp_path, capsys):
    error = _refused("evaluate", ["--checkpoint", str(tmp_path), "--episodes", "1"], capsys)
    assert "is a folder, not a checkpoint file" in error
    assert os.listdir(tmp_path) == []
