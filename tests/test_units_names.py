"""A column name means one unit everywhere: LeRobot's ``<motor>.pos`` only for the real robot's
driver units (degrees, the gripper's 0..100), radians always ``.qpos`` (HDF5 datasets, our state
columns, the observations in ``pd_joint_pos_lerobot``); a replay keeps its source's schema."""

from __future__ import annotations

import math

import numpy as np
import pytest

import simulo_envs  # noqa: F401
from simulo_envs.datasets import DatasetSchema, load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.datasets.replay_job import ReplaySettings, replay
from simulo_envs.datasets.schema import schema_from_env
from simulo_envs.envs.registration import REGISTERED

SO100_NAMES = ("shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos",
               "gripper.pos")


@pytest.mark.parametrize("env_id", ["FrankaLift-v1", "SO100Lift-v1"])
def test_every_control_mode_names_radians_qpos_and_follower_units_pos(env_id):
    cls = REGISTERED[env_id]
    for mode in _modes(env_id):
        env = cls(num_envs=1, control_mode=mode)
        try:
            env.reset(seed=0)
            schema = schema_from_env(env, env_id)
            agent = env.unwrapped.agent
            qpos = agent.robot.state.qpos[0].numpy()
            joints = list(agent.robot.joint_names)
            state = env.get_obs()[0].numpy()
            for j, name in enumerate(joints):  # the qpos columns hold radians, named .qpos
                column = schema.state_names.index(f"{name}.qpos")
                assert math.isclose(state[column], qpos[j], abs_tol=1e-6)
            assert not [n for n in schema.state_names if n.endswith(".pos")], (mode, schema.state_names)
            real = getattr(agent, "lerobot", None)
            pos_actions = [n for n in schema.action_names if n.endswith(".pos")]
            if real is not None and mode == real.control_mode:  # actions in degrees / 0..100
                assert tuple(schema.action_names) == SO100_NAMES
                high = env.unwrapped.single_action_space.high[0]
                assert high == pytest.approx(math.degrees(agent.robot.qlimits[0, 1].item()), abs=1e-3)
            else:
                assert pos_actions == [], (mode, schema.action_names)
        finally:
            env.close()


def _modes(env_id: str) -> tuple:
    env = REGISTERED[env_id](num_envs=1)
    try:
        return tuple(env.unwrapped.agent.supported_control_modes)
    finally:
        env.close()


def test_names_of_datasets_written_before_the_rename_are_upgraded():
    old = {"env_id": "SO100Lift-v1", "obs_mode": "state", "control_mode": "pd_joint_pos_lerobot",
           "reward_mode": "normalized_dense", "fps": 20, "robot_type": "so100", "cameras": {}, "task": "",
           "max_episode_steps": 80, "env_kwargs": {},
           "state_names": ["shoulder_pan.pos", "gripper.pos", "shoulder_pan.vel", "cube_pose.x"],
           "action_names": list(SO100_NAMES)}
    schema = DatasetSchema.from_json(old)  # an HDF5 conversion into the lerobot mode: radians named .pos
    assert schema.state_names == ("shoulder_pan.qpos", "gripper.qpos", "shoulder_pan.qvel", "cube_pose.x")
    assert schema.action_names == SO100_NAMES and schema.state_source == "env"
    robot = DatasetSchema.from_json({**old, "state_names": list(SO100_NAMES)})  # the real arm's schema
    assert robot.state_names == SO100_NAMES and robot.state_source == "robot"
    panda = DatasetSchema.from_json({**old, "control_mode": "pd_joint_pos", "robot_type": "panda",
                                     "state_names": ["panda_joint1.pos"], "action_names": ["panda_joint1.pos"]})
    assert panda.state_names == ("panda_joint1.qpos",) and panda.action_names == ("panda_joint1.qpos",)
    assert DatasetSchema.from_json(schema.to_json()) == schema  # this version's names stay


def test_replay_keeps_the_real_arms_schema_unless_asked(tmp_path):
    source = str(tmp_path / "so100")
    collect(CollectSettings(env_id="SO100Lift-v1", num_episodes=2, out=source, num_envs=2), progress=False)
    recorded = load_dataset(source)
    assert recorded.state_names == SO100_NAMES and recorded.schema.state_source == "robot"
    same = str(tmp_path / "same")
    summary = replay(ReplaySettings(source, same, obs_mode="rgb", num_envs=2,
                                    env_kwargs={"sensor_configs": {"width": 32, "height": 32}}), progress=False)
    assert summary["episodes"] == 2
    ds = load_dataset(same)
    assert ds.state_names == SO100_NAMES and ds.action_names == SO100_NAMES and ds.robot_type == "so_follower"
    assert ds.cameras == {"base_camera": (32, 32, 3), "wrist_camera": (32, 32, 3)}
    for a, b in zip(recorded, ds):  # degrees and 0..100 again: the gripper opens at 100, not 1.1 rad
        assert np.abs(a.observation_state.numpy() - b.observation_state.numpy()).max() < 0.25  # float32 targets
        assert np.array_equal(a.action.numpy(), b.action.numpy())
    assert ds[0].observation_state[0, 5] == pytest.approx(100.0, abs=0.01)
    env_schema = str(tmp_path / "env")
    replay(ReplaySettings(source, env_schema, num_envs=2, schema="env"), progress=False)
    ds = load_dataset(env_schema)
    assert ds.schema.state_source == "env" and len(ds.state_names) == 30 and ds.state_names[0] == "shoulder_pan.qpos"
    assert ds[0].observation_state[0, 5] == pytest.approx(1.1, abs=1e-3)  # the open gripper in radians
    assert ds.action_names == SO100_NAMES  # the actions stay the arm's joint targets in its units
