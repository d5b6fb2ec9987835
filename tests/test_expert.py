"""The scripted expert lifts the block: the end-to-end proof of physics, gripper, task, resets."""

import gymnasium as gym
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert


def test_expert_succeeds_on_8_seeded_episodes_with_partial_resets():
    env = gym.make("FrankaLift-v1", num_envs=4, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=100)
    results = []
    for _ in range(400):
        _, _, terminated, truncated, info = env.step(expert.act())
        done = terminated | truncated
        for i in done.nonzero().flatten().tolist():
            if len(results) < 8:
                results.append((bool(info["success"][i]), bool(info["is_grasped"][i])))
        if len(results) >= 8:
            break
        if done.any():
            env.reset(options={"env_idx": done})  # mid-rollout partial reset: expert restarts those envs
    env.close()
    assert len(results) == 8
    successes = [r for r in results if r[0]]
    assert len(successes) >= 7, results
    assert all(grasped for _, grasped in successes), results


def test_expert_restarts_phase_after_partial_reset():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=7)
    for _ in range(25):
        env.step(expert.act())
    assert (expert.phase > 0).all()
    env.reset(options={"env_idx": [0]})
    expert.act()
    assert expert.phase[0] == 0 and expert.phase[1] > 0
    env.close()


def test_expert_requires_ee_control():
    env = gym.make("FrankaLift-v1", num_envs=1)
    try:
        LiftExpert(env)
    except ValueError as exc:
        assert "pd_ee_delta_pos" in str(exc)
    else:
        raise AssertionError("LiftExpert accepted a joint-space env")
    finally:
        env.close()
