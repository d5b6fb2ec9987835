"""Fixtures of the plugin's tests, run in the LeRobot venv (``make test-lerobot``): LeRobot's real
classes and commands drive our envs. Scripted-expert demonstrations of SO101Lift-v1 are collected
once per run with our ``scripts/collect_demos.py`` (LeRobot v3.0 format, the SO-101 follower's
schema), into a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("SIMULO_ENVS_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"simulo_envs_test_cache_{os.getuid()}"))
# Nothing is downloaded: LeRobot's hub client works from local files only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def run(args: list[str], cwd: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    """Run a command of this venv (``sys.executable``'s), failing the test with its output."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
                    f"--- stderr\n{proc.stderr[-6000:]}")
    return proc


def venv_command(name: str) -> str:
    """The console script ``name`` of this venv (``lerobot-train``, ``lerobot-eval``)."""
    return os.path.join(os.path.dirname(sys.executable), name)


@pytest.fixture(scope="session")
def so101_demos(tmp_path_factory) -> str:
    """Two scripted-expert episodes of SO101Lift-v1 (seeds 0 and 1, both successes), with the
    128x128 ``base_camera`` and ``wrist_camera`` images: a LeRobot v3.0 dataset folder."""
    out = str(tmp_path_factory.mktemp("so101_demos") / "dataset")
    run([sys.executable, os.path.join(REPO, "scripts", "collect_demos.py"), "--env-id", "SO101Lift-v1",
         "--num-episodes", "2", "--num-envs", "2", "--obs-mode", "rgb", "--format", "lerobot", "--out", out,
         "--no-progress"], cwd=REPO)
    return out


@pytest.fixture
def one_torch_thread():
    """torch with one thread for the test: small networks on 2 shared cores run faster so."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
