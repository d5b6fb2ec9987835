"""SO100Lift-v1 and SO100PickPlace-v1: registration, robots, observations, predicates, rewards,
and their scripted experts on both CPU backends."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import EXPERTS

TASKS = {"SO100Lift-v1": 30, "SO100PickPlace-v1": 36}


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_registered_for_the_so100_only(env_id):
    env = gym.make(env_id, num_envs=2)
    try:
        base = env.unwrapped
        assert base.agent.uid == "so100" and base.control_mode == "pd_joint_delta_pos"
        obs, info = env.reset(seed=0)
        assert obs.shape == (2, TASKS[env_id])
        assert info["success"].tolist() == [False, False] and info["fail"].tolist() == [False, False]
        assert env.action_space.shape == (2, 6)
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"supports \['so100'\]"):
        gym.make(env_id, robot_uids="panda")


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_the_cube_spawns_inside_the_workspace(env_id):
    env = gym.make(env_id, num_envs=32)
    try:
        _, info = env.reset(seed=3)
        base = env.unwrapped
        key = "cube_pose"   # one name for the cube in both SO-100 tasks
        xy = info[key][:, :2] - base._env_origins[:, :2]
        assert xy[:, 0].min() >= 0.235 - 1e-4 and xy[:, 0].max() <= 0.295 + 1e-4
        assert xy[:, 1].abs().max() <= 0.08 + 1e-4 and xy[:, 1].abs().max() > 0.04  # the range is used
        assert torch.allclose(info[key][:, 2], torch.full((32,), 0.0125), atol=1e-3)
    finally:
        env.close()


def test_lift_success_fail_and_rewards():
    env = gym.make("SO100Lift-v1", num_envs=3, reward_mode="normalized_dense")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        pose = base.cube.state.pose
        pose[1, 2] += 0.06                                # env 1: lifted 6 cm (needs 5)
        pose[2, :2] = base._env_origins[2, :2] + torch.tensor([0.42, 0.0])  # env 2: out of reach
        base.cube.set_pose(pose)
        info = base.get_info()
        assert info["success"].tolist() == [False, True, False]
        assert info["fail"].tolist() == [False, False, True]
        reward = base.get_reward(None, torch.zeros(3, 6), info)
        assert reward[1].item() == pytest.approx(1.0) and reward[2].item() == 0.0
        terms = info["reward_terms"]
        distance = info["tcp_to_cube"][0].norm()
        assert 0.07 < distance < 0.12  # the TCP at rest, 8 cm above the cube's spawn region
        assert terms["reach"][0].item() == pytest.approx(1 - torch.tanh(10 * distance).item(), abs=1e-5)
        assert reward[0].item() == pytest.approx(terms["reach"][0].item() / 5.0, abs=1e-5)  # reach only
        assert terms["grasp"].tolist() == [0.0, 0.0, 0.0]
    finally:
        env.close()


def test_pick_place_success_fail_and_the_hidden_goal():
    env = gym.make("SO100PickPlace-v1", num_envs=2, reward_mode="normalized_dense")
    try:
        _, info = env.reset(seed=0)
        base = env.unwrapped
        goal = base.goal.state.pose[:, :3] - base._env_origins
        assert (goal[:, 2] >= 0.04).all() and (goal[:, 2] <= 0.10).all()
        pose = base.cube.state.pose
        pose[0, :3] = base.goal.state.pose[0, :3] + torch.tensor([0.0, 0.0, 0.01])  # within 15 mm
        pose[1, :3] = base._env_origins[1] + torch.tensor([0.05, 0.0, 0.0125])       # too near the base
        base.cube.set_pose(pose)
        info = base.get_info()
        assert info["success"].tolist() == [True, False] and info["fail"].tolist() == [False, True]
        assert base.goal in base._hidden_objects
    finally:
        env.close()


@pytest.mark.parametrize("backend", ["physx_cpu", "physx_cuda_emulated"])
@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_the_scripted_expert_succeeds(env_id, backend):
    """One episode in each of 16 envs (seeds 0..15); the full figure (64 seeds) is in docs/so100.md."""
    env = gym.make(env_id, num_envs=16, control_mode="pd_ee_delta_pos", sim_backend=backend)
    try:
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


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_one_name_for_the_cube_as_a_randomization_target(env_id):
    from simulo_envs.envs.randomization import Randomize, Uniform

    env = gym.make(env_id, num_envs=2, randomization=[Randomize("cube.mass", Uniform(0.005, 0.02))])
    try:
        env.reset(seed=1)
        masses = env.unwrapped.randomization.values()["cube.mass"]
        assert masses.shape[0] == 2 and ((masses >= 0.005) & (masses <= 0.02)).all()
        assert "cube_pose" in env.unwrapped.get_info()
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"no 'block'; its randomization targets are \[.*'cube'"):
        gym.make(env_id, num_envs=1, randomization=[Randomize("block.mass", Uniform(0.005, 0.02))])
