"""Seeding: a per-env episode RNG, so env k's episode from a seed does not depend on num_envs."""

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from conftest import BACKENDS_UNDER_TEST

SEEDS = [10, 11, 12, 13]


@pytest.fixture(scope="module", params=BACKENDS_UNDER_TEST)
def env4(request):
    # spacing 2: origins differ, so local != world
    e = gym.make("FrankaLift-v1", num_envs=4, sim_backend=request.param)
    yield e
    e.close()


@pytest.fixture(scope="module")
def env1():
    e = gym.make("FrankaLift-v1", num_envs=1)
    yield e
    e.close()


def local_block_pose(env):
    u = env.unwrapped
    pose = u.block.state.pose
    pose[:, :3] -= u.scene.env_origins
    return pose


def test_seed_list_matches_single_env_seeds(env4, env1):
    env4.reset(seed=SEEDS)
    batch = local_block_pose(env4)
    for k, s in enumerate(SEEDS):
        env1.reset(seed=s)
        single = local_block_pose(env1)[0]
        assert torch.allclose(batch[k], single, atol=1e-6), (k, batch[k], single)


def test_int_seed_is_seed_plus_env_index(env4, env1):
    env4.reset(seed=10)
    batch = local_block_pose(env4)
    env4.reset(seed=SEEDS)
    assert torch.equal(local_block_pose(env4), batch)
    env1.reset(seed=12)
    assert torch.allclose(batch[2], local_block_pose(env1)[0], atol=1e-6)


def test_observation_matches_across_num_envs(env4, env1):
    obs4, _ = env4.reset(seed=SEEDS)
    for k, s in enumerate(SEEDS):
        obs1, _ = env1.reset(seed=s)
        assert torch.allclose(obs4[k], obs1[0], atol=1e-5), k


def test_seeded_envs_differ_from_each_other(env4):
    env4.reset(seed=SEEDS)
    pose = local_block_pose(env4)[:, :2]
    assert len({tuple(p.tolist()) for p in pose}) == 4


def test_same_seed_twice_gives_the_same_poses(env4):
    env4.reset(seed=SEEDS)
    first = local_block_pose(env4)
    env4.step(env4.action_space.sample())
    env4.reset(seed=SEEDS)
    second = local_block_pose(env4)
    assert torch.equal(first, second)


def test_unseeded_resets_advance_the_stream(env4):
    env4.reset(seed=SEEDS)
    seeded = local_block_pose(env4)
    env4.reset()
    first = local_block_pose(env4)
    env4.reset()
    second = local_block_pose(env4)
    for k in range(4):
        assert not torch.equal(first[k, :2], seeded[k, :2]), k
        assert not torch.equal(second[k, :2], first[k, :2]), k


def test_unseeded_stream_is_reproducible_after_a_seed(env4):
    env4.reset(seed=SEEDS)
    env4.reset()
    a = local_block_pose(env4)
    env4.reset(seed=SEEDS)
    env4.reset()
    b = local_block_pose(env4)
    assert torch.equal(a, b)


def test_partial_reset_with_seeds_matches_single_env(env4, env1):
    env4.reset(seed=0)
    env4.reset(seed=[21, 23], options={"env_idx": [1, 3]})
    batch = local_block_pose(env4)
    for k, s in ((1, 21), (3, 23)):
        env1.reset(seed=s)
        assert torch.allclose(batch[k], local_block_pose(env1)[0], atol=1e-6), k


def test_partial_reset_does_not_consume_other_envs_streams(env4):
    """Resetting env 1 alone must not advance env 0's stream."""
    env4.reset(seed=SEEDS)
    env4.reset(options={"env_idx": [0]})
    direct = local_block_pose(env4)[0]
    env4.reset(seed=SEEDS)
    env4.reset(options={"env_idx": [1]})
    env4.reset(options={"env_idx": [0]})
    after_other = local_block_pose(env4)[0]
    assert torch.equal(direct, after_other)


def test_wrong_number_of_seeds_raises(env4):
    with pytest.raises(ValueError):
        env4.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError):
        env4.reset(seed=[1, 2, 3], options={"env_idx": [0, 1]})
