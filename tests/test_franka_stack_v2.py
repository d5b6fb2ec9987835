"""FrankaStack-v2: FrankaStack-v1 plus an ``ungrasp`` term paid while cube A rests on cube B, in
proportion to how far the gripper action opens; the rest of the task is v1's."""

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)


def _a_on_b(env) -> None:
    """Put A at rest on B in every env, the gripper far above (open, at rest)."""
    u = env.unwrapped
    a = u.cube_b.state.pose.clone()
    a[:, 2] += u.cfg.cube_size
    u.cube_a.set_pose(a)
    u.cube_a.set_velocity(torch.zeros(a.shape[0], 6))


@pytest.mark.parametrize("reward_mode", ["dense", "normalized_dense"])
def test_ungrasp_pays_the_gripper_opening_only_while_a_rests_on_b(reward_mode):
    env = gym.make("FrankaStack-v2", num_envs=3, control_mode="pd_ee_delta_pos", reward_mode=reward_mode)
    try:
        env.reset(seed=0)
        actions = torch.zeros(3, 4)
        actions[:, 3] = torch.tensor([-1.0, 0.0, 1.0])   # closed, half, open
        _, reward, _, _, info = env.step(actions)
        assert info["reward_terms"]["ungrasp"].tolist() == [0.0, 0.0, 0.0]   # A still on the floor
        assert (reward < 0.5 * (7.0 if reward_mode == "dense" else 1.0)).all()
        _a_on_b(env)
        _, reward, _, _, info = env.step(actions)
        assert info["a_on_b"].all()
        torch.testing.assert_close(info["reward_terms"]["ungrasp"], torch.tensor([0.0, 0.5, 1.0]))
        success = info["success"]
        scale = 1.0 if reward_mode == "dense" else 1 / 7
        expected = sum(getattr(env.unwrapped.cfg, f"{name}_weight") * term
                       for name, term in info["reward_terms"].items())
        torch.testing.assert_close(reward, torch.where(success, torch.tensor(7.0), expected) * scale)
    finally:
        env.close()


def test_v2_keeps_v1s_task_and_its_success_reward_tops_every_step():
    v1, v2 = gym.make("FrankaStack-v1", num_envs=2), gym.make("FrankaStack-v2", num_envs=2)
    try:
        obs1, _ = v1.reset(seed=3)
        obs2, _ = v2.reset(seed=3)
        assert torch.equal(obs1, obs2) and v2.unwrapped.max_episode_steps == 120
        cfg = v2.unwrapped.cfg
        weights = cfg.reach_weight + cfg.grasp_weight + cfg.place_weight + cfg.release_weight + cfg.ungrasp_weight
        assert cfg.success_reward == 7.0 and weights < cfg.success_reward
    finally:
        v1.close()
        v2.close()


def test_step_none_holds_the_targets_and_pays_no_ungrasp():
    env = gym.make("FrankaStack-v2", num_envs=2, reward_mode="dense")
    try:
        env.reset(seed=0)
        _a_on_b(env)
        _, reward, _, _, info = env.step(None)
        assert info["reward_terms"]["ungrasp"].tolist() == [0.0, 0.0] and torch.isfinite(reward).all()
    finally:
        env.close()
