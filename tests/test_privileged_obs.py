"""Image observations carry the cameras and the robot's own state; the task's privileged state
(object poses, contacts, vectors to objects) only when the obs mode names it (``"rgb+state"``,
``"rgb+state_dict"``, ManiSkill's spelling); ``info`` keeps it in every mode."""

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.envs.observations import flatten_obs
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.envs.sensors import obs_mode_state, parse_obs_mode
from simulo_envs.sim.render import vulkan_available

pytestmark = pytest.mark.skipif(not vulkan_available(), reason="no Vulkan device")

TINY = {"width": 8, "height": 8}
# what the cameras cannot show: a goal point hidden from the sensors is the task's command
COMMAND = {"FrankaPickPlace-v1": ("goal_pos",), "FrankaReach-v1": ("goal_pos",), "SO100PickPlace-v1": ("goal_pos",),
           "SO101PickPlace-v1": ("goal_pos",)}
TCP = {"FrankaReach-v1": "tcp_pos"}


@pytest.mark.parametrize("env_id", sorted(REGISTERED))
def test_image_modes_observe_the_robot_only_and_info_keeps_the_rest(env_id):
    full = REGISTERED[env_id](num_envs=1, obs_mode="state_dict")
    rgb = REGISTERED[env_id](num_envs=1, obs_mode="rgb", sensor_configs=TINY)
    try:
        state, _ = full.reset(seed=3)
        obs, info = rgb.reset(seed=3)
        expected = (TCP.get(env_id, "tcp_pose"),) + COMMAND.get(env_id, ())
        assert tuple(obs["extra"]) == expected
        assert set(obs) == {"agent", "extra", "sensor_data", "sensor_param"}
        for key in obs["agent"]:
            assert torch.equal(obs["agent"][key], state["agent"][key])
        for key in expected:
            assert torch.equal(obs["extra"][key], state["extra"][key])
        privileged = [key for key in state["extra"] if key not in expected]
        assert privileged   # every task has object state (poses, a drawer's joint...)
        info_keys = set(info)
        # critics read the privileged values from info: each object pose of the state obs is there
        for key in privileged:
            if key.endswith("_pose") or key in ("is_grasped", "drawer_qpos"):
                assert key in info_keys, key
    finally:
        full.close()
        rgb.close()


def test_state_beside_images_in_maniskills_two_layouts():
    state_env = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="state")
    flat = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="rgb+state", sensor_configs=TINY)
    nested = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="rgbd+state_dict", sensor_configs=TINY)
    try:
        expected, _ = state_env.reset(seed=5)
        obs, _ = flat.reset(seed=5)
        assert set(obs) == {"sensor_data", "sensor_param", "state"}
        assert obs["state"].shape == (2, 36) and torch.equal(obs["state"], expected)
        assert flat.observation_space["state"].shape == (2, 36)
        obs, _ = nested.reset(seed=5)
        assert list(obs["extra"]) == ["tcp_pose", "block_pose", "tcp_to_block", "is_grasped"]
        assert torch.equal(flatten_obs({"agent": obs["agent"], "extra": obs["extra"]}), expected)
        assert set(obs["sensor_data"]["base_camera"]) == {"rgb", "depth"}
        action = torch.zeros(2, *flat.single_action_space.shape)
        after, *_ = flat.step(action)
        reference, *_ = state_env.step(action)
        assert torch.allclose(after["state"], reference, atol=1e-5)
        structs = [e.obs_mode_struct for e in (state_env, flat, nested)]
        assert [(s.state, s.state_dict, s.use_state, s.visual.rgb) for s in structs] == \
            [(True, False, True, False), (True, False, True, True), (False, True, True, True)]
    finally:
        for env in (state_env, flat, nested):
            env.close()


def test_rgb_alone_has_no_state_in_its_struct():
    env = REGISTERED["FrankaPush-v1"](num_envs=1, obs_mode="rgb", sensor_configs=TINY)
    try:
        struct = env.obs_mode_struct
        assert not struct.use_state and struct.visual.rgb
        assert set(env.single_observation_space["extra"]) == {"tcp_pose"}
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["state+state_dict", "rgb+state+state_dict", "rgb+pose", "none+rgb", "state+"])
def test_bad_state_parts_are_refused_with_the_valid_spellings(mode):
    with pytest.raises(ValueError, match="rgb\\+state"):
        parse_obs_mode(mode)


def test_obs_mode_state_names_the_state_part():
    assert [obs_mode_state(m) for m in ("state", "state_dict", "none", "rgb", "rgb+state", "depth+state_dict",
                                        "pointcloud+state")] == \
        ["state", "state_dict", None, None, "state", "state_dict", "state"]
    assert parse_obs_mode("pointcloud+state") == parse_obs_mode("pointcloud")
    assert np.array_equal(sorted(parse_obs_mode("rgbd+state")), ["depth", "rgb"])


@pytest.fixture(scope="module")
def lift_rgb_datasets(tmp_path_factory):
    """Two FrankaLift-v1 expert episodes recorded in "rgb" and the same seeds in "rgb+state"."""
    from imitation_demos import expert_dataset

    root = tmp_path_factory.mktemp("privileged")
    kwargs = {"env_kwargs": {"sensor_configs": {"width": 16, "height": 16}}, "num_envs": 1}
    return (expert_dataset(str(root / "rgb"), "FrankaLift-v1", 2, "rgb", **kwargs),
            expert_dataset(str(root / "rgb_state"), "FrankaLift-v1", 2, "rgb+state", **kwargs))


def test_datasets_hold_what_the_obs_mode_observes(lift_rgb_datasets):
    from simulo_envs.datasets import load_dataset

    rgb, with_state = (load_dataset(path) for path in lift_rgb_datasets)
    assert len(rgb.state_names) == 25 and not any(n.startswith(("block", "tcp_to", "is_")) for n in rgb.state_names)
    assert len(with_state.state_names) == 36 and with_state.state_names[:25] == rgb.state_names
    for a, b in zip(rgb, with_state):   # the same seeded episodes: the robot's columns agree
        assert a.seed == b.seed and torch.equal(a.observation_state, b.observation_state[:, :25])
        assert torch.equal(a.images["base_camera"], b.images["base_camera"])


def test_rgb_policies_read_the_robot_and_regress_the_rest_only_where_recorded(lift_rgb_datasets, tmp_path):
    from simulo_envs.imitation.config import default_config
    from simulo_envs.imitation.datasets_io import load_demonstrations
    from simulo_envs.imitation.trainer import train

    plain, with_state = (load_demonstrations(path, "rgb") for path in lift_rgb_datasets)
    assert plain.spec.state_columns == tuple(range(25)) and plain.spec.other_columns == ()
    assert with_state.spec.state_columns == tuple(range(25)) and with_state.spec.other_columns == tuple(range(25, 36))
    assert plain.spec.read_names == with_state.spec.read_names
    for a, b in zip(plain.episodes, with_state.episodes):
        assert torch.equal(a.state, b.state) and b.other.shape == (len(b.state), 11) and a.other is None
    small = {"hidden": 16, "blocks": 1, "image_channels": [4, 8], "image_features": 8, "iterations": 2,
             "state_aux_weight": 1.0}
    with pytest.raises(ValueError, match="rgb\\+state"):
        train(plain, default_config("diffusion", "rgb", small), str(tmp_path / "run"), progress=False)
