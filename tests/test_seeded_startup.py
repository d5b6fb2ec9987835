"""A seeded reset decides every randomized value of the envs it reseeds, ``startup`` ones included:
env ``k`` of a batch reset with seed ``s`` draws what one env reset with ``s + k`` draws, whatever
happened before (the creation seeds 2022 + i drew the first build's values)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.randomization import Randomize, Uniform

BUILT = Randomize("block.scale", Uniform(0.8, 1.2), when="startup")
STARTUP = Randomize("block.friction", Uniform(0.5, 1.5), when="startup")
RESET = Randomize("block.mass", Uniform(0.03, 0.15))


def make(num_envs: int, table, **kwargs):
    return gym.make("FrankaLift-v1", num_envs=num_envs, randomization=table, **kwargs).unwrapped


def values(env) -> dict:
    return {k: v.numpy() for k, v in env.randomization.values().items()}


def test_env_2_of_4_seeded_10_draws_what_one_env_seeded_12_draws():
    table = (BUILT, STARTUP, RESET)
    batch, single = make(4, table), make(1, table)
    _, info = batch.reset(seed=10)
    assert info["reconfigure"]        # the scale is fixed at build time: the seed rebuilds the scene
    single.reset(seed=12)
    mine, theirs = values(batch), values(single)
    assert set(mine) == {"block.scale", "block.friction", "block.mass"}
    for key in mine:
        assert mine[key][2] == pytest.approx(theirs[key][0], abs=0), key
    # The built cube is that size: resting on the ground, its centre is half its scaled 5 cm edge up.
    scale = mine["block.scale"][2]
    assert float(batch.block.state.pose[2, 2]) == pytest.approx(0.025 * scale, abs=2e-4)
    assert float(single.block.state.pose[0, 2]) == pytest.approx(float(batch.block.state.pose[2, 2]), abs=1e-5)
    # The creation seeds drew other values (what a seeded reset used to keep).
    fresh = make(4, table)
    assert values(fresh)["block.scale"][2] != pytest.approx(mine["block.scale"][2], abs=1e-3)
    for env in (batch, single, fresh):
        env.close()


def test_a_seeded_partial_reset_redraws_the_startup_values_of_its_envs_only():
    env = make(4, (STARTUP, RESET))
    before = values(env)
    _, info = env.reset(seed=7, options={"env_idx": [1, 3]})
    assert not info["reconfigure"]    # nothing is fixed at build time: no rebuild
    after = values(env)
    single = make(1, (STARTUP, RESET))
    single.reset(seed=7 + 3)          # env 3 of a batch seeded 7 takes 7 + 3
    assert after["block.friction"][3] == pytest.approx(values(single)["block.friction"][0], abs=0)
    assert after["block.mass"][3] == pytest.approx(values(single)["block.mass"][0], abs=0)
    np.testing.assert_array_equal(after["block.friction"][[0, 2]], before["block.friction"][[0, 2]])
    assert after["block.friction"][1] != before["block.friction"][1]
    # Written into the simulation, not only recorded.
    assert env.block.static_friction.tolist() == pytest.approx(after["block.friction"].tolist(), rel=1e-6)
    for e in (env, single):
        e.close()


def test_unseeded_resets_keep_the_startup_values():
    for kwargs in ({}, {"enhanced_determinism": True}):
        env = make(3, (STARTUP, RESET), **kwargs)
        before = values(env)
        env.reset()
        env.reset(options={"env_idx": [0]})
        after = values(env)
        np.testing.assert_array_equal(after["block.friction"], before["block.friction"])
        assert not np.array_equal(after["block.mass"], before["block.mass"])
        env.close()


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "shared"])
def test_a_seeded_partial_reset_rebuilds_the_build_time_values_of_its_envs_only(isolate):
    """Env 1 reset with seed 5 draws its cube's scale from 5 + 1 (as one env seeded 6 does) and
    gets that cube, resting on the ground; the other envs keep their cubes and values."""
    table = (BUILT, STARTUP, RESET)
    env = make(3, table, sim_config={"isolate_envs": isolate})
    before, pose = values(env), env.block.state.pose
    _, info = env.reset(seed=5, options={"env_idx": [1]})
    assert not info["reconfigure"]    # only env 1's cube was rebuilt
    after = values(env)
    single = make(1, table, sim_config={"isolate_envs": isolate})
    single.reset(seed=6)
    for key, value in values(single).items():
        assert after[key][1] == value[0], key
        np.testing.assert_array_equal(np.delete(after[key], 1, axis=0), np.delete(before[key], 1, axis=0))
    assert after["block.scale"][1] != before["block.scale"][1]
    assert env.block.scale[1] == pytest.approx(float(after["block.scale"][1]), abs=0)
    torch.testing.assert_close(env.block.state.pose[[0, 2]], pose[[0, 2]], rtol=0, atol=0)
    # Built at that size, resting on the ground: its centre is half its scaled 5 cm edge up.
    assert float(env.block.state.pose[1, 2]) == pytest.approx(0.025 * after["block.scale"][1], abs=2e-4)
    for e in (env, single):
        e.close()


def test_a_seeded_partial_reset_with_a_build_time_entry_on_the_gpu_system_is_refused_and_changes_nothing():
    env = make(3, (BUILT, RESET), sim_backend="physx_cuda_emulated")
    before, pose = values(env), env.block.state.pose
    with pytest.raises(ValueError, match=r"block\.scale is drawn when bodies are built; physx_cuda_emulated cannot "
                                         r"rebuild some envs' bodies.*Reset every env with the seed"):
        env.reset(seed=5, options={"env_idx": [1]})
    for key, value in values(env).items():
        np.testing.assert_array_equal(value, before[key])
    torch.testing.assert_close(env.block.state.pose, pose, rtol=0, atol=0)
    env.reset(options={"env_idx": [1]})   # without a seed it is an ordinary partial reset
    _, info = env.reset(seed=5)           # every env with the seed: the scene is rebuilt
    assert info["reconfigure"]
    env.close()


def test_a_seeded_restore_draws_nothing():
    env = make(2, (BUILT, STARTUP, RESET))
    state = env.get_state()
    before = values(env)
    _, info = env.reset(seed=3, options={"reset_to_env_states": {"env_states": state}})
    assert not info["reconfigure"]
    for key, value in values(env).items():
        np.testing.assert_array_equal(value, before[key])
    env.close()
