"""Datasets into imitation training: either format read alike, and every dataset that does not fit
the env refused by ``scripts/train_il.py`` before training starts, with the problem named."""

import dataclasses
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from imitation_demos import expert_dataset
from simulo_envs.datasets import Episode, HDF5Writer, LeRobotWriter, load_dataset
from simulo_envs.imitation import read_checkpoint
from simulo_envs.imitation.datasets_io import load_demonstrations

WRITERS = {"lerobot": LeRobotWriter, "hdf5": HDF5Writer}


@pytest.fixture(scope="module")
def push_dataset(tmp_path_factory):
    return expert_dataset(str(tmp_path_factory.mktemp("push") / "lerobot"), "FrankaPush-v1", 3)


def _rewrite(source: str, out: str, fmt: str = "lerobot", count: int = 3, schema_changes=None, edit=None) -> str:
    """Episodes ``0 .. count-1`` of ``source`` written again to ``out`` (``schema_changes`` applied to the
    schema; ``edit(index, state, action)`` may change the arrays, in place)."""
    dataset = load_dataset(source)
    writer = WRITERS[fmt](out, dataclasses.replace(dataset.schema, **(schema_changes or {})))
    for index in range(count):
        data = dataset[index]
        state, action = data.observation_state.numpy().copy(), data.action.numpy().copy()
        if edit is not None:
            state, action = edit(index, state, action)
        steps = len(action)
        success = np.eye(1, steps, steps - 1, dtype=bool)[0]
        writer.add(Episode(seed=data.seed, obs=np.concatenate([state, state[-1:]]), actions=action,
                           rewards=np.zeros(steps, np.float32), terminated=success.copy(),
                           truncated=np.zeros(steps, bool), success=success))
    if hasattr(writer, "close"):
        writer.close()
    return out


def _train_il(*args):
    """``scripts/train_il.py`` with ``args``; returns the error message it exits with."""
    import train_il

    with pytest.raises(SystemExit) as exit_info:
        train_il.main(list(args))
    assert exit_info.value.code == 2
    return exit_info


def test_both_formats_give_the_same_demonstrations(push_dataset, tmp_path):
    lerobot = load_demonstrations(push_dataset, "state")
    hdf5 = load_demonstrations(_rewrite(push_dataset, str(tmp_path / "h5"), "hdf5"), "state")
    assert lerobot.spec == hdf5.spec and lerobot.seeds == hdf5.seeds
    for a, b in zip(lerobot.episodes, hdf5.episodes):
        assert torch.equal(a.state, b.state) and torch.equal(a.actions, b.actions)


@pytest.fixture
def scripts_on_path(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(__file__), "..", "scripts"))


@pytest.mark.usefixtures("scripts_on_path")
def test_datasets_that_do_not_fit_are_refused_before_training(push_dataset, tmp_path, capsys):
    out = str(tmp_path / "run")
    cases = [
        # another env than the one the policy is for
        (("--dataset", push_dataset, "--env-id", "FrankaLift-v1"),
         "holds demonstrations of FrankaPush-v1, the policy is for FrankaLift-v1"),
        # an rgb policy from a dataset without images
        (("--dataset", push_dataset, "--obs", "rgb"), "has no images (recorded in obs mode 'state')"),
        # actions of another width than the env's in that control mode
        (("--dataset", _rewrite(push_dataset, str(tmp_path / "a3"), schema_changes={
            "action_names": ("dx", "dy", "dz")}, edit=lambda i, s, a: (s, a[:, :3].copy()))),
         "has 3-wide actions, FrankaPush-v1 in pd_ee_delta_pos takes 4"),
        # a state of another layout (the dataset claims the task but its columns are not the task's)
        (("--dataset", _rewrite(push_dataset, str(tmp_path / "s40"), schema_changes={
            "state_names": tuple(f"s{i}" for i in range(40))}, edit=lambda i, s, a: (s[:, :40].copy(), a))),
         "state (40 columns) is not FrankaPush-v1's (41): column 0 is 's0' in the dataset"),
        # one episode, zero episodes
        (("--dataset", _rewrite(push_dataset, str(tmp_path / "one"), count=1)), "holds 1 episode(s)"),
        (("--dataset", _rewrite(push_dataset, str(tmp_path / "zero"), count=0)), "holds 0 episode(s)"),
        # a NaN, named by episode, step and column
        (("--dataset", _rewrite(push_dataset, str(tmp_path / "nan"), edit=_nan_at(2, 4, 27))),
         "episode 2: state holds nan at step 4, column cube_pose.z"),
    ]
    for args, message in cases:
        _train_il(*args, "--out", out, "--iterations", "2", "--no-progress")
        assert message in capsys.readouterr().err, args
        assert not os.path.exists(out)   # nothing written


