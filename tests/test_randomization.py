"""The randomization table: checked before drawing, per-env streams (env k's values do not depend
on num_envs or on other envs' resets), O(k) partial resets, intervals, operations, privileged info."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.envs.randomization import Choice, Gaussian, LogUniform, Randomize, Uniform

TABLE = (
    Randomize("block.scale", Uniform(0.8, 1.2), when="startup"),
    Randomize("block.friction", Uniform(0.5, 1.5), when="startup"),
    Randomize("block.mass", LogUniform(0.02, 0.2)),
    Randomize("block.restitution", Gaussian(0.2, 0.1, clip=(0.0, 0.5))),
    Randomize("agent.robot.joint_stiffness", LogUniform(0.5, 2.0), operation="scale", joints=("panda_joint1",)),
    Randomize("agent.robot.joint_damping", Uniform(-10.0, 10.0), operation="add"),
    Randomize("block.color", Choice([(1, 0, 0), (0, 1, 0), (0, 0, 1)])),
    Randomize("lights.intensity", Uniform(0.5, 1.5)),
    Randomize("sensor_cameras.base_camera.pose_jitter", Uniform(-0.01, 0.01)),
)


def make(num_envs, table=TABLE, **kwargs):
    return gym.make("FrankaLift-v1", num_envs=num_envs, randomization=table, **kwargs).unwrapped


def test_env_k_gets_the_same_values_whatever_num_envs():
    many, one = make(3), make(1)
    many.reset(seed=10, options={"reconfigure": True})
    one.reset(seed=12, options={"reconfigure": True})
    assert torch.equal(many.randomization.privileged()[2], one.randomization.privileged()[0])
    assert many.block.scale[2] == one.block.scale[0] and many.block.mass[2] == one.block.mass[0]  # same bits
    # unseeded partial resets continue each env's own stream, whoever else resets
    many.reset(options={"env_idx": [2, 0]})
    one.reset()
    assert torch.equal(many.randomization.privileged()[2], one.randomization.privileged()[0])
    # a seed list seeds env by env (the startup columns 0-1 stay as built: no reconfiguration)
    many.reset(seed=[7, 12, 9])
    one.reset(seed=12)
    assert torch.equal(many.randomization.privileged()[1, 2:], one.randomization.privileged()[0, 2:])
    # ... and the task's own draws (the cube's spawn) are FrankaLift-v1's: randomization uses its own streams
    plain = gym.make("FrankaLift-v1", num_envs=1).unwrapped
    plain.reset(seed=12)
    assert torch.allclose(plain.block.state.pose[0, :2], one.block.state.pose[0, :2])
    for env in (many, one, plain):
        env.close()


def test_partial_reset_draws_and_writes_for_the_reset_envs_only(monkeypatch):
    env, twin = make(4), make(4)
    env.reset(seed=0)
    twin.reset(seed=0)
    before = env.randomization.privileged()
    written = []
    backend = env.backend
    for method in ("set_rigid_param", "set_joint_param", "set_light_param", "set_camera_pose"):
        original = getattr(backend, method)
        monkeypatch.setattr(backend, method, lambda *a, _o=original, **k: (written.append(a), _o(*a, **k))[1])
    env.reset(options={"env_idx": [1, 3]})
    after = env.randomization.privileged()
    env_ids = [np.asarray(a[2] if isinstance(a[0], int) else a[1]).tolist() for a in written]  # (gid,) name, env_ids
    assert len(env_ids) == 4 and all(ids == [1, 3] for ids in env_ids)  # mass, restitution, stiffness, damping
    assert torch.equal(after[[0, 2]], before[[0, 2]]) and not torch.equal(after[[1, 3]], before[[1, 3]])
    # envs 0 and 2 drew nothing: their next draws are the twin's (creation is seeded: 2022 + i)
    env.reset(options={"env_idx": [0, 2]})
    twin.reset(options={"env_idx": [0, 2]})
    assert torch.equal(env.randomization.privileged()[[0, 2]], twin.randomization.privileged()[[0, 2]])
    env.close()
    twin.close()


def test_enhanced_determinism_episodes_replay_from_their_episode_seed():
    env = make(2, TABLE[2:], enhanced_determinism=True)
    env.reset(options={"env_idx": [1]})
    seed = int(env._rng.episode_seeds[1])
    alone = make(1, TABLE[2:])
    alone.reset(seed=seed)
    assert torch.equal(env.randomization.privileged()[1], alone.randomization.privileged()[0])
    env.close()
    alone.close()


def test_interval_entries_redraw_every_k_steps_of_each_episode():
    env = make(2, (Randomize("block.linear_damping", Uniform(0.0, 1.0), when="interval", interval=3),))
    env.reset(seed=0)
    history = []
    for step in range(7):
        if step == 2:
            env.reset(options={"env_idx": [1]})  # env 1's episode clock restarts
        env.step(None)
        history.append(env.block.linear_damping.clone())
    changed = [(history[t] != history[t - 1]).tolist() for t in range(1, 7)]
    # env 0 redraws after its steps 3 and 6; env 1 (reset before its step 3) after its new steps 3
    assert [c[0] for c in changed] == [False, True, False, False, True, False]
    assert [c[1] for c in changed] == [False, False, False, True, False, False]
    assert float(history[0][0]) == 0.0  # the built value until the first draw
    env.close()


def test_scale_and_add_are_relative_to_the_built_value():
    env = make(8, TABLE[4:6])
    for seed in range(4):
        env.reset(seed=seed)
        k = env.agent.robot.joint_stiffness
        d = env.agent.robot.joint_damping
        assert ((k[:, 0] >= 500) & (k[:, 0] <= 2000)).all() and (k[:, 1:] == 1000).all()
        assert ((d >= 90) & (d <= 110)).all()
    env.close()


def test_privileged_info_holds_the_current_values():
    env = make(2)
    obs, info = env.reset(seed=3)
    names = env.randomization.privileged_names
    assert info["privileged"].shape == (2, len(names)) == (2, 1 + 1 + 1 + 1 + 1 + 9 + 3 + 1 + 6)
    assert names[:5] == ["block.scale", "block.friction", "block.mass", "block.restitution",
                         "agent.robot.joint_stiffness[panda_joint1]"]
    assert names[5] == "agent.robot.joint_damping[panda_joint1]" and names[-1] == "sensor_cameras.base_camera.pose_jitter[5]"
    p = env.step(None)[4]["privileged"]
    column = {n: p[:, i] for i, n in enumerate(names)}
    # as written; PhysX keeps 1 / mass, so a mass reads back within a float32 rounding
    assert torch.allclose(column["block.mass"], env.block.mass, rtol=1e-6, atol=0)
    assert torch.equal(column["block.friction"], env.block.static_friction)
    assert torch.equal(column["agent.robot.joint_stiffness[panda_joint1]"], env.agent.robot.joint_stiffness[:, 0])
    assert torch.equal(column["block.scale"], env.block.scale)
    # visual entries are drawn (and recorded) although this env does not render
    assert ((column["lights.intensity[0]"] >= 0.5) & (column["lights.intensity[0]"] <= 1.5)).all()
    assert env.observation_space.shape == (2, 36)  # the policy's observation is FrankaLift-v1's
    env.close()
    plain = gym.make("FrankaLift-v1", num_envs=1)
    assert "privileged" not in plain.reset(seed=0)[1]
    plain.close()


def test_scaled_cubes_are_built_resting_on_the_ground():
    env = make(3, TABLE[:1])
    env.reset(seed=1)
    scale = env.block.scale
    assert torch.allclose(env.block.default_pose[:, 2], 0.025 * scale)
    assert torch.allclose(env.block.inertia[:, 0], 0.05 * (0.05 * scale) ** 2 / 6, rtol=1e-4)  # mass kept
    for _ in range(3):
        env.step(None)
    assert torch.allclose(env.block.state.pose[:, 2], 0.025 * scale, atol=2e-4)  # neither sinks nor drops
    # After the build, set_scale rebuilds the listed envs' cubes only, resting on the ground.
    others = env.block.state.pose[1:]
    env.block.set_scale(1.1, env_ids=[0])
    assert env.block.scale.tolist() == pytest.approx([1.1] + scale[1:].tolist(), abs=1e-7)
    assert float(env.block.state.pose[0, 2]) == pytest.approx(0.025 * 1.1, abs=1e-6)
    assert float(env.block.inertia[0, 0]) == pytest.approx(0.05 * (0.05 * 1.1) ** 2 / 6, rel=1e-4)
    torch.testing.assert_close(env.block.state.pose[1:], others, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"scale\[0\] = -1 is outside"):
        env.block.set_scale(-1.0, env_ids=[0])
    env.close()


@pytest.mark.parametrize("table, error, match", [
    ((Randomize("blok.mass", Uniform(0.1, 0.2)),), ValueError,
     r"no 'blok'; its randomization targets are \['agent', 'block', 'floor', 'lights', 'sensor_cameras'\]"),
    ((Randomize("agent.robt.joint_damping", Uniform(0.1, 0.2)),), ValueError, r"targets are \['robot'\]"),
    ((Randomize("block.weight", Uniform(0.1, 0.2)),), ValueError, "no randomizable parameter 'weight'"),
    ((Randomize("block.mass", Uniform(-0.1, 0.2)),), ValueError, "below the valid > 0"),
    ((Randomize("block.mass", Gaussian(0.1, 0.05)),), ValueError, "clip="),
    ((Randomize("block.restitution", Uniform(0.5, 1.5)),), ValueError, "above the valid <= 1"),
    ((Randomize("block.mass", Uniform([0.1, 0.1], [0.2, 0.2])),), ValueError, "does not broadcast"),
    ((Randomize("block.mass", Uniform(0.1, 0.2), joints=("panda_joint1",)),), ValueError, "joint parameters"),
    ((Randomize("block.scale", Uniform(0.8, 1.2)),), ValueError, "when='startup'"),
    ((Randomize("agent.robot.joint_stiffness", Uniform(0.5, 2.0), operation="add"),), None, None),
    ((Randomize("agent.robot.joint_damping", Uniform(-200, 0.0), operation="add"),), ValueError, "below"),
    ((Randomize("agent.robot.joint_stiffness", Uniform(1, 2), joints=("elbow",)),), KeyError, "elbow"),
    ((Randomize("sensor_cameras.wrist.pose_jitter", Uniform(0, 1)),), ValueError, "base_camera"),
    ((Randomize("agent.controller.gain", Uniform(0, 1)),), ValueError, "no randomizable parameters"),
    ((Randomize("agent.robot.joint_damping", Uniform(1, 2), joints=("panda_joint1",) * 2),), ValueError,
     "joint_damping.*duplicates"),
    ((Randomize("lights.direction", Choice([(0.0, 0.0, 0.0), (0.0, 1.0, -1.0)])),), ValueError, "zero vector"),
    ((Randomize("lights.direction", Uniform(0.0, 1.0), operation="scale"),), ValueError, "zero vector"),
    ((Randomize("lights.direction", Uniform(-0.3, 0.3), operation="add"),), None, None),
    ((Randomize("block.mass", Uniform(0.1, 0.2)), Randomize("block.mass", Uniform(0.0, 0.2))), ValueError, "valid > 0"),
])
def test_bad_tables_are_refused_before_anything_is_drawn(table, error, match):
    if error is None:
        make(1, table).close()
        return
    with pytest.raises(error, match=match):
        make(1, table)


@pytest.mark.parametrize("kwargs, match", [
    (dict(param="mass", dist=Uniform(0, 1)), "<object>.<parameter>"),
    (dict(param=".block.mass", dist=Uniform(0, 1)), "<object>.<parameter>"),
    (dict(param="block.mass.", dist=Uniform(0, 1)), "<object>.<parameter>"),
    (dict(param="block.mass", dist=(0.1, 0.2)), "dist must be"),
    (dict(param="block.mass", dist=Uniform(0.1, 0.2), when="episode"), "when must be"),
    (dict(param="block.mass", dist=Uniform(0.1, 0.2), when="interval"), "interval=<int"),
    (dict(param="block.mass", dist=Uniform(0.1, 0.2), interval=5), "only for when='interval'"),
    (dict(param="block.mass", dist=Uniform(0.1, 0.2), operation="multiply"), "operation must be"),
])
def test_bad_entries_are_refused(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Randomize(**kwargs)


@pytest.mark.parametrize("make_dist", [
    lambda: Uniform(1.0, 0.5), lambda: LogUniform(0.0, 1.0), lambda: Gaussian(0.0, -1.0),
    lambda: Gaussian(0.0, 1.0, clip=(1.0, 0.0)), lambda: Choice([]), lambda: Choice([1, 2], weights=[1, -1]),
    lambda: Uniform(float("nan"), 1.0), lambda: Uniform(0.1, float("inf")), lambda: Choice([0.1, float("nan")]),
    lambda: Gaussian(0.1, 0.1, clip=(0.0, float("nan"))),
])
def test_bad_distributions_are_refused(make_dist):
    with pytest.raises(ValueError):
        make_dist()


def test_distributions_draw_what_they_say():
    gen = np.random.default_rng(0)
    draws = np.stack([LogUniform(0.1, 10.0).sample(gen, ()) for _ in range(2000)])
    assert np.mean(np.log10(draws) < 0) == pytest.approx(0.5, abs=0.03)  # as many below 1 as above
    draws = np.stack([Gaussian([0.0, 5.0], 1.0, clip=(-1.0, 6.0)).sample(gen, (2,)) for _ in range(2000)])
    assert draws.min() >= -1.0 and draws.max() <= 6.0 and np.mean(draws[:, 1]) == pytest.approx(4.9, abs=0.05)
    picks = np.stack([Choice([(1, 0, 0), (0, 1, 0)], weights=[3, 1]).sample(gen, (3,)) for _ in range(2000)])
    assert np.mean(picks[:, 0]) == pytest.approx(0.75, abs=0.03) and set(picks.sum(axis=1)) == {1.0}


def test_worker_shards_draw_what_one_process_draws():
    """Env k of a batch split over 2 worker processes gets env k's values of one process: at
    creation (startup entries, seeds 2022 + k), after a seeded reset and after a partial reset."""
    from simulo_envs.tasks.franka_lift_randomized import FrankaLiftRandomizedEnv
    from simulo_envs.workers.sharded import ShardedEnv

    sharded = ShardedEnv(FrankaLiftRandomizedEnv, 3, 2, {})
    local = FrankaLiftRandomizedEnv(num_envs=3)
    try:
        for call in (lambda e: e.reset(), lambda e: e.reset(seed=40), lambda e: e.reset(options={"env_idx": [2, 0]})):
            assert torch.equal(call(sharded)[1]["privileged"], call(local)[1]["privileged"])
    finally:
        sharded.close()
        local.close()
