"""Ctrl-C (SIGINT) or SIGTERM during a training stops it at a safe point: the last whole PPO
iteration is saved as a checkpoint that evaluation and a resumed run accept, one line says so,
and the exit status is 128 + the signal's number. The same with worker processes (a Ctrl-C to
the process group: train.py; train_sb3.py stopped by a signal with worker processes:
test_sb3_script.py) and under torchrun (every rank stops, rank 0 saves)."""

from __future__ import annotations

import csv
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch

pytest.importorskip("rsl_rl")

from simulo_envs.training.evaluation import evaluate  # noqa: E402
from simulo_envs.training.rsl_rl_runner import ProgressLogger  # noqa: E402
from terminal_signals import default_sigint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
ARGS = ["--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "300", "--seed", "3"]


def signal_at_step(monkeypatch, number: int, step: int) -> None:
    """Send this process ``number`` when the training reaches env step ``step`` (of this session)."""
    original = ProgressLogger.process_env_step
    count = [0]

    def spy(self, *args, **kwargs):
        count[0] += 1
        if count[0] == step:
            os.kill(os.getpid(), number)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ProgressLogger, "process_env_step", spy)


def rows(log_dir) -> list[dict]:
    with open(os.path.join(log_dir, "progress.csv"), newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_saves_the_last_iteration_evaluates_and_resumes(tmp_path, capsys, monkeypatch, number):
    log_dir = str(tmp_path / "run")
    main = load_script("train").main
    handlers = [signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)]
    signal_at_step(monkeypatch, number, 25 * 2 + 7)     # mid-rollout of the third iteration (25 steps each)
    with pytest.raises(SystemExit) as stopped:
        main([*ARGS, "--log-dir", log_dir, "--no-progress"])
    name = signal.Signals(number).name
    assert stopped.value.code == 128 + number
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == (f"interrupted by {name} after 2 PPO iterations (200 env steps): saved "
                       f"{log_dir}/model_1.pt; continue with --resume")
    assert [r["env_steps"] for r in rows(log_dir)] == ["100", "200"]   # the cut rollout left no row
    infos = torch.load(os.path.join(log_dir, "model_1.pt"), weights_only=False)["infos"]
    assert (infos["env_steps"], infos["iterations"]) == (200, 2)
    assert [signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)] == handlers   # handlers given back

    summary = evaluate(os.path.join(log_dir, "model_1.pt"), episodes=2)
    assert summary["episodes"] == 2 and summary["env_steps"] == 200

    monkeypatch.undo()
    for option, value in (("--env-id", "FrankaLift-v1"), ("--num-envs", "8"), ("--seed", "4")):   # kept
        with pytest.raises(SystemExit) as refused:
            main(["--log-dir", log_dir, "--resume", option, value])
        assert refused.value.code == 2 and value in capsys.readouterr().err
    iterations = 3
    if number == signal.SIGTERM:   # a raised budget survives a session stopped before its first new iteration
        iterations = 4
        signal_at_step(monkeypatch, number, 3)
        with pytest.raises(SystemExit):
            main(["--log-dir", log_dir, "--no-progress", "--resume", "--total-timesteps", "400"])
        monkeypatch.undo()
        capsys.readouterr()
    main(["--log-dir", log_dir, "--no-progress", "--resume",   # task, envs and budget from the run; the
          "--sim-backend", "physx_cpu", "--randomization", "default"])   # env's defaults given again agree
    out = capsys.readouterr().out
    steps = iterations * 100
    assert out.startswith(f"training FrankaReach-v1: {steps} env steps = {iterations} PPO iterations x 4 envs x 25 steps")
    assert "(resumed)" in out and f"trained {steps - 200} env steps, {steps} in all in " in out
    assert f"checkpoint {log_dir}/model_final.pt" in out
    table = rows(log_dir)
    assert [int(r["iteration"]) for r in table] == list(range(iterations))
    sessions = 3 if number == signal.SIGTERM else 2   # one TensorBoard event file per session, resumed ones too
    assert len([n for n in os.listdir(log_dir) if n.startswith("events.out.tfevents.")]) == sessions
    assert [int(r["env_steps"]) for r in table] == [100 * (i + 1) for i in range(iterations)]
    assert float(table[2]["wall_s"]) >= float(table[1]["wall_s"])   # the clock continues
    infos = torch.load(os.path.join(log_dir, "model_final.pt"), weights_only=False)["infos"]
    assert infos["iterations"] == iterations


