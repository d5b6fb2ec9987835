"""Fixtures of the plugin's tests, run in the LeRobot venv (``make test-lerobot``): LeRobot's real
classes and commands drive our envs. Scripted-expert demonstrations of SO101Lift-v1 are collected
once per run with our ``scripts/collect_demos.py`` (LeRobot v3.0 format, the SO-101 follower's
schema), into a temporary folder, by the script's ``main`` in this process. LeRobot's commands run
in this process too (``integrations/tests/lerobot_commands.py``)."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("SIMULO_ENVS_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"simulo_envs_test_cache_{os.getuid()}"))
sys.path.insert(0, os.path.join(REPO, "integrations", "tests"))  # lerobot_commands.py: LeRobot's commands in-process
# Nothing is downloaded: LeRobot's hub client works from local files only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# torch with one thread here and in the processes the tests start, unless the environment says
# otherwise: these tests run beside the main suite's workers, so a second thread finds no free core
# and its OpenMP threads spin while they wait (CPU time, no speed).
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def so101_demos(tmp_path_factory) -> str:
    """Two scripted-expert episodes of SO101Lift-v1 (seeds 0 and 1, both successes), with the
    128x128 ``base_camera`` and ``wrist_camera`` images: a LeRobot v3.0 dataset folder."""
    import torch

    out = str(tmp_path_factory.mktemp("so101_demos") / "dataset")
    spec = importlib.util.spec_from_file_location("collect_demos_script", os.path.join(REPO, "scripts", "collect_demos.py"))
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    threads = torch.get_num_threads()  # the script sets it; given back
    try:
        assert script.main(["--env-id", "SO101Lift-v1", "--num-episodes", "2", "--num-envs", "2", "--obs-mode", "rgb",
                            "--format", "lerobot", "--out", out, "--no-progress"]) == 0
    finally:
        torch.set_num_threads(threads)
    return out


@pytest.fixture
def one_torch_thread():
    """torch with one thread for the test: small networks on 2 shared cores run faster so."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread_per_run():
    """torch on one thread from the first test on (it may have been imported before
    ``OMP_NUM_THREADS`` was set)."""
    import torch

    torch.set_num_threads(1)
