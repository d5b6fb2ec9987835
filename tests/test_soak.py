"""The soak script's short version (the full one: ``python scripts/soak.py``, docs/faults.md):
random actions, partial resets and rebuilds with no non-finite value, no fault and no growth of
memory, file descriptors or threads; make/close cycles of state-only and rendering envs that
leave no scene, camera or Vulkan allocation behind."""

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "soak.py"


def _soak_module():
    spec = importlib.util.spec_from_file_location("soak", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nonfinite_values_are_counted_in_nested_outputs():
    count = _soak_module()._nonfinite
    value = {"a": torch.tensor([1.0, math.nan]), "b": [torch.tensor([[math.inf, -math.inf]]), torch.ones(2, dtype=torch.int32)],
             "c": {"d": torch.tensor([0.5])}, "e": "text"}
    assert count(value) == 3
    assert count(torch.zeros(4)) == 0


@pytest.mark.e2e
def test_short_soak_passes_every_check():
    command = [sys.executable, str(SCRIPT), "--num-envs", "4", "--env-steps", "800", "--reset-prob", "0.05",
               "--reconfigure-every", "60", "--cycles", "3", "--seed", "1"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    summary = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    soak = summary["soak"]
    assert (soak["env_steps"], soak["batched_steps"], soak["reconfigures"]) == (800, 200, 3)
    assert soak["partial_resets"] > 0 and soak["reset_envs"] >= soak["partial_resets"]
    assert soak["nonfinite"] == 0 and soak["faults"] == 0 and soak["fault_steps"] == 0
    assert 0 < soak["max_body_speed"] < 20.0 and 0 < soak["max_joint_speed"] < 50.0
    assert all(soak["checks"].values()), soak["checks"]
    state, rendering = summary["cycles"]
    assert (state["kind"], rendering["kind"]) == ("state", "rendering")
    assert all(state["checks"].values()) and all(rendering["checks"].values()), (state, rendering)
    end = rendering["end"]
    assert (end["sapien_scenes"], end["render_systems"], end["cameras"]) == (0, 0, 0)
    assert summary["ok"] is True
