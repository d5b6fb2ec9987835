"""Bad input and failures around datasets: output folders that may not be written, a full disk at
every write of a commit, a real full file system, an interrupted and a killed collection."""

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from test_datasets_common import SCHEMA, make_episode

from simulo_envs.datasets import (DatasetExistsError, DatasetSchema, DatasetWriteError, HDF5Writer, LeRobotWriter,
                                  SchemaMismatchError, atomic, load_dataset)
from script_runs import load_script
from terminal_signals import default_sigint

WRITERS = {"lerobot": LeRobotWriter, "hdf5": HDF5Writer}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def snapshot(folder) -> dict:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------- output folders
@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_a_folder_that_is_not_a_dataset_is_refused_untouched(tmp_path, fmt):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    before = snapshot(out)
    with pytest.raises(DatasetExistsError, match="exists and is not a dataset .*notes.txt"):
        WRITERS[fmt](str(out), SCHEMA)
    assert snapshot(out) == before
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatasetExistsError, match="is a file"):
        WRITERS[fmt](str(tmp_path / "file"), SCHEMA)


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_a_dataset_is_refused_without_append_and_with_another_schema(tmp_path, fmt):
    out = tmp_path / "ds"
    WRITERS[fmt](str(out), SCHEMA).add(make_episode(1))
    before = snapshot(out)
    with pytest.raises(DatasetExistsError, match="pass --append"):
        WRITERS[fmt](str(out), SCHEMA)
    other = DatasetSchema(**{**SCHEMA.__dict__, "env_id": "FrankaPush-v1", "obs_mode": "state", "cameras": {}})
    with pytest.raises(SchemaMismatchError, match="env_id: 'FrankaLift-v1' != 'FrankaPush-v1'.*obs_mode"):
        WRITERS[fmt](str(out), other, append=True)
    other_fmt = "hdf5" if fmt == "lerobot" else "lerobot"
    with pytest.raises(DatasetExistsError, match=f"holds a {fmt} dataset"):
        WRITERS[other_fmt](str(out), SCHEMA, append=True)
    assert snapshot(out) == before
    WRITERS[fmt](str(out), SCHEMA, append=True).add(make_episode(2))  # same schema: appended
    assert load_dataset(str(out)).seeds.tolist() == [1, 2]


def test_an_episode_of_another_layout_is_refused_before_any_write(tmp_path):
    writer = LeRobotWriter(str(tmp_path / "ds"), SCHEMA)
    writer.add(make_episode(1))
    before = snapshot(tmp_path / "ds")
    with pytest.raises(SchemaMismatchError, match="camera 'base_camera'"):
        writer.add(make_episode(2, images=False))
    assert snapshot(tmp_path / "ds") == before


# ---------------------------------------------------------------------- a full disk
class FailingWrites:
    """Make the ``fail_at``-th atomic write from now on fail as a full disk does (after part of
    the new content is written), the writes after it succeed again."""

    def __init__(self, monkeypatch, fail_at: int):
        self.count, self.fail_at = 0, fail_at
        original, original_write = atomic.atomic_path, atomic.FolderSwap.write

        def fail(tmp):
            with open(tmp, "ab") as handle:
                handle.write(b"\0" * 10)
            raise OSError(errno.ENOSPC, "No space left on device", tmp)

        @contextlib.contextmanager
        def patched(path, sync_folder=True):
            self.count += 1
            with original(path, sync_folder) as tmp:
                yield tmp
                if self.count == self.fail_at:
                    fail(tmp)

        @contextlib.contextmanager
        def patched_write(swap, rel):  # a file of the next meta/ folder (the commit)
            self.count += 1
            with original_write(swap, rel) as tmp:
                yield tmp
                if self.count == self.fail_at:
                    fail(tmp)

        monkeypatch.setattr(atomic, "atomic_path", patched)
        monkeypatch.setattr(atomic.FolderSwap, "write", patched_write)


def writes_per_commit(fmt, tmp_path) -> int:
    writer = WRITERS[fmt](str(tmp_path / "count"), SCHEMA)
    writer.add(make_episode(0))
    with pytest.MonkeyPatch.context() as patch:
        failing = FailingWrites(patch, fail_at=-1)
        writer.add(make_episode(1))
    return failing.count


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_a_full_disk_at_any_write_keeps_every_committed_episode(tmp_path, monkeypatch, fmt):
    total = writes_per_commit(fmt, tmp_path)
    assert total >= 3
    for fail_at in range(1, total + 1):
        out = tmp_path / f"ds{fail_at}"
        writer = WRITERS[fmt](str(out), SCHEMA, **({"episodes_per_file": 2} if fmt == "lerobot" else {}))
        writer.add(make_episode(0))
        writer.add(make_episode(1))
        failing = FailingWrites(monkeypatch, fail_at)
        with pytest.raises(DatasetWriteError, match="holds the 2 episodes written before"):
            writer.add(make_episode(2))
        monkeypatch.undo()
        ds = load_dataset(str(out))
        assert ds.seeds.tolist() == [0, 1], f"write {fail_at} of {total}"
        assert np.array_equal(ds[1].action.numpy(), make_episode(1).actions)
        assert not [p for p in out.rglob("*") if atomic.TMP_MARK in p.name]
        writer.add(make_episode(3))  # space again: the writer goes on from the committed state
        ds = load_dataset(str(out))
        assert ds.seeds.tolist() == [0, 1, 3], f"write {fail_at} of {total}"
        assert np.array_equal(ds[2].action.numpy(), make_episode(3).actions)
        frames = ds[2].images["base_camera"].numpy().astype(int)
        assert np.abs(frames - make_episode(3).rgb()["base_camera"][:-1]).mean() < 3.0
        assert failing.count >= fail_at


