"""``--num-workers`` on scripts/demo.py, train.py and evaluate.py: the envs run in worker processes.

The scripts' ``main`` runs in this process with the command line's arguments (their command lines
as separate processes are tested in test_train.py (evaluate.py), test_task_authoring.py (demo.py),
test_train_interrupt.py and test_distributed.py (train.py)): each Python process that imports torch and SAPIEN costs seconds of
CPU, and the worker processes are what these tests are about."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture
def torch_threads():
    """The scripts set torch's thread count; it is given back afterwards."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _last_json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.e2e
def test_demo_with_workers_runs_the_expert(capsys):
    _script_main("demo")(["--num-envs", "4", "--episodes", "4", "--num-workers", "2", "--json"])
    assert _last_json(capsys)["success_rate"] == 1.0


def _script_main(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _exit_status(capsys, main, *args) -> tuple:
    """(exit status, stderr) of a script's ``main`` run in this process (a refusal needs no
    process of its own)."""
    with pytest.raises(SystemExit) as exit_info:
        main(*args)
    return exit_info.value.code, capsys.readouterr().err


def test_bad_num_workers_is_a_one_line_error(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["scripts/demo.py", "--num-envs", "2", "--num-workers", "3"])
    code, err = _exit_status(capsys, _script_main("demo"))
    assert code == 2 and "cannot exceed num_envs" in err and "Traceback" not in err
    code, err = _exit_status(capsys, _script_main("evaluate"), ["--checkpoint", "x.pt", "--num-workers", "zero"])
    assert code == 2 and "--num-workers: must be an int >= 1 or 'auto'" in err


@pytest.mark.e2e
def test_train_and_evaluate_with_workers(tmp_path, capsys, torch_threads):
    pytest.importorskip("rsl_rl")
    log_dir = tmp_path / "run"
    _script_main("train")(["--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "100",
                           "--num-workers", "2", "--log-dir", str(log_dir), "--no-progress"])
    assert "100 env steps = 1 PPO iteration x 4 envs" in capsys.readouterr().out
    _script_main("evaluate")(["--checkpoint", str(log_dir / "model_final.pt"), "--episodes", "4",
                              "--max-envs", "4", "--num-workers", "2", "--json"])
    assert _last_json(capsys)["episodes"] == 4


@pytest.mark.e2e
def test_shard_equivalence_short_version(capsys, monkeypatch):
    """scripts/shard_equivalence.py at 4 envs (the full run uses 64): whole expert episodes
    succeed in process and in 2 workers, and one PhysX system per env makes them identical."""
    monkeypatch.setattr(sys, "argv", ["scripts/shard_equivalence.py", "--num-envs", "4", "--workers", "2", "--json"])
    _script_main("shard_equivalence")()
    report = _last_json(capsys)
    assert report["shared"]["success_rate"] == [1.0, 1.0] and report["shared"]["same_success"] == 1.0
    assert report["shared"]["return_gap_max"] < 0.5  # float noise grown by contact, not another episode
    assert report["isolated"]["identical"] and report["isolated"]["success_rate"] == [1.0, 1.0]


@pytest.mark.e2e
def test_benchmark_steps_worker_counts_side_by_side(capsys, monkeypatch):
    # One paired measurement of the benchmark's --workers section, tiny: 2 blocks of 10 steps each;
    # the measurement subprocess's command line, run by the script's main in this process.
    monkeypatch.setattr(sys, "argv", ["scripts/benchmark.py", "--worker", "paired", "--num-envs", "4", "--steps", "2",
                                      "--workers", "1", "2"])
    _script_main("benchmark")()
    result = _last_json(capsys)
    assert sorted(result) == ["1", "2"]
    assert all(result[p]["seconds"] > 0 and result[p]["steps_per_second"] == pytest.approx(4 * 20 / result[p]["seconds"])
               for p in result)
    assert "worker_rss_mb" not in result["1"] and len(result["2"]["worker_rss_mb"]) == 2
    assert 0 < result["2"]["exchange_ms_per_step"] < 1e3 * result["2"]["seconds"] / 20


def test_worker_processes_of_the_training_scripts_load_no_rl_library():
    """Each worker re-imports its script as ``__mp_main__`` (multiprocessing does so in every worker
    it starts, forked from the fork server or spawned: ``workers/start_method.py``): the training
    scripts' imports must not load rsl-rl-lib, tensordict or TensorBoard there (seconds of CPU per
    worker for libraries a worker never uses)."""
    probe = ("import runpy, sys\n"
             "for script in ('scripts/train.py', 'scripts/train_sb3.py', 'scripts/evaluate.py'):\n"
             "    runpy.run_path(script, run_name='__mp_main__')\n"
             "print(sorted(m for m in ('rsl_rl', 'tensordict', 'tensorboard', 'stable_baselines3') if m in sys.modules))\n")
    run = _run("-c", probe)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "[]"
