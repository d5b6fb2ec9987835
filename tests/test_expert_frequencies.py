"""Scripted experts time their phases in seconds: each succeeds at every control frequency its
task is run at (20 Hz, the default; 25 Hz; 30 Hz, LeRobot's recording rate), and the SO-arm tasks
take 30 Hz control with their default physics."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import EXPERTS

CASES = [
    ("SO100Lift-v1", {}), ("SO100Lift-v1", {"control_freq": 30}), ("SO100Lift-v1", {"sim_freq": 100, "control_freq": 25}),
    ("SO101Lift-v1", {}), ("SO101Lift-v1", {"control_freq": 30}), ("SO101Lift-v1", {"sim_freq": 100, "control_freq": 25}),
    ("SO100PickPlace-v1", {"control_freq": 30}), ("SO101PickPlace-v1", {"control_freq": 30}),
    ("FrankaLift-v1", {"control_freq": 25}), ("FrankaStack-v1", {"control_freq": 25}),
]


@pytest.mark.parametrize("env_id,sim", CASES, ids=[f"{e}-{s.get('control_freq', 20)}Hz" for e, s in CASES])
def test_the_expert_succeeds_at_this_control_frequency(env_id, sim):
    env = gym.make(env_id, num_envs=16, control_mode="pd_ee_delta_pos", sim_config=sim)
    try:
        assert env.unwrapped.control_freq == sim.get("control_freq", 20)
        expert = EXPERTS[env_id](env)
        env.reset(seed=0)
        done = torch.zeros(16, dtype=torch.bool)
        success = torch.zeros(16, dtype=torch.bool)
        while not done.all():
            _, _, terminated, truncated, info = env.step(expert.act())
            ended = (terminated | truncated).cpu() & ~done
            success[ended] = info["success"].cpu()[ended]
            done |= ended
        assert int(success.sum()) >= 15, success.tolist()
    finally:
        env.close()


def test_timed_phases_last_the_same_seconds_at_every_frequency():
    env = gym.make("SO101Lift-v1", num_envs=1, control_mode="pd_ee_delta_pos", sim_config={"control_freq": 30})
    try:
        expert = EXPERTS["SO101Lift-v1"](env)
        assert expert.control_freq == 30.0
        assert expert.steps_for(0.4) == 12 and expert.steps_for(0.3) == 9 and expert.steps_for(0.001) == 1
        expert.control_freq = 20.0
        assert expert.steps_for(0.4) == 8 and expert.steps_for(0.3) == 6  # the former step counts at 20 Hz
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["SO100Lift-v1", "SO101PickPlace-v1"])
def test_so_arm_tasks_take_30_hz_with_their_default_physics(env_id):
    env = gym.make(env_id, num_envs=1, sim_config={"control_freq": 30})
    try:
        base = env.unwrapped
        assert (base.sim_freq, base.control_freq, base.sim_config.sim_steps_per_control) == (120, 30, 4)
        assert env.unwrapped.metadata["render_fps"] == 30
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"control_freq \(25 Hz\) must divide sim_freq \(120 Hz\)"):
        gym.make(env_id, num_envs=1, sim_config={"control_freq": 25})