def test_an_encoder_failure_is_a_write_error_and_keeps_the_dataset(tmp_path, monkeypatch):
    """FFmpeg failing while it encodes or muxes (seen as EINVAL from the muxer on a loaded
    machine) is a DatasetWriteError like a full disk: the episode is rolled back, the writer goes on."""
    av = pytest.importorskip("av")
    from simulo_envs.datasets import video

    class BrokenFFmpeg:
        error, VideoFrame = av.error, av.VideoFrame

        @staticmethod
        def open(*args, **kwargs):
            raise av.error.ArgumentError(22, "Invalid argument")

    out = tmp_path / "ds"
    writer = LeRobotWriter(str(out), SCHEMA)
    writer.add(make_episode(0))
    monkeypatch.setattr(video, "_av", lambda: BrokenFFmpeg)
    with pytest.raises(DatasetWriteError, match=r"FFmpeg could not encode .*Invalid argument.*holds the 1 episodes"):
        writer.add(make_episode(1))
    monkeypatch.undo()
    assert load_dataset(str(out)).seeds.tolist() == [0]
    assert not [p for p in out.rglob("*") if atomic.TMP_MARK in p.name]
    writer.add(make_episode(2))
    assert load_dataset(str(out)).seeds.tolist() == [0, 2]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_real_full_file_system(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)]).returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        writer = LeRobotWriter(str(mount / "ds"), SCHEMA)
        written = 0
        with pytest.raises(DatasetWriteError, match="No space left on device"):
            for seed in range(1000):
                writer.add(make_episode(seed, steps=40))
                written += 1
        assert written >= 1
        ds = load_dataset(str(mount / "ds"))
        assert ds.seeds.tolist() == list(range(written)) and ds[written - 1].images["base_camera"].shape[0] == 40
    finally:
        subprocess.run(["umount", str(mount)])


# ---------------------------------------------------------------------- interrupted and killed runs
def start_collection(out, *extra):
    script = os.path.join(ROOT, "scripts", "collect_demos.py")
    return subprocess.Popen([sys.executable, script, "--env-id", "FrankaLift-v1", "--num-episodes", "500",
                             "--num-envs", "2", "--out", str(out), "--no-progress", "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=default_sigint)


def _committed(out) -> int:
    """Episodes committed so far to the dataset at ``out`` (either format)."""
    info, sidecar = out / "meta" / "info.json", out / "trajectory.json"
    if info.exists():
        return json.loads(info.read_text())["total_episodes"]
    return len(json.loads(sidecar.read_text())["episodes"]) if sidecar.exists() else 0


def wait_for_episodes(out, count: int, process, timeout: float = 400.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if _committed(out) >= count:
            return
        time.sleep(0.2)
    process.kill()
    raise AssertionError(f"no {count} episodes after {timeout} s")


def _check_interrupted(out, stdout: str, fmt: str) -> None:
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["interrupted"] and summary["error"] is None and summary["episodes"] >= 2
    ds = load_dataset(str(out))
    assert len(ds) == summary["episodes"] and ds.successes.all()
    assert [ds[i].length for i in range(len(ds))] == ds.lengths.tolist()
    if fmt == "hdf5":   # closed on the way out: one self-contained file beside its sidecar
        assert sorted(os.listdir(out)) == ["trajectory.h5", "trajectory.json"]


@pytest.mark.e2e
def test_ctrl_c_leaves_the_finished_episodes(tmp_path):
    """Ctrl-C to the script's process (HDF5: the file is closed on the way out)."""
    out = tmp_path / "ds"
    process = start_collection(out, "--format", "hdf5")
    wait_for_episodes(out, 2, process)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    _check_interrupted(out, stdout, "hdf5")


def test_ctrl_c_in_process_leaves_the_finished_lerobot_episodes(tmp_path, capsys, monkeypatch):
    """The same Ctrl-C (SIGINT to this process once two episodes are committed) to the script's
    ``main`` run in this process, into a LeRobot dataset (no Python process of its own: seconds of CPU)."""
    out = tmp_path / "ds"
    add_many = LeRobotWriter.add_many

    def commit_then_ctrl_c(self, episodes):
        indices = add_many(self, episodes)
        if self.num_episodes == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return indices

    monkeypatch.setattr(LeRobotWriter, "add_many", commit_then_ctrl_c)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)   # as in a terminal's process
    try:
        status = load_script("collect_demos").main(["--env-id", "FrankaLift-v1", "--num-episodes", "500", "--num-envs",
                                                    "2", "--out", str(out), "--no-progress", "--json", "--format",
                                                    "lerobot"])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert status == 130
    _check_interrupted(out, capsys.readouterr().out, "lerobot")


@pytest.mark.e2e
def test_a_killed_collection_leaves_a_valid_dataset(tmp_path):
    out = tmp_path / "ds"
    process = start_collection(out, "--format", "lerobot")
    wait_for_episodes(out, 2, process)
    process.kill()
    process.communicate(timeout=60)
    ds = load_dataset(str(out))
    assert len(ds) >= 2 and ds.successes.all()
    last = ds[len(ds) - 1]
    assert last.length == ds.lengths[-1] and last.done[-1]
    writer = LeRobotWriter(str(out), ds.schema, append=True)  # and it takes more episodes
    assert writer.num_episodes == len(ds)
