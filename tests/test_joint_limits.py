"""Every robot keeps its joints within 0.01 rad of their limits under any action: absolute targets
switching between the bounds (``pd_joint_pos``) and full-scale increments that drive joints into
their limits while others stop at theirs (``pd_joint_delta_pos``). The SO arms get there with their
servos' armature (``agents/so100.py``); the cost in env steps/s: ``scripts/benchmark.py --limits``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401

TOLERANCE = 0.01
"""[rad]: how far past a limit a joint may go."""


def worst_excursion(env_id: str, mode: str, steps: int = 40, num_envs: int = 8, seed: int = 0) -> float:
    """The largest ``qpos`` excursion past a joint limit [rad] under bang-bang actions: each env
    picks the low or high bound of every action dimension, anew every 5 steps."""
    env = gym.make(env_id, num_envs=num_envs, control_mode=mode)
    try:
        env.reset(seed=seed)
        robot = env.unwrapped.agent.robot
        low, high = robot.qlimits[:, 0].numpy(), robot.qlimits[:, 1].numpy()
        space = env.unwrapped.single_action_space
        rng = np.random.default_rng(seed)
        worst = 0.0
        for k in range(steps):
            if k % 5 == 0:
                action = np.where(rng.integers(0, 2, (num_envs, space.shape[0])) == 1, space.high, space.low)
            env.step(torch.as_tensor(action, dtype=torch.float32))
            qpos = robot.state.qpos.numpy()
            worst = max(worst, float(np.maximum(qpos - high, low - qpos).max()))
        return worst
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["pd_joint_pos", "pd_joint_delta_pos"])
@pytest.mark.parametrize("env_id", ["FrankaLift-v1", "SO100Lift-v1", "SO101Lift-v1"])
def test_joints_stay_within_their_limits_under_hard_drives(env_id, mode):
    assert worst_excursion(env_id, mode) <= TOLERANCE


def test_a_robot_declares_its_own_solver_iterations():
    from simulo_envs.agents import so101

    saved = so101.SO101.solver_iterations
    so101.SO101.solver_iterations = (40, 3)
    try:
        env = gym.make("SO101Lift-v1", num_envs=2)
    finally:
        so101.SO101.solver_iterations = saved
    try:
        base = env.unwrapped
        arts = base._backend._arts[base.agent.robot._gid].articulations
        assert [(a.solver_position_iterations, a.solver_velocity_iterations) for a in arts] == [(40, 3)] * 2
        assert base.sim_config.solver_position_iterations == 15  # the scene's default is untouched
    finally:
        env.close()
