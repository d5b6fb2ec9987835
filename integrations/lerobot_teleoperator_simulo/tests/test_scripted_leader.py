"""The scripted leader (``--teleop.type=simulo_scripted_leader``) with LeRobot 0.6.1's own
classes: found by LeRobot's factory, plays back an episode written by ``LeRobotDataset``."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from lerobot.datasets import LeRobotDataset  # noqa: E402
from lerobot.teleoperators.utils import make_teleoperator_from_config  # noqa: E402
from lerobot.utils.errors import DeviceNotConnectedError  # noqa: E402

from lerobot_teleoperator_simulo import ScriptedLeader, ScriptedLeaderConfig  # noqa: E402

NAMES = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]


@pytest.fixture(scope="module")
def two_episodes(tmp_path_factory) -> str:
    """Episode 0: frames t = 0, 1, 2 with action[j] = 10 t + j; episode 1: 2 frames of -1."""
    root = str(tmp_path_factory.mktemp("leader") / "dataset")
    dataset = LeRobotDataset.create("local/leader", 30, root=root, use_videos=False,
                                    features={"action": {"dtype": "float32", "shape": (6,), "names": NAMES}})
    for t in range(3):
        dataset.add_frame({"action": (10 * t + np.arange(6)).astype(np.float32), "task": "wave"})
    dataset.save_episode()
    for _ in range(2):
        dataset.add_frame({"action": -np.ones(6, np.float32), "task": "wave"})
    dataset.save_episode()
    dataset.finalize()
    return root


def test_lerobots_factory_makes_it_and_it_plays_the_episode_then_holds(two_episodes):
    leader = make_teleoperator_from_config(ScriptedLeaderConfig(dataset_root=two_episodes))
    assert isinstance(leader, ScriptedLeader) and leader.action_features == dict.fromkeys(NAMES, float)
    with pytest.raises(DeviceNotConnectedError):
        leader.get_action()
    leader.connect()
    played = [leader.get_action() for _ in range(5)]
    assert [a["shoulder_pan.pos"] for a in played] == [0.0, 10.0, 20.0, 20.0, 20.0]
    assert played[1] == {name: 10.0 + j for j, name in enumerate(NAMES)}
    leader.disconnect()


def test_it_loops_and_plays_any_episode(two_episodes):
    leader = ScriptedLeader(ScriptedLeaderConfig(dataset_root=two_episodes, at_end="loop"))
    leader.connect()
    assert [leader.get_action()["gripper.pos"] for _ in range(4)] == [5.0, 15.0, 25.0, 5.0]
    second = ScriptedLeader(ScriptedLeaderConfig(dataset_root=two_episodes, episode=1))
    second.connect()
    assert second.get_action() == dict.fromkeys(NAMES, -1.0)


def test_bad_settings_are_refused(two_episodes):
    with pytest.raises(ValueError, match="episode 2: .* holds episodes 0..1"):
        ScriptedLeader(ScriptedLeaderConfig(dataset_root=two_episodes, episode=2))
    with pytest.raises(ValueError, match="at_end must be one of"):
        ScriptedLeaderConfig(dataset_root=two_episodes, at_end="stop")