def _nan_at(episode: int, step: int, column: int):
    def edit(index, state, action):
        if index == episode:
            state[step, column] = np.nan
        return state, action
    return edit


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_stopped_training_saves_its_checkpoint(push_dataset, tmp_path, stop):
    """SIGTERM (``kill``, a job scheduler) stops ``scripts/train_il.py`` as a Ctrl-C does: the
    iteration it reached is saved, resumable, and the folder's lock is released. So does SIGINT
    sent to a process started with SIGINT ignored (a background job of a shell script)."""
    out = tmp_path / "run"
    root = os.path.join(os.path.dirname(__file__), "..")
    ignore_sigint = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if stop == "SIGINT" else None
    process = subprocess.Popen([sys.executable, "scripts/train_il.py", "--dataset", push_dataset, "--out", str(out),
                                "--iterations", "1000000", "--checkpoint-every", "1000000", "--set", "hidden=32",
                                "--set", "batch_size=16", "--no-progress"],
                               cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=ignore_sigint)
    try:
        deadline = time.monotonic() + 600
        while not (out / "progress.csv").exists() or len((out / "progress.csv").read_text().splitlines()) < 2:
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.5)
        process.send_signal(getattr(signal, stop))
        stdout, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    saved = [name for name in os.listdir(out) if name.startswith("model_")]
    assert len(saved) == 1 and f"saved {out / saved[0]}" in stdout
    assert f"resume with: python scripts/train_il.py --dataset {push_dataset} --resume {out / saved[0]}" in stdout
    iteration = int(saved[0][len("model_"):-len(".pt")])
    assert iteration >= 100 and read_checkpoint(str(out / saved[0]))["iteration"] == iteration
    assert not (out / ".train_il.lock").exists()


