"""``reset(options=...)``: unknown keys are refused before anything changes; tasks declare their own keys."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.reset_options import known_reset_option_keys
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.vector import SingleEnvView


class LiftWithNudge(FrankaLiftEnv):
    """Reads one extra option: ``nudge_x`` [m] added to the cube's spawn x of the reset envs."""

    reset_option_keys = ("nudge_x",)

    def _initialize_episode(self, env_idx, options):
        super()._initialize_episode(env_idx, options)
        if "nudge_x" in options:
            pose = self.block.state.pose[env_idx]
            pose[:, 0] += options["nudge_x"]
            self.block.set_pose(pose, env_ids=env_idx)


class RestoreMixin:
    reset_option_keys = ("restore",)


class LiftWithBoth(RestoreMixin, LiftWithNudge):
    pass


def _snapshot(env):
    return env.unwrapped.block.state.pose.clone(), env.unwrapped.elapsed_steps


def test_a_typo_raises_naming_the_known_keys_and_changes_nothing():
    env = gym.make("FrankaLift-v1", num_envs=3)
    env.reset(seed=1)
    env.step(torch.full((3, 8), 0.5))
    pose, steps = _snapshot(env)
    rng_state = env.np_random.bit_generator.state
    with pytest.raises(ValueError, match=r"env_ids.*accepts \['env_idx', 'reconfigure', 'reset_to_env_states'\].*did you mean 'env_idx'"):
        env.reset(seed=7, options={"env_ids": [0]})
    after_pose, after_steps = _snapshot(env)
    assert torch.equal(after_pose, pose) and torch.equal(after_steps, steps)
    assert steps.tolist() == [1, 1, 1]
    assert env.np_random.bit_generator.state == rng_state
    with pytest.raises(ValueError, match="unknown options key"):
        env.reset(options={0: 1})
    env.close()


def test_the_vector_env_and_the_view_refuse_too():
    venv = gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", record_metrics=True)
    venv.reset(seed=0)
    venv.step(torch.zeros(2, 8))
    with pytest.raises(ValueError, match="env_idx"):
        venv.reset(options={"envidx": [1]})
    assert venv.elapsed_steps.tolist() == [1, 1]
    venv.close()
    view = SingleEnvView(gym.make("FrankaLift-v1", num_envs=1))
    with pytest.raises(ValueError, match="reconfigure"):
        view.reset(options={"reconfig": True})
    view.close()


def test_a_task_declares_the_keys_it_reads():
    env = LiftWithNudge(num_envs=2)
    env.reset(seed=3)
    base_x = env.block.state.pose[:, 0].clone()
    env.reset(seed=3, options={"env_idx": [1], "nudge_x": 0.05})
    x = env.block.state.pose[:, 0]
    assert x[0] == base_x[0]
    assert x[1] == pytest.approx(float(base_x[1]) + 0.05, abs=1e-6)
    with pytest.raises(ValueError, match="nudge_x"):
        env.reset(options={"nudge_y": 0.05})   # the message lists the task's key too
    env.close()


def test_keys_are_collected_over_the_class_hierarchy():
    base = ("env_idx", "reconfigure", "reset_to_env_states")
    assert known_reset_option_keys(FrankaLiftEnv) == base
    assert known_reset_option_keys(LiftWithNudge) == (*base, "nudge_x")
    assert set(known_reset_option_keys(LiftWithBoth)) == {*base, "nudge_x", "restore"}


def test_a_bad_declaration_is_named():
    class Bad(FrankaLiftEnv):
        reset_option_keys = "nudge_x"   # a str, not a tuple of str

    with pytest.raises(TypeError, match="Bad.reset_option_keys must be a tuple of str"):
        known_reset_option_keys(Bad)
