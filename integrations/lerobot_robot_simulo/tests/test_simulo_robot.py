"""The simulated SO followers through LeRobot 0.6.1's own classes, in this process: plugin
discovery, the features of LeRobot's real SO-101 follower and leader, the cameras of the config,
``max_relative_target`` as LeRobot clips it, bad input, and the episodes that LeRobot's recording
loops announce."""

from __future__ import annotations

import importlib.metadata
import math
import re

import numpy as np
import pytest
from lerobot.datasets import LeRobotDataset
from lerobot.processor import make_default_processors
from lerobot.robots.so_follower import SO101Follower, SOFollowerRobotConfig
from lerobot.robots.utils import ensure_safe_goal_position, make_robot_from_config
from lerobot.scripts.lerobot_teleoperate import teleop_loop
from lerobot.teleoperators.so_leader import SO101Leader, SOLeaderTeleopConfig
from lerobot.utils.utils import log_say

from lerobot_robot_simulo import SimuloCameraConfig, SimuloSO100FollowerConfig, SimuloSO101Follower, SimuloSO101FollowerConfig
from lerobot_teleoperator_simulo import ScriptedLeader, ScriptedLeaderConfig
from plugin_discovery import fresh_process_choices
from simulo_envs.lerobot import tasks_for_robot

JOINTS = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]


@pytest.fixture(scope="module")
def robot():
    """A connected simulated SO-101 follower without cameras, in lockstep."""
    follower = make_robot_from_config(SimuloSO101FollowerConfig(cameras={}, real_time=False, seed=40))
    follower.connect()
    yield follower
    follower.disconnect()


def _present(robot) -> dict:
    return {k: v for k, v in robot.get_observation().items() if k.endswith(".pos")}


def test_lerobot_finds_the_robot_types_by_the_distribution_name():
    assert importlib.metadata.distribution("lerobot_robot_simulo").metadata["Name"] == "lerobot_robot_simulo"
    choices = fresh_process_choices()   # a new process: nothing of ours imported before LeRobot looks
    assert "simulo_so101_follower" not in choices["before"]["robot"]
    assert "simulo_scripted_leader" not in choices["before"]["teleoperator"]
    assert [choices["after"]["robot"][name][1] for name in ("simulo_so101_follower", "simulo_so100_follower")] == [
        "SimuloSO101FollowerConfig", "SimuloSO100FollowerConfig"]
    assert choices["after"]["teleoperator"]["simulo_scripted_leader"][1] == "ScriptedLeaderConfig"
    assert type(make_robot_from_config(SimuloSO100FollowerConfig(cameras={}))).__name__ == "SimuloSO100Follower"


def test_features_are_the_real_so101_followers_and_its_leader_maps_one_to_one(robot):
    real = SO101Follower(SOFollowerRobotConfig(port="/dev/null"))
    assert robot.observation_features == real.observation_features == dict.fromkeys(JOINTS, float)
    assert robot.action_features == real.action_features
    assert robot.name == real.name == "so_follower"  # the robot_type a recording gets
    leader = SO101Leader(SOLeaderTeleopConfig(port="/dev/null"))
    assert leader.action_features == robot.action_features  # a real leader's actions are this robot's


def test_the_units_are_degrees_and_gripper_0_to_100(robot):
    robot.reset(seed=40)
    obs = robot.get_observation()
    qpos = robot.sim.env.agent.robot.state.qpos[0].numpy().astype(np.float64)
    assert [obs[k] for k in JOINTS[:5]] == pytest.approx([math.degrees(q) for q in qpos[:5]], abs=1e-3)
    assert obs["gripper.pos"] == pytest.approx(100.0, abs=1e-3)  # the rest pose: the jaw wide open


def test_cameras_come_from_the_config_as_a_real_followers_dict():
    small = SimuloSO101FollowerConfig(cameras={"front": SimuloCameraConfig(camera="base_camera", width=64, height=48),
                                               "wrist_camera": SimuloCameraConfig()})
    assert small.cameras["wrist_camera"].width == 128 and small.cameras["front"].fps == 30  # filled in
    robot = make_robot_from_config(small)
    assert robot.observation_features["front"] == (48, 64, 3)
    assert robot.observation_features["wrist_camera"] == (128, 128, 3)
    assert list(robot.cameras) == ["front", "wrist_camera"] and robot.cameras["front"].width == 64
    default = make_robot_from_config(SimuloSO101FollowerConfig())
    assert {k: v for k, v in default.observation_features.items() if k not in JOINTS} == {
        "base_camera": (128, 128, 3), "wrist_camera": (128, 128, 3)}
    with pytest.raises(ValueError, match="camera 'side'"):
        SimuloSO101FollowerConfig(cameras={"front": SimuloCameraConfig(camera="side")})
    from lerobot.cameras.opencv import OpenCVCameraConfig

    with pytest.raises(ValueError, match="cameras are of type 'simulo'"):
        SimuloSO101FollowerConfig(cameras={"front": OpenCVCameraConfig(index_or_path=0, width=640, height=480, fps=30)})