@pytest.mark.usefixtures("scripts_on_path")
def test_a_run_stopped_early_then_resumed_says_its_loss_and_keeps_one_training_state(push_dataset, tmp_path,
                                                                                    capsys, monkeypatch):
    """Stopped before its first logged loss (iteration 100), a run says the loss of the iterations
    it did, not nan, and how to resume it, dataset included; resumed to its end, only
    model_final.pt keeps a training state (the stopped checkpoint keeps its acting weights)."""
    import re

    import train_il
    from simulo_envs.imitation import rollout

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    out = str(tmp_path / "run")
    stopped = os.path.join(out, "model_3.pt")
    with monkeypatch.context() as patch:
        patch.setattr(rollout, "evaluate", ctrl_c)   # Ctrl-C in the evaluation of checkpoint 3
        assert train_il.main(["--dataset", push_dataset, "--policy", "bc", "--out", out, "--iterations", "6",
                              "--checkpoint-every", "3", "--eval-episodes", "1", "--no-progress", "--set", "hidden=16",
                              "--set", "batch_size=8"]) == 130
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2] == (f"interrupted at iteration 3: saved {stopped}; resume with: python scripts/train_il.py "
                         f"--dataset {push_dataset} --resume {stopped}")
    assert re.fullmatch(rf"3 iterations in [0-9.]+ min, final loss [0-9]+\.[0-9]{{4}}: {re.escape(stopped)}", lines[-1])
    # refused before any work: a value of the wrong kind; a lower budget (the run keeps its learning-rate schedule)
    for args, message in ((["--set", "lr=abc"], "--set: lr must be a number, got 'abc'"),
                          (["--iterations", "4"], f"--iterations 4: {stopped!r} was planned for 6 iterations")):
        _train_il("--dataset", push_dataset, "--resume", stopped, *args)
        captured = capsys.readouterr()
        assert captured.out == "" and message in captured.err, captured.err
    assert train_il.main(["--dataset", push_dataset, "--resume", stopped, "--no-progress"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()   # both lines say the run was resumed
    assert lines[0].endswith(f"-> {out} (resumed at iteration 3 of 6)")
    assert re.fullmatch(r"6 iterations in [0-9.]+ min in all \(3 in this session\), final loss [0-9.]+: .*", lines[-1])
    assert "train_state" in read_checkpoint(os.path.join(out, "model_final.pt"))
    assert read_checkpoint(stopped)["iteration"] == 3 and "train_state" not in read_checkpoint(stopped)


@pytest.mark.usefixtures("scripts_on_path")
def test_a_folder_with_a_run_and_a_smaller_dataset_are_refused_before_the_plan(push_dataset, tmp_path, capsys,
                                                                              monkeypatch):
    """The plan line comes after the checks: a folder holding a run is refused first, and resuming
    on a dataset with fewer episodes than the run trained on says so (the user asked for none)."""
    import train_il
    from simulo_envs.imitation import checkpoint

    out = tmp_path / "run"
    out.mkdir()
    (out / "model_5.pt").write_bytes(b"")
    _train_il("--dataset", push_dataset, "--policy", "bc", "--out", str(out))
    captured = capsys.readouterr()
    assert captured.out == "" and f"{str(out)!r} already holds a training (1 checkpoint)" in captured.err
    committed = os.path.join(os.path.dirname(__file__), "..", "tasks", "franka_push_diffusion_state.pt")
    _train_il("--dataset", push_dataset, "--resume", committed, "--policy", "bc")   # unresumable: said first
    assert "holds acting weights only" in capsys.readouterr().err
    _train_il("--dataset", push_dataset, "--policy", "bc", "--out", push_dataset)   # a dataset's folder
    captured = capsys.readouterr()
    assert captured.out == "" and f"output folder {push_dataset!r} holds something else than a training (" in captured.err
    run = read_checkpoint(os.path.join(os.path.dirname(__file__), "..", "tasks", "franka_push_diffusion_state.pt"))
    monkeypatch.setattr(checkpoint, "read_checkpoint", lambda path: {**run, "iteration": 1, "train_state": {},
                                                                     "demos": {**run["demos"], "episodes": 3}})
    smaller = _rewrite(push_dataset, str(tmp_path / "two"), count=2)
    _train_il("--dataset", smaller, "--resume", str(out / "model_5.pt"))
    captured = capsys.readouterr()
    assert captured.out == "" and (f"{str(out / 'model_5.pt')!r} trained on 3 episodes and {smaller} has 2: resume "
                                   f"on the run's dataset") in captured.err, captured.err


@pytest.mark.usefixtures("scripts_on_path")
def test_ctrl_c_while_the_imitation_training_starts_is_one_line(push_dataset, tmp_path, capsys, monkeypatch):
    import train_il
    from simulo_envs.imitation import trainer

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer, "build_policy", ctrl_c)   # after the plan line, before the loop
    out = tmp_path / "run"
    assert _exit_code(train_il.main, ["--dataset", push_dataset, "--policy", "bc", "--out", str(out)]) == 130
    captured = capsys.readouterr()
    assert captured.out.startswith("training bc on 3 episodes") and "Traceback" not in captured.err
    assert captured.err == ("interrupted by SIGINT while the training was starting: nothing new saved; "
                            "the same command starts it again\n")
    assert os.listdir(out) == []   # no checkpoint, no lock: the same command starts it again


def _exit_code(main, argv) -> int:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    return stopped.value.code


@pytest.mark.usefixtures("scripts_on_path")
def test_set_iterations_counts_like_the_iterations_option(push_dataset, tmp_path, capsys):
    import json

    import train_il

    for extra, expected in ((("--set", "iterations=3"), 3), (("--set", "iterations=2", "--iterations", "2"), 2)):
        out = str(tmp_path / f"run{expected}")
        assert train_il.main(["--dataset", push_dataset, "--policy", "bc", "--out", out, "--no-progress", "--json",
                              "--set", "hidden=16", "--checkpoint-every", "2", *extra]) == 0
        assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["iterations"] == expected
    _train_il("--dataset", push_dataset, "--out", str(tmp_path / "both"), "--set", "iterations=3", "--iterations", "2")
    assert "--iterations 2 and --set iterations=3 disagree" in capsys.readouterr().err
    # a --set a new run refuses reads as a resumed run's refusal of it (below)
    for pair, message in (("lr=abc", "--set: lr must be a number, got 'abc'"),
                          ("widht=3", "--set widht: no such hyperparameter; the hyperparameters: action_horizon, ")):
        _train_il("--dataset", push_dataset, "--out", str(tmp_path / "bad"), "--set", pair)
        assert message in capsys.readouterr().err
    # a resumed run keeps its policy and observation kind and writes beside its checkpoint
    checkpoint = os.path.join(tmp_path, "run3", "model_final.pt")
    _train_il("--dataset", push_dataset, "--resume", checkpoint, "--policy", "diffusion", "--iterations", "5")
    assert "trained with --policy bc, not diffusion" in capsys.readouterr().err
    # its budget too: a spent one is refused before any work, and so is another hyperparameter
    before = sorted(os.listdir(os.path.dirname(checkpoint)))
    for extra, message in (((), "already trained 3 iterations (its budget of 3): give --iterations above 3"),
                           (("--iterations", "2"), "--iterations 2 leaves nothing to train"),
                           (("--set", "hidden=32", "--iterations", "5"), "--set hidden=32: the run in "),
                           (("--set", "widht=3"), "--set widht: no such hyperparameter; the hyperparameters: "),
                           (("--num-demos", "2", "--iterations", "5"), "trained on 3 episodes, not --num-demos 2")):
        _train_il("--dataset", push_dataset, "--resume", checkpoint, *extra)
        assert message in capsys.readouterr().err
    assert sorted(os.listdir(os.path.dirname(checkpoint))) == before
    assert train_il.main(["--dataset", push_dataset, "--resume", checkpoint, "--iterations", "5", "--no-progress",
                          "--set", "hidden=16", "--json"]) == 0   # the run's own value agrees
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["iterations"] == 5 and summary["checkpoint"] == checkpoint
    assert read_checkpoint(checkpoint)["config"]["policy"] == "bc"
    assert os.path.isfile(os.path.join(tmp_path, "run3", "model_4.pt"))   # --checkpoint-every 2 kept
