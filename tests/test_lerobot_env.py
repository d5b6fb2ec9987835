"""``simulo_envs.lerobot``: our tasks in LeRobot's env convention, without LeRobot installed (the
LeRobot classes themselves drive these envs in ``integrations/lerobot_env_simulo/tests``).

The values checked come from LeRobot 0.6.1's source: ``envs/utils.py: preprocess_observation``
(``pixels`` uint8 channel-last, ``agent_pos``), ``scripts/lerobot_eval.py: rollout``
(``info["final_info"]["is_success"]``, ``call("_max_episode_steps")[0]``, ``call("render")``),
and ``robots/so_follower``: degrees for the SO arm's joints (0 at the middle of the range, the
joint's zero here), 0-100 for the gripper (0 closed, -1.1 rad; 100 open, +1.1 rad).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

import simulo_envs.lerobot.make as lerobot_make
from simulo_envs.lerobot import NEW_ROLLOUT_OPTION, describe, make_env


@pytest.fixture(scope="module")
def so100():
    env = make_env("SO100Lift-v1", n_envs=2)
    yield env
    env.close()


def _follower_reading(qpos: torch.Tensor) -> np.ndarray:
    """LeRobot's SO follower reading of our qpos, written out: degrees, gripper 0-100."""
    q = qpos.numpy().astype(np.float64)
    return np.concatenate([np.degrees(q[:, :5]), 100.0 * (q[:, 5:] + 1.1) / 2.2], axis=1)


def test_observation_is_lerobots_pixels_and_agent_pos(so100):
    obs, info = so100.reset(seed=[0, 1])
    assert set(obs) == {"pixels", "agent_pos"}
    image = obs["pixels"]["base_camera"]
    assert image.dtype == np.uint8 and image.shape == (2, 128, 128, 3)
    assert image.std() > 5  # a picture, not a blank
    assert obs["agent_pos"].dtype == np.float32 and obs["agent_pos"].shape == (2, 6)
    np.testing.assert_allclose(obs["agent_pos"], _follower_reading(so100.base_env.agent.robot.state.qpos), atol=1e-3)
    assert obs["agent_pos"][0, 5] == pytest.approx(100.0, abs=1e-3)  # rest: gripper open
    assert set(obs["pixels"]) == {"base_camera", "wrist_camera"}  # the front view and the one on the jaw
    assert obs["pixels"]["wrist_camera"].shape == (2, 128, 128, 3) and obs["pixels"]["wrist_camera"].std() > 5
    assert info["is_success"].dtype == bool and info["is_success"].shape == (2,) and not info["is_success"].any()
    assert so100.single_observation_space.contains(
        {"agent_pos": obs["agent_pos"][0], "pixels": {k: v[0] for k, v in obs["pixels"].items()}})


def test_the_env_describes_itself_as_lerobot_reads_it(so100):
    assert so100.metadata["render_fps"] == 20
    assert so100.call("_max_episode_steps") == (80, 80)
    assert so100.call("task") == ("SO100Lift-v1", "SO100Lift-v1")
    so100.reset(seed=[0, 1])
    sentences = so100.call("task_description")  # each episode's own, naming the colour it drew
    assert sentences == tuple(so100.base_env.instructions()) and len(sentences) == 2
    assert all(re.fullmatch(r"Lift the (red|green|blue|yellow) cube\.", s) for s in sentences), sentences
    assert so100.get_attr("task_description") == sentences
    assert so100.task_description == "Lift a cube with LeRobot's SO-100 arm."  # the task's sentence
    assert so100.features == {"action": ("ACTION", (6,)), "agent_pos": ("STATE", (6,)),
                              "pixels/base_camera": ("VISUAL", (128, 128, 3)),
                              "pixels/wrist_camera": ("VISUAL", (128, 128, 3))}
    low, high = so100.single_action_space.low, so100.single_action_space.high
    assert low[5] == 0.0 and high[5] == 100.0  # the gripper's 0-100
    assert high[0] == pytest.approx(math.degrees(2.0), abs=1e-3)  # shoulder_pan limit, degrees


