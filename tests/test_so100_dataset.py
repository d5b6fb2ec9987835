"""SO-100 demonstrations in LeRobot's format use the real arm's schema: robot_type ``so_follower``, the
follower's feature names, degrees and the gripper's 0..100, actions that replay in
``pd_joint_pos_lerobot``."""

from __future__ import annotations

import json
import os

import gymnasium as gym
import numpy as np
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect

NAMES = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]


def test_lerobot_dataset_in_the_real_arms_schema_replays(tmp_path):
    out = str(tmp_path / "so100")
    summary = collect(CollectSettings(env_id="SO100Lift-v1", num_episodes=2, out=out, fmt="lerobot", num_envs=2,
                                      obs_mode="rgb", env_kwargs={"sensor_configs": {"width": 64, "height": 64}}),
                      progress=False)
    assert summary["episodes"] == 2 and summary["error"] is None
    with open(os.path.join(out, "meta", "info.json")) as f:
        info = json.load(f)
    assert info["robot_type"] == "so_follower"  # LeRobot 0.6 SOFollower.name
    for key in ("observation.state", "action"):
        assert info["features"][key]["names"] == NAMES and info["features"][key]["shape"] == [6]
    assert info["features"]["observation.images.base_camera"]["shape"] == [64, 64, 3]
    ds = load_dataset(out)
    assert ds.control_mode == "pd_joint_pos_lerobot" and ds.robot_type == "so_follower"
    ep = ds[0]
    # the first frame is the rest pose in degrees, the gripper open (100)
    assert torch.allclose(ep.observation_state[0], torch.tensor([0.0, -9.969, 5.615, 94.366, 0.0, 100.0]), atol=0.01)
    assert ep.observation_state[-1, 5] < 40  # closed on the cube at the end
    assert ep.images["base_camera"].shape[1:] == (64, 64, 3)
    # the actions are joint targets in the same units: replayed in pd_joint_pos_lerobot they lift the cube again
    env = gym.make("SO100Lift-v1", num_envs=1, control_mode="pd_joint_pos_lerobot")
    try:
        env.reset(seed=int(ds.seeds[0]))
        for action in ep.action:
            _, _, terminated, _, info = env.step(action[None])
        assert bool(info["success"][0]) and bool(terminated[0])
        assert np.allclose(env.unwrapped.agent.lerobot_from_qpos(env.unwrapped.agent.robot.state.qpos)[0, :5],
                           ep.action[-1, :5], atol=3.0)  # its last targets, less the lag of a moving arm (2 deg)
    finally:
        env.close()


def test_hdf5_keeps_the_env_schema(tmp_path):
    out = str(tmp_path / "so100_h5")
    collect(CollectSettings(env_id="SO100Lift-v1", num_episodes=1, out=out, fmt="hdf5", num_envs=1), progress=False)
    ds = load_dataset(out)
    assert ds.control_mode == "pd_ee_delta_pos" and ds.robot_type == "so100"
    assert ds.state_names[:6] == ("shoulder_pan.qpos", "shoulder_lift.qpos", "elbow_flex.qpos", "wrist_flex.qpos",
                                  "wrist_roll.qpos", "gripper.qpos")  # our own units there: radians, never .pos
    assert len(ds.state_names) == 30 and ds[0].action.shape[1] == 4
