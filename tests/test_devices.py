"""``--device``: a device this machine lacks is refused before any work, naming the device; a
checkpoint trained on a GPU evaluates and resumes on a CPU."""

from __future__ import annotations

import importlib.util
import os

import pytest
import torch
import torch.serialization

pytest.importorskip("rsl_rl")

from simulo_envs.training.distributed import check_device  # noqa: E402
from simulo_envs.training.evaluation import evaluate  # noqa: E402
from simulo_envs.training.rsl_rl_train import train  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="the machine has CUDA")


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_device_names_what_is_wrong():
    assert check_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="'gpu' is not a device torch knows"):
        check_device("gpu")
    with pytest.raises(ValueError, match="runs on cpu or cuda"):
        check_device("meta")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match=r"device 'cuda:1': .*CUDA.*use --device cpu"):
            check_device("cuda:1")
    else:
        with pytest.raises(ValueError, match="this machine has"):
            check_device(f"cuda:{torch.cuda.device_count()}")


@no_cuda
@pytest.mark.parametrize("script, argv", [
    ("train", ["--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "100"]),
    ("train_sb3", ["--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "100"]),
    ("evaluate", ["--checkpoint", "model_final.pt"]),
])
def test_device_cuda_without_cuda_is_refused_before_any_work(tmp_path, capsys, monkeypatch, script, argv):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        load_script(script).main([*argv, "--device", "cuda", *(["--log-dir", "run"] if script != "evaluate" else [])])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert "device 'cuda'" in last and "use --device cpu" in last and "checkpoint" not in last, last
    assert os.listdir(tmp_path) == []   # nothing written, not even the log folder


def as_gpu_checkpoint(path: str) -> None:
    """Rewrite ``path`` as a GPU training leaves it: every tensor's storage marked ``cuda:0``."""
    state = torch.load(path, weights_only=False)
    original = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save(state, path)
    finally:
        torch.serialization.location_tag = original


@no_cuda
def test_a_checkpoint_trained_on_a_gpu_evaluates_and_resumes_on_the_cpu(tmp_path):
    log_dir = str(tmp_path / "run")
    result = train("FrankaReach-v1", num_envs=4, total_timesteps=100, log_dir=log_dir, progress=False)
    as_gpu_checkpoint(result.checkpoint)
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(result.checkpoint, weights_only=False)   # what a CPU machine sees without map_location
    summary = evaluate(result.checkpoint, episodes=2, device="cpu")
    assert summary["episodes"] == 2 and summary["env_steps"] == 100
    resumed = train("FrankaReach-v1", num_envs=4, total_timesteps=200, log_dir=log_dir, progress=False, resume=True)
    assert (resumed.env_steps, resumed.iterations, resumed.session_steps) == (200, 2, 100)