def test_actions_are_joint_targets_in_the_followers_units(so100):
    so100.reset(seed=[2, 3])
    target = np.array([[20, -10, 5, 80, 10, 50], [-15, 0, 10, 94, -5, 100]], np.float32)
    for _ in range(15):
        obs, reward, terminated, truncated, info = so100.step(target)
    assert reward.dtype == np.float32 and terminated.dtype == bool and truncated.dtype == bool
    np.testing.assert_allclose(obs["agent_pos"][:, :5], target[:, :5], atol=0.2)  # degrees (gravity sag)
    np.testing.assert_allclose(obs["agent_pos"][:, 5], target[:, 5], atol=1.0)


def test_success_is_in_info_every_step_and_in_final_info(so100):
    so100.reset(seed=[4, 5], options={NEW_ROLLOUT_OPTION: True})
    *_, info = so100.step(_rest(so100))
    assert "is_success" in info and "final_info" not in info
    cube = so100.base_env.cube
    pose = cube.state.pose.clone()
    pose[1, 2] += 0.10  # env 1's cube 10 cm up: lifted by more than the 5 cm the task asks for
    cube.set_pose(pose[1:2], env_ids=[1])
    obs, reward, terminated, truncated, info = so100.step(_rest(so100))
    assert terminated.tolist() == [False, True]
    assert info["final_info"]["is_success"].tolist() == [False, True]
    assert info["_final_info"].tolist() == [False, True]
    assert info["is_success"].tolist() == [False, False]  # env 1 already restarted (autoreset SAME_STEP)
    assert info["elapsed_steps"].tolist() == [2, 0]
    assert info["final_obs"]["agent_pos"].shape == (2, 6)


def _rest(env) -> np.ndarray:
    """Hold the arm where it is: its reading as the joint targets."""
    return _follower_reading(env.base_env.agent.robot.state.qpos).astype(np.float32)


def test_reset_takes_one_seed_per_env_and_lerobots_option(so100):
    first, _ = so100.reset(seed=[7, 8], options={NEW_ROLLOUT_OPTION: True})
    cubes = so100.base_env.cube.state.pose[:, :3] - so100.base_env.scene.env_origins
    again, _ = so100.reset(seed=[7, 8])
    np.testing.assert_array_equal(first["pixels"]["base_camera"], again["pixels"]["base_camera"])
    assert not torch.allclose(cubes[0], cubes[1])  # each env draws from its own seed


def test_render_gives_one_frame_per_env(so100):
    so100.reset(seed=0)
    frames = so100.call("render")
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.shape == (512, 512, 3) for f in frames)


def test_bad_actions_are_refused(so100):
    so100.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2, 6\)"):
        so100.step(np.zeros((2, 5), np.float32))
    with pytest.raises(ValueError, match="NaN"):
        so100.step(np.full((2, 6), np.nan, np.float32))


@pytest.mark.parametrize("kwargs, message", [
    (dict(task="SO100Lfit-v1"), r"unknown task 'SO100Lfit-v1' \(did you mean 'SO100Lift-v1'\?\)"),
    (dict(task="SO100Lift-v1", robot="panda"), r"robot='panda' for SO100Lift-v1: .*supports \['so100'\]"),
    (dict(task="SO100Lift-v1", robot="ur5"), r"unknown agent 'ur5'"),
    (dict(task="SO100Lift-v1", cameras="front=base_camra"), r"camera 'base_camra' \(did you mean 'base_camera'\?\)"),
    (dict(task="FrankaLift-v1", cameras=["wrist_camera"]),
     r"camera 'wrist_camera' .*: FrankaLift-v1 has the sensor cameras \['base_camera'\]"),
    (dict(task="SO101Lift-v1", cameras="front=base_camera,wrist=wrist"),
     r"camera 'wrist' \(did you mean 'wrist_camera'\?\): SO101Lift-v1 has the sensor cameras \['base_camera', 'wrist_camera'\]"),
    (dict(task="SO101PickPlace-v1", robot="so100"), r"robot='so100' for SO101PickPlace-v1: .*supports \['so101'\]"),
    (dict(task="SO100Lift-v1", fps=7), r"fps=7 for SO100Lift-v1: the physics runs at 120 Hz .* fps must divide 120 "
                                       r"\(e.g. \[5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60\]\)"),
    (dict(task="FrankaLift-v1", fps=30), r"fps=30 for FrankaLift-v1: the physics runs at 100 Hz .* fps must divide 100 "
                                         r"\(e.g. \[5, 10, 20, 25, 50\]\)"),
    (dict(task="SO100Lift-v1", fps=0), r"fps must be an int >= 1"),
    (dict(task="SO100Lift-v1", obs_type="pixels"), r"obs_type must be one of"),
    (dict(task="SO100Lift-v1", obs_type="agent_pos", cameras="base_camera"), r"no images"),
    (dict(task="FrankaLift-v1", control_mode="pd_joint_pos_lerobot"), r"the panda robot has"),
    (dict(task="SO100Lift-v1", n_envs=0), r"n_envs must be an int >= 1"),
    (dict(task="SO100Lift-v1", obs_mode="rgb"), r"sets \['obs_mode'\] itself"),
])
def test_bad_requests_are_refused_before_anything_is_built(monkeypatch, kwargs, message):
    built = []
    monkeypatch.setattr(lerobot_make, "make_vector_env", lambda *a, **k: built.append(a))
    with pytest.raises(ValueError, match=message):
        make_env(**kwargs)
    assert built == []


