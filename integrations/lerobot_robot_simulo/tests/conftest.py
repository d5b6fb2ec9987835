"""Fixtures of the simulated follower's tests, run in the LeRobot venv (``make test-lerobot``):
LeRobot's real classes and commands drive the robot. The episodes they replay are written with
LeRobot's own dataset writer (``episodes.py``) into a temporary folder, once per run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # episodes.py, robot_cli.py
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))  # lerobot_commands.py: LeRobot's commands in-process
os.environ.setdefault("SIMULO_ENVS_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"simulo_envs_test_cache_{os.getuid()}"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded
# torch with one thread here and in the processes the tests start, unless the environment says
# otherwise: these tests run beside the main suite's workers, so a second thread finds no free core
# and its OpenMP threads spin while they wait (CPU time, no speed).
os.environ.setdefault("OMP_NUM_THREADS", "1")

EXPERT_SEED = 0


@pytest.fixture(scope="session")
def expert_episode(tmp_path_factory):
    """(dataset root, seed, step of first success): the expert solving SO101PickPlace-v1 at 30 Hz."""
    from episodes import write_expert_episode

    root = str(tmp_path_factory.mktemp("expert") / "dataset")
    return root, EXPERT_SEED, write_expert_episode(root, EXPERT_SEED)


@pytest.fixture(scope="session")
def synthetic_episode(tmp_path_factory):
    """(dataset root, actions (T, 6)): synthetic values in a real SO-101 follower's schema."""
    from episodes import write_synthetic_real_episode

    root = str(tmp_path_factory.mktemp("synthetic") / "dataset")
    return root, write_synthetic_real_episode(root)


@pytest.fixture
def lerobot_logging():
    """The root logger at INFO, as LeRobot's commands set it (``init_logging``): their
    announcements reach the robot."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)
    yield
    root.setLevel(level)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread_per_run():
    """torch on one thread from the first test on (it may have been imported before
    ``OMP_NUM_THREADS`` was set)."""
    import torch

    torch.set_num_threads(1)
