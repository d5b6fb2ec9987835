"""A restored env state brings the task's goal with it: observations, success and rewards after
``reset(options={"reset_to_env_states": ...})`` or ``set_state_dict`` read the goal that was saved,
not the one the last episode drew."""

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)

# env id -> the info key measured from the goal
GOAL_TASKS = {
    "FrankaPush-v1": "cube_to_goal",
    "FrankaPickPlace-v1": "cube_to_goal",
    "FrankaReach-v1": "tcp_to_goal",
    "SO100PickPlace-v1": "cube_to_goal",
}


@pytest.fixture(params=sorted(GOAL_TASKS))
def env(request):
    env = gym.make(request.param, num_envs=3)
    yield env
    env.close()


def _saved_then_moved(env, seed):
    """Reset with ``seed``, take two steps and save; then start new episodes (seed + 1), which
    move every goal. Returns (state dict, obs, the goal-measured info value, goal_pos) as saved."""
    u = env.unwrapped
    env.reset(seed=seed)
    torch.manual_seed(seed)
    for _ in range(2):
        env.step(env.action_space.sample())
    saved = u.get_state_dict(), u.get_obs(), u.evaluate()[GOAL_TASKS[u.spec.id]], u.goal_pos.clone()
    env.reset(seed=seed + 1)
    assert (u.goal_pos - saved[3]).norm(dim=1).min() > 1e-3
    return saved


def test_reset_to_env_states_restores_the_goal_of_the_chosen_envs_only(env):
    u = env.unwrapped
    state, obs, measured, goal = _saved_then_moved(env, seed=1)
    drawn = u.goal_pos.clone()
    rows = {kind: {k: v[[0, 2]] for k, v in part.items()} for kind, part in state.items()}
    restored_obs, _ = env.reset(options={"env_idx": [0, 2], "reset_to_env_states": {"env_states": rows}})
    torch.testing.assert_close(u.goal_pos[[0, 2]], goal[[0, 2]])
    torch.testing.assert_close(u.goal_pos[1], drawn[1])  # env 1 keeps its own episode
    torch.testing.assert_close(restored_obs[[0, 2]], obs[[0, 2]], atol=2e-4, rtol=0)
    torch.testing.assert_close(u.evaluate()[GOAL_TASKS[u.spec.id]][[0, 2]], measured[[0, 2]], atol=2e-5, rtol=0)


def test_set_state_dict_moves_the_goal_the_task_measures_from(env):
    u = env.unwrapped
    state, _, measured, goal = _saved_then_moved(env, seed=3)
    u.set_state_dict(state)
    torch.testing.assert_close(u.goal_pos, goal)
    torch.testing.assert_close(u.evaluate()[GOAL_TASKS[u.spec.id]], measured, atol=2e-5, rtol=0)
    obs, *_ = env.step(torch.zeros(env.action_space.shape))  # the numpy hooks read it too
    assert torch.isfinite(obs).all()
    torch.testing.assert_close(u.goal_pos, goal)
