"""A dataset and the policy trained on it carry every env setting the data was recorded with, and
evaluation rebuilds that env: a moved camera given as a ``look_at()`` pose, a randomization table,
the control frequency. Nothing is dropped: a setting that cannot be recorded is refused."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.cloner.plan import CloneCfg
from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.envs.env_settings import decode_env_kwargs, encode_env_kwargs
from simulo_envs.envs.randomization import Choice, Randomize, Uniform
from simulo_envs.envs.sensors import look_at
from simulo_envs.imitation import default_config
from simulo_envs.imitation.datasets_io import load_demonstrations
from simulo_envs.imitation.rollout import eval_env_kwargs, make_eval_env
from simulo_envs.imitation.trainer import train
from simulo_envs.sim.config import SimConfig

EYE, TARGET = [0.7, -0.55, 0.45], [0.45, 0.0, 0.05]
"""A camera moved to the robot's other side: its images share almost nothing with the default's."""


def test_env_keywords_round_trip_through_json_exactly():
    kwargs = {"sensor_configs": {"base_camera": {"pose": look_at(EYE, TARGET), "width": 48}, "height": 32},
              "randomization": [Randomize("block.mass", Uniform(0.03, np.array([0.1, 0.2])[0])),
                                Randomize("block.color", Choice([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), when="startup")],
              "sim_config": SimConfig(sim_freq=120, control_freq=30, gravity=(0.0, 0.0, -9.0)),
              "max_episode_steps": np.int64(50), "gains": torch.tensor([1.5, 2.0]), "robot_uids": ("panda",)}
    text = json.dumps(encode_env_kwargs(kwargs))
    back = decode_env_kwargs(json.loads(text))
    assert back["sensor_configs"]["base_camera"]["pose"] == look_at(EYE, TARGET)
    assert back["randomization"] == kwargs["randomization"]
    assert back["sim_config"] == kwargs["sim_config"] and back["sim_config"].control_freq == 30
    assert back["max_episode_steps"] == 50 and back["gains"] == [1.5, 2.0] and back["robot_uids"] == ["panda"]
    assert json.loads(text)["sensor_configs"]["base_camera"]["pose"]["__type__"] == "Pose"


def test_a_setting_that_cannot_be_recorded_is_named_not_dropped(tmp_path):
    with pytest.raises(TypeError, match=r"env keyword clone_cfg.clone_strategy: a builtins.function cannot be recorded"):
        encode_env_kwargs({"clone_cfg": CloneCfg(clone_strategy=lambda combos, n, device: None)})
    with pytest.raises(TypeError, match=r"env keyword sensor_configs.base_camera.pose: a .*object cannot be recorded"):
        encode_env_kwargs({"sensor_configs": {"base_camera": {"pose": object()}}})
    with pytest.raises(ValueError, match="unknown recorded type 'os.system'"):
        decode_env_kwargs({"x": {"__type__": "os.system"}})
    out = tmp_path / "never"

    class TunedSimConfig(SimConfig):  # the env takes it; its class is not one a record can rebuild
        pass

    with pytest.raises(TypeError, match="env keyword sim_config: a .*TunedSimConfig cannot be recorded"):
        collect(CollectSettings(env_id="FrankaLift-v1", num_episodes=1, out=str(out), num_envs=1,
                                env_kwargs={"sim_config": TunedSimConfig()}), progress=False)
    assert not out.exists()


@pytest.fixture(scope="module")
def moved_camera_demos(tmp_path_factory) -> str:
    """Two FrankaLift-v1 expert episodes seen by a moved 32x32 camera, at 25 Hz, with a mass table."""
    out = str(tmp_path_factory.mktemp("moved") / "demos")
    kwargs = {"sensor_configs": {"base_camera": {"pose": look_at(EYE, TARGET), "width": 32, "height": 32}},
              "sim_config": {"control_freq": 25}, "randomization": [Randomize("block.mass", Uniform(0.05, 0.08))]}
    summary = collect(CollectSettings(env_id="FrankaLift-v1", num_episodes=2, out=out, num_envs=2, obs_mode="rgb",
                                      env_kwargs=kwargs), progress=False)
    assert summary["episodes"] == 2
    return out


def test_the_dataset_and_the_checkpoint_rebuild_the_recorded_env(moved_camera_demos, tmp_path):
    with open(os.path.join(moved_camera_demos, "meta", "simulo_env.json")) as f:
        recorded = json.load(f)["env_kwargs"]
    pose = look_at(EYE, TARGET)
    assert recorded["sensor_configs"]["base_camera"]["pose"] == {"__type__": "Pose", "position": list(pose.position),
                                                                "quaternion": list(pose.quaternion)}
    # the frequencies the episodes ran at, also the task's default physics one the user did not set
    assert recorded["sim_config"] == {"control_freq": 25, "sim_freq": 100, "isolate_envs": True}
    ds = load_dataset(moved_camera_demos)
    assert ds.fps == 25
    demos = load_demonstrations(moved_camera_demos, "rgb")
    result = train(demos, default_config("bc", "rgb", {"iterations": 2, "batch_size": 4}), str(tmp_path / "run"),
                   progress=False)
    raw = torch.load(result.checkpoint, weights_only=True)
    assert raw["spec"]["env_kwargs"] == ds.schema.env_kwargs
    from simulo_envs.imitation.spec import PolicySpec

    spec = PolicySpec.from_dict(raw["spec"])
    kwargs = eval_env_kwargs(spec)
    assert kwargs["sensor_configs"]["base_camera"]["pose"] == pose
    assert kwargs["randomization"] == [Randomize("block.mass", Uniform(0.05, 0.08))]
    env = make_eval_env(spec, 1)
    try:
        assert env.unwrapped.control_freq == 25
        assert env.base_env._sensor_configs["base_camera"].pose == pose
        obs, _ = env.reset(seed=int(ds.seeds[0]))
        image = obs["sensor_data"]["base_camera"]["rgb"][0].numpy().astype(int)
    finally:
        env.close()
    recorded_first = ds[0].images["base_camera"][0].numpy().astype(int)
    match = np.abs(image - recorded_first).mean()
    assert match < 3.0, match  # the recorded view, within the codec's loss
    default = make_eval_env(spec.__class__(**{**spec.to_dict(), "env_kwargs": None}), 1)
    try:
        obs, _ = default.reset(seed=int(ds.seeds[0]))
        other = obs["sensor_data"]["base_camera"]["rgb"][0].numpy().astype(int)
    finally:
        default.close()
    assert np.abs(other - recorded_first).mean() > 3 * match  # the default camera sees something else


def test_an_env_recorded_without_a_time_limit_is_refused_with_the_reason():
    from simulo_envs.imitation.spec import PolicySpec

    spec = PolicySpec("FrankaLift-v1", "state", "pd_joint_delta_pos", 36, 8,
                      env_kwargs={"max_episode_steps": -1, "control_mode": "pd_joint_delta_pos"})
    with pytest.raises(ValueError, match="without a time limit .*--max-episode-steps"):
        eval_env_kwargs(spec)
    assert eval_env_kwargs(spec, max_episode_steps=200)["max_episode_steps"] == 200