def test_a_robot_without_a_follower_gets_the_flat_state_and_the_tasks_actions():
    env = make_env("FrankaLift-v1", n_envs=2, obs_type="agent_pos")
    try:
        obs, _ = env.reset(seed=0)
        base = env.base_env
        raw = base.get_obs(unflattened=True)
        flat = torch.cat([v.reshape(2, -1).float() for part in ("agent", "extra") for v in raw[part].values()], 1)
        assert set(obs) == {"agent_pos"} and obs["agent_pos"].shape == (2, 36)
        np.testing.assert_allclose(obs["agent_pos"], flat.numpy(), atol=1e-6)
        assert base.control_mode == "pd_joint_delta_pos" and env.single_action_space.shape == (8,)
    finally:
        env.close()


@pytest.mark.parametrize("task, kwargs", [
    ("SO100PickPlace-v1", dict(cameras="front=base_camera", sensor_configs={"width": 96})),
    ("FrankaLift-v1", dict(control_mode="pd_ee_delta_pos", obs_type="agent_pos")),
])
def test_describe_says_what_make_env_builds(task, kwargs):
    expected = describe(task, **kwargs)
    env = make_env(task, n_envs=1, **kwargs)
    try:
        assert env.features == expected
    finally:
        env.close()
    assert ("pixels/front" in expected) == ("cameras" in kwargs)
    if "cameras" in kwargs:
        assert expected["pixels/front"] == ("VISUAL", (128, 96, 3))


def test_so101_at_lerobot_records_rate_in_its_followers_units():
    """SO101Lift-v1 at 30 Hz (``lerobot-record``'s rate): ``so101_follower``'s readings, degrees
    and the gripper 0-100 over its calibrated range (-10 deg closed to 100 deg open in
    ``so101_new_calib.urdf``), and joint-target actions in the same units."""
    env = make_env("SO101Lift-v1", n_envs=2, fps=30, cameras="front=base_camera,wrist=wrist_camera")
    try:
        assert env.metadata["render_fps"] == 30 and env.task_description == "Lift a cube with LeRobot's SO-101 arm."
        assert env.features == {"action": ("ACTION", (6,)), "agent_pos": ("STATE", (6,)),
                                "pixels/front": ("VISUAL", (128, 128, 3)), "pixels/wrist": ("VISUAL", (128, 128, 3))}
        obs, _ = env.reset(seed=[0, 1])
        q = env.base_env.agent.robot.state.qpos.numpy().astype(np.float64)
        closed, opened = math.radians(-10.0), math.radians(100.0)
        reading = np.concatenate([np.degrees(q[:, :5]), 100.0 * (q[:, 5:] - closed) / (opened - closed)], axis=1)
        np.testing.assert_allclose(obs["agent_pos"], reading, atol=1e-3)
        target = np.array([[10, -20, 15, 80, 5, 30]] * 2, np.float32)
        for _ in range(20):
            obs, *_ = env.step(target)
        np.testing.assert_allclose(obs["agent_pos"], target, atol=1.0)
    finally:
        env.close()