def test_a_task_the_robot_does_not_support_is_refused_naming_those_it_does():
    so101_tasks = tasks_for_robot("so101")
    assert {"SO101Lift-v1", "SO101PickPlace-v1"} <= set(so101_tasks)
    assert all(task.startswith("SO101") for task in so101_tasks)
    with pytest.raises(ValueError, match=r"supports \['so100'\]; the tasks with the so101 arm: "
                                         + re.escape(str(so101_tasks))):
        SimuloSO101FollowerConfig(task="SO100Lift-v1")
    with pytest.raises(ValueError, match="the tasks with the so100 arm"):
        SimuloSO100FollowerConfig(task="SO101PickPlace-v1")


def test_max_relative_target_caps_each_joint_as_the_real_follower(robot):
    robot.config.max_relative_target = 5.0
    try:
        robot.reset(seed=40)
        present = _present(robot)
        goal = {k: v + (40.0 if i % 2 else -40.0) for i, (k, v) in enumerate(present.items())}
        sent = robot.send_action(goal)
        expected = ensure_safe_goal_position({k.removesuffix(".pos"): (goal[k], present[k]) for k in goal}, 5.0)
        assert sent == pytest.approx({f"{k}.pos": min(v, 100.0) for k, v in expected.items()}, abs=1e-4)
        assert sent["shoulder_pan.pos"] == pytest.approx(present["shoulder_pan.pos"] - 5.0, abs=1e-4)
        robot.config.max_relative_target = {"shoulder_pan": 1.0, "shoulder_lift": 2.0, "elbow_flex": 3.0,
                                            "wrist_flex": 2.0, "wrist_roll": 5.0, "gripper": 6.0}
        present = _present(robot)
        sent = robot.send_action({k: v + 50.0 for k, v in present.items()})
        steps = [sent[k] - present[k] for k in JOINTS]
        assert steps[:5] == pytest.approx([1.0, 2.0, 3.0, 2.0, 5.0], abs=1e-4)  # wrist_flex stays 1.5 deg inside its limit
    finally:
        robot.config.max_relative_target = None


def test_targets_outside_the_joint_limits_are_clipped_to_them(robot):
    robot.reset(seed=40)
    goal = dict(_present(robot), **{"elbow_flex.pos": 720.0, "gripper.pos": 130.0})
    sent = robot.send_action(goal)
    low, high = robot.sim.joint_limits["elbow_flex.pos"]
    assert sent["elbow_flex.pos"] == pytest.approx(high, abs=1e-4) and high == pytest.approx(96.83, abs=0.01)
    assert sent["gripper.pos"] == pytest.approx(100.0, abs=1e-4)


def test_a_leader_whose_keys_do_not_match_is_refused_and_the_arm_does_not_move(robot, tmp_path):
    keys = [f"joint_{i}.pos" for i in range(1, 7)]  # another arm's leader
    dataset = LeRobotDataset.create("local/other_leader", 30, root=str(tmp_path / "other"), use_videos=False,
                                    features={"action": {"dtype": "float32", "shape": (6,), "names": keys}})
    for _ in range(3):
        dataset.add_frame({"action": np.zeros(6, np.float32), "task": "wave"})
    dataset.save_episode()
    dataset.finalize()
    leader = ScriptedLeader(ScriptedLeaderConfig(dataset_root=str(tmp_path / "other")))
    leader.connect()
    robot.reset(seed=40)
    before = robot.sim.joint_vector()
    with pytest.raises(ValueError) as caught:
        teleop_loop(leader, robot, 30, *make_default_processors(), duration=1.0)
    message = str(caught.value)
    assert "missing ['shoulder_pan.pos'" in message and "unexpected ['joint_1.pos'" in message
    assert np.array_equal(robot.sim.joint_vector(), before)


@pytest.mark.parametrize("bad, error", [({**dict.fromkeys(JOINTS, 0.0), "gripper.pos": float("inf")}, ValueError),
                                        ({**dict.fromkeys(JOINTS, 0.0), "gripper.vel": 1.0}, ValueError)])
def test_a_bad_action_moves_nothing(robot, bad, error):
    robot.reset(seed=40)
    before = robot.sim.joint_vector()
    with pytest.raises(error):
        robot.send_action(bad)
    robot.get_observation()
    assert np.array_equal(robot.sim.joint_vector(), before)


def test_the_recording_loops_announcements_start_and_close_episodes(robot, lerobot_logging):
    """The sentences ``lerobot-record`` says (``log_say``): each episode starts on a fresh scene,
    the reset phase shows the next one, a re-recorded episode keeps its index."""
    robot.reset(seed=40)
    robot.outcomes.clear()
    robot._fresh = True  # as after connect
    first = robot.sim.seed

    def run(steps=3):
        for _ in range(steps):
            robot.send_action(_present(robot))

    log_say("Recording episode 0", play_sounds=False)
    run()
    assert robot.sim.seed == first  # the fresh scene of connect: no second reset
    log_say("Reset the environment", play_sounds=False)
    run(1)
    assert robot.sim.seed == first + 1 and robot.outcomes == {0: {"seed": first, "success": False}}
    log_say("Recording episode 1", play_sounds=False)
    run()
    assert robot.sim.seed == first + 1  # reset at the reset phase's start, not again
    log_say("Reset the environment", play_sounds=False)
    log_say("Re-record episode", play_sounds=False)
    log_say("Recording episode 1", play_sounds=False)
    run()
    log_say("Recording episode 2", play_sounds=False)  # no reset phase (reset_time_s=0): reset here
    run()
    assert robot.sim.seed == first + 3
    assert robot.outcomes == {0: {"seed": first, "success": False}, 1: {"seed": first + 2, "success": False}}
