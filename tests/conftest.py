"""Test-suite settings: property tests have no per-example deadline (this machine is shared and
noisy) and, under CI (``CI`` set), draw the same examples every run so a red CI means a bug."""

import os

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
