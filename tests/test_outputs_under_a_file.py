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


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_dataset_on_a_file_system_that_refuses_it_says_so_like_the_other_outputs(capsys):
    # It said the system's reason alone ("No such file or directory: /proc/..."), then that reason
    # for a folder that exists: /proc takes no new folder, for root too, and is named not writable.
    error = _refused("collect_demos", ["--env-id", "FrankaLift-v1", "--num-episodes", "1",
                                       "--out", "/proc/simulo-dataset"], capsys)
    assert error.strip().endswith("error: cannot write dataset folder '/proc/simulo-dataset': '/proc' is not writable; "
                                  "nothing was written")


def test_a_folder_given_as_a_checkpoint_is_named_a_folder(tmp_path, capsys):
    error = _refused("evaluate", ["--checkpoint", str(tmp_path), "--episodes", "1"], capsys)
    assert "is a folder, not a checkpoint file" in error
    assert os.listdir(tmp_path) == []


def test_an_os_error_is_one_line_with_its_reason_not_its_number():
    from simulo_envs.output_paths import error_line

    assert error_line(FileNotFoundError(2, "No such file or directory", "/proc/ds")) == \
        "No such file or directory: /proc/ds"
    assert error_line(ValueError("bad value")) == "bad value"
    assert error_line(KeyError("SO100Lfit-v1")) == "SO100Lfit-v1"


def test_a_dataset_folder_that_cannot_be_created_names_the_reason(capsys):
    # /proc refuses new folders: the collection said "error: 2" (the errno).
    error = _refused("collect_demos", ["--env-id", "FrankaLift-v1", "--num-episodes", "1", "--out", "/proc/ds"],
                     capsys)
    last = error.strip().splitlines()[-1]
    assert "/proc/ds" in last and not last.endswith("error: 2")


def test_train_il_refuses_to_export_over_an_existing_file(tmp_path, a_file, capsys):
    # It replaced the file after training (a committed policy, when a recipe's --export named it).
    error = _refused("train_il", ["--dataset", str(tmp_path / "demos"), "--out", str(tmp_path / "run"),
                                  "--export", str(a_file)], capsys)
    assert f"--export {a_file}: the file exists" in error and "nothing was written" in error
    assert a_file.read_text() == "a regular file" and not (tmp_path / "run").exists()
