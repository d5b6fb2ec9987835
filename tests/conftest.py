"""Test-suite settings: property tests have no per-example deadline (this machine is shared and
noisy) and, under CI (``CI`` set), draw the same examples every run so a red CI means a bug."""

import gc
import os

import pytest
from hypothesis import settings

settings.register_profile("simulo", deadline=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("simulo")

BACKENDS_UNDER_TEST = ("physx_cpu", "physx_cuda_emulated")
"""Contract tests parametrized with these run on the CPU backend and on the GPU backend's code
path (on the emulator of SAPIEN's GPU system: ``simulo_envs/sim/gpu_emulator.py``)."""

# Simplified visual meshes (visual_detail="fast") are built once and shared by every test and
# worker of a run, in a temporary folder rather than the user's cache.
import tempfile  # noqa: E402

os.environ.setdefault("SIMULO_ENVS_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"simulo_envs_test_cache_{os.getuid()}"))

# torch with one intra-op thread in the test processes and the processes they start (scripts, torchrun
# ranks, worker processes), unless the user's environment says otherwise. The suite runs on as many
# workers as cores, so a second torch thread finds no free core: its OpenMP threads spin while they
# wait for each other, which costs CPU time and no speed (measured: 2 PPO iterations of
# FrankaReach-v1 took 15.2 s of CPU with 2 threads, 3.0 s with 1, load 6 on 2 cores).
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_configure(config):
    """The time budget's report at the end of every run (``tests/timing_report.py``)."""
    import timing_report

    timing_report.register(config)


def pytest_collection_modifyitems(session, config, items):
    """Test files holding the long end-to-end runs (``@pytest.mark.e2e``) go first, the most such
    runs first, each file's tests kept together and in order. ``make test`` hands whole files to
    its parallel workers in this order (``--dist loadfile --no-loadscope-reorder``), so the long
    runs start at once instead of finishing last on one worker while the other waits."""
    e2e_per_file: dict = {}
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            e2e_per_file[item.path] = e2e_per_file.get(item.path, 0) + 1
    items.sort(key=lambda item: -e2e_per_file.get(item.path, 0))  # stable: the rest keep their order


# ``BaseEnv.close`` runs a full cyclic collection (its scenes' reference cycles are freed at close).
# Its cost grows with every object the process holds: about 0.33 s of CPU per close in a worker
# that has collected the suite (~540,000 objects: libraries, test modules, items), paid by each
# of the suite's many env closes. Objects alive when the tests are collected, and again when each
# test file starts (after a collection), move to the collector's permanent generation
# (``gc.freeze``): a collection then scans only what the tests made since. Garbage is never frozen
# (a collection runs first), and every object a test creates is collected as before.
_frozen_at = [None]


def _freeze_what_is_alive() -> None:
    gc.collect()
    gc.freeze()


def pytest_collection_finish(session):
    _freeze_what_is_alive()


def pytest_runtest_setup(item):
    if item.path != _frozen_at[0]:
        _frozen_at[0] = item.path
        _freeze_what_is_alive()


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread_per_worker():
    """Every test process starts its tests with torch on one thread (see ``OMP_NUM_THREADS``
    above; torch was imported when the tests were collected, possibly before it was set)."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture
def one_torch_thread():
    """torch with one intra-op thread for the test, restored after (a test that set another count
    gives it back). Test files that train or evaluate policies use it
    (``pytestmark = pytest.mark.usefixtures("one_torch_thread")``): on 2 shared cores a second
    thread slows their small networks' steps about 20x."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
