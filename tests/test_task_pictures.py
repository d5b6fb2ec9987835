"""``scripts/task_pictures.py``: one picture per SO-101 suite task, render() at reset and when the
expert is done beside the sensor cameras, small enough for the README."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image

from tests.script_runs import load_script

pictures = load_script("task_pictures")


def test_a_task_picture_shows_both_render_frames_and_both_sensor_cameras(tmp_path, capsys):
    pictures.main(["--tasks", "SO101OpenDrawer-v1", "--out", str(tmp_path)])
    path = tmp_path / "SO101OpenDrawer-v1.png"
    image = Image.open(path)
    assert image.size == (2 * 256 + 128, 256) and image.mode == "P"  # 2 render frames, a column of 2 sensors
    assert os.path.getsize(path) < 60_000
    rgb = np.asarray(image.convert("RGB")).astype(int)
    reset, done = rgb[:, :256], rgb[:, 256:512]
    assert np.abs(reset - done).mean() > 1.0  # the arm moved and the drawer opened between the two frames
    assert np.abs(rgb[:128, 512:] - rgb[128:, 512:]).mean() > 10  # base and wrist cameras differ
    out = capsys.readouterr().out
    assert "'Open the " in out and "expert done at step" in out and "['base_camera', 'wrist_camera']" in out


def test_unknown_tasks_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(SystemExit):
        pictures.main(["--tasks", "FrankaLift-v1", "--out", str(tmp_path / "pictures")])
    assert not (tmp_path / "pictures").exists()


def test_a_negative_seed_is_refused_before_anything_is_written(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        pictures.main(["--tasks", "SO101Push-v1", "--seed", "-5", "--out", str(tmp_path / "pictures")])
    assert exit_info.value.code == 2
    assert "--seed must be >= 0 and < 2**63, got -5" in capsys.readouterr().err
    assert not (tmp_path / "pictures").exists()