def test_a_signal_before_the_first_iteration_saves_nothing_and_the_same_command_starts_again(tmp_path, capsys,
                                                                                             monkeypatch):
    log_dir = str(tmp_path / "run")
    main = load_script("train").main
    signal_at_step(monkeypatch, signal.SIGINT, 3)
    with pytest.raises(SystemExit) as stopped:
        main([*ARGS, "--log-dir", log_dir, "--no-progress"])
    assert stopped.value.code == 130
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "interrupted by SIGINT before the first PPO iteration ended: nothing new saved; "
        "the same command starts it again")
    assert not [n for n in os.listdir(log_dir) if n.endswith(".pt")] and "run.json" in os.listdir(log_dir)
    with pytest.raises(SystemExit) as refused:   # nothing to continue: --resume says what to do instead
        main(["--log-dir", log_dir, "--resume"])
    assert refused.value.code == 2 and "saved no checkpoint: leave out --resume to start it again there" in capsys.readouterr().err
    monkeypatch.undo()
    signal_at_step(monkeypatch, signal.SIGINT, 1)
    with pytest.raises(SystemExit) as stopped:   # the same command is not refused: it starts again there
        main([*ARGS, "--log-dir", log_dir, "--no-progress"])
    out = capsys.readouterr().out.strip().splitlines()
    assert stopped.value.code == 130 and out[0].startswith(
        f"note: the earlier run in {log_dir} saved no checkpoint (it stopped before its first iteration ended); "
        f"this run starts there again and replaces its run.json, progress.csv, events.out.tfevents.")
    assert len([n for n in os.listdir(log_dir) if n.startswith("events.out")]) == 1


def _launch(command, log_dir) -> subprocess.Popen:
    """Start ``command`` in a session of its own (a terminal's process group: Ctrl-C reaches every
    process of it) and wait until its training runs (``progress.csv`` has a row)."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=default_sigint)
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline and process.poll() is None:
        path = os.path.join(log_dir, "progress.csv")
        if os.path.isfile(path) and len(open(path).read().splitlines()) >= 2:
            return process
        time.sleep(0.5)
    out, err = process.communicate(timeout=60) if process.poll() is not None else ("", "")
    pytest.fail(f"training did not start: {out[-2000:]} {err[-3000:]}")


@pytest.mark.e2e
def test_ctrl_c_to_the_process_group_with_worker_processes(tmp_path):
    """The worker processes get the terminal's Ctrl-C too; the training stops at its safe point.
    train_sb3.py shares the worker processes and their signal handling: its stop by a signal with
    worker processes runs in process (test_sb3_script.py), a new Python process costing seconds of CPU."""
    log_dir = str(tmp_path / "run")
    process = _launch([sys.executable, "scripts/train.py", *ARGS, "--total-timesteps", "20000", "--num-workers",
                       "2", "--log-dir", log_dir, "--no-progress"], log_dir)
    os.killpg(process.pid, signal.SIGINT)   # what a terminal does: the workers get it too
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, out[-2000:] + err[-3000:]
    line = out.strip().splitlines()[-1]
    assert line.startswith("interrupted by SIGINT after ") and "Traceback" not in err, out + err[-3000:]
    saved = line.split("saved ")[1].split(";")[0]
    assert os.path.isfile(saved) and saved == os.path.join(log_dir, f"model_{len(rows(log_dir)) - 1}.pt")


@pytest.mark.e2e
def test_ctrl_c_under_torchrun_stops_every_rank_and_rank_0_saves(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_dir = str(tmp_path / "run")
    process = _launch([sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
                       "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "scripts/train.py", *ARGS,
                       "--total-timesteps", "20000", "--log-dir", log_dir, "--no-progress"], log_dir)
    os.killpg(process.pid, signal.SIGINT)   # torchrun and both ranks get it; torchrun forwards it again
    out, err = process.communicate(timeout=300)
    assert process.returncode != 0
    lines = [line for line in out.splitlines() if line.startswith("interrupted by SIGINT")]
    assert len(lines) == 1, out[-2000:] + err[-3000:]   # rank 0 alone says it
    saved = lines[0].split("saved ")[1].split(";")[0]
    done = len(rows(log_dir))
    assert saved.endswith(f"model_{done - 1}.pt")
    infos = torch.load(saved, weights_only=False)["infos"]
    assert infos["world_size"] == 2 and infos["iterations"] == done
    # every rank stopped: no training process of the launch is left
    assert subprocess.run(["pgrep", "-s", str(process.pid)], capture_output=True).stdout.strip() == b""


def test_ctrl_c_in_the_evaluation_after_training_is_one_line_and_status_130(capsys):
    """train.py's and train_sb3.py's evaluation after training (--eval-episodes) share one helper."""
    from simulo_envs.training.interrupt import evaluation_stopped_by_ctrl_c

    with pytest.raises(SystemExit) as stopped, evaluation_stopped_by_ctrl_c("runs/sb3/X/seed0/model.zip"):
        raise KeyboardInterrupt
    assert stopped.value.code == 130
    assert capsys.readouterr().err == ("\nevaluation stopped by Ctrl-C; the model is saved: python scripts/evaluate.py "
                                       "--checkpoint runs/sb3/X/seed0/model.zip evaluates it\n")
