"""Provenance records (``simulo_envs/envs/provenance.py``) and the isolated mode's threaded
stepping (``simulo_envs/sim/system_stepper.py``)."""

from __future__ import annotations

import json
from importlib import metadata

import gymnasium as gym
import numpy as np
import pytest
import sapien
import torch

import simulo_envs  # noqa: F401
from simulo_envs import SimConfig
from simulo_envs.envs.provenance import json_value, provenance, same_software, software_versions
from simulo_envs.sim import system_stepper


@pytest.fixture(scope="module")
def env():
    e = gym.make("FrankaLiftRandomized-v1", num_envs=2, control_mode="pd_ee_delta_pos",
                 sim_config=dict(isolate_envs=True, sim_freq=120, control_freq=30))
    yield e
    e.close()


def test_the_record_names_the_software_the_env_settings_and_the_seeds(env):
    record = provenance(env, env_kwargs={"sim_config": {"isolate_envs": True}}, seeds=[4, 5], policy="expert")
    json.dumps(record)  # JSON-ready as it is
    software = record["software"]
    assert software["sapien"] == sapien.__version__ == "3.0.3"
    assert software["physx"] == "5.3.1"  # SAPIEN 3.0.3 bundles PhysX 5.3.1 ("105.1-physx-5.3.1.patch0")
    assert software["torch"] == torch.__version__
    assert software["simulo_envs"] == metadata.version("simulo-envs")
    settings = record["env"]
    assert settings["env_id"] == "FrankaLiftRandomized-v1"
    assert (settings["sim_freq"], settings["control_freq"]) == (120, 30)
    assert settings["sim_config"]["isolate_envs"] is True and settings["isolate_envs"] is True
    assert settings["sim_config"]["solver_position_iterations"] == SimConfig().solver_position_iterations
    assert settings["control_mode"] == "pd_ee_delta_pos"
    assert settings["env_kwargs"] == {"sim_config": {"isolate_envs": True}}
    assert settings["randomization"][0] == {"__type__": "Randomize", "param": "block.scale",
                                            "dist": {"__type__": "Uniform", "low": 0.8, "high": 1.2},
                                            "when": "startup", "interval": None, "operation": "set", "joints": None}
    assert record["seeds"] == [4, 5] and record["policy"] == "expert"
    commit = record["repository"]
    assert commit is None or (len(commit["commit"]) == 40 and isinstance(commit["dirty"], bool))


def test_json_value_keeps_numbers_and_names_what_it_cannot_rebuild():
    assert json_value({"a": np.float32(0.5), "b": torch.tensor([1, 2]), "c": (1, "x")}) == {"a": 0.5, "b": [1, 2],
                                                                                          "c": [1, "x"]}
    assert json_value(object)["__repr__"] == repr(object)


def test_same_software_lists_each_difference():
    current = software_versions()
    assert same_software({"software": current}) == []
    assert same_software({"software": {**current, "sapien": "3.0.2"}}) == [f"sapien 3.0.2 -> {current['sapien']}"]


def _rollout(step_threads: int, steps: int = 12) -> torch.Tensor:
    env = gym.make("FrankaLift-v1", num_envs=3, control_mode="pd_ee_delta_pos",
                   sim_config=dict(isolate_envs=True, step_threads=step_threads))
    env.reset(seed=3)
    generator = torch.Generator().manual_seed(1)
    states = []
    for _ in range(steps):
        env.step(torch.rand(3, 4, generator=generator) * 2 - 1)
        states.append(env.unwrapped.get_state())
    env.close()
    return torch.stack(states)


def test_isolated_systems_stepped_on_several_threads_give_the_same_bits_as_on_one(monkeypatch):
    one = _rollout(1)
    assert torch.equal(one, _rollout(2))
    # the automatic count (0) alternates 1 and 3 threads while it times them, then picks one
    monkeypatch.setattr(system_stepper, "usable_cores", lambda: 3)
    assert torch.equal(one, _rollout(0))


@pytest.mark.parametrize("value", [-1, 1.5, True, "2"])
def test_step_threads_must_be_a_whole_number(value):
    with pytest.raises(ValueError, match=r"sim_config.step_threads must be an int >= 0"):
        SimConfig(step_threads=value)
