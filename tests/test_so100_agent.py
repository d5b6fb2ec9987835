"""The SO-100 agent (``agents/so100.py``): asset, rest pose, TCP, control modes, grasp test,
LeRobot units, and the bad input it refuses."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents import REGISTERED_AGENTS, SO100
from simulo_envs.agents import so100
from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.geometry import quat_axis
from simulo_envs.prop import Prop

CUBE = 0.025


class _CubeEnv(BaseEnv):
    """The SO-100 and a 25 mm cube 0.265 m in front of it (the test's own scene)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
    default_control_mode = "pd_joint_pos"

    def _load_scene(self, options: dict) -> None:
        self.scene.add_ground()
        self.cube = self.scene.add(Prop(Cuboid("Cube", (CUBE,) * 3, Pose([0.265, 0.0, CUBE / 2]),
                                               Physics.rigid(mass=0.01), Material())), at="/World/Cube")

    def _initialize_episode(self, env_idx, options: dict) -> None:
        self.cube.set_pose(self.cube.default_pose[env_idx], env_ids=env_idx)
        self.cube.set_velocity(torch.zeros(len(env_idx), 6), env_ids=env_idx)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        return {"success": torch.zeros(self.num_envs, dtype=torch.bool),
                "is_grasped": self.agent.is_grasping(self.cube)}


def make(control_mode="pd_joint_pos", num_envs=1, **kwargs):
    return _CubeEnv(num_envs=num_envs, control_mode=control_mode, reward_mode="none", **kwargs)


def tcp_local(env):
    return env.agent.tcp_pose[:, :3] - env._env_origins


def test_the_asset_loads_with_lerobots_joint_names_and_registers():
    assert REGISTERED_AGENTS["so100"] is SO100
    env = make()
    robot = env.agent.robot
    assert robot.joint_names == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    assert torch.allclose(robot.qlimits[:, 1], torch.tensor([2.0, 1.5708, 1.5708, 1.8, 3.14159, 1.1]))
    assert set(SO100.supported_control_modes) == {"pd_joint_delta_pos", "pd_joint_pos", "pd_joint_pos_lerobot",
                                                  "pd_ee_delta_pos", "pd_ee_pose"}
    env.close()


def test_rest_pose_puts_the_tcp_above_the_workspace_pointing_down():
    env = make(num_envs=2)
    env.reset(seed=0)
    assert torch.allclose(env.agent.robot.state.qpos, torch.tensor([so100.REST_QPOS] * 2), atol=1e-5)
    assert torch.allclose(tcp_local(env), torch.tensor([[0.23, 0.0, 0.09]] * 2), atol=2e-3)
    approach = -quat_axis(env.agent.tcp_pose[:, 3:], 1)  # the jaw points along the TCP frame's -y
    assert torch.allclose(approach, torch.tensor([[0.0, 0.0, -1.0]] * 2), atol=0.01)
    env.close()


def test_the_tcp_is_fixed_to_the_fixed_jaw_whatever_the_gripper_does():
    env = make()
    env.reset(seed=0)
    robot = env.agent.robot
    for gripper in (so100.GRIPPER_OPEN, 0.0, so100.GRIPPER_CLOSED):
        q = torch.tensor([so100.REST_QPOS])
        q[0, 5] = gripper
        robot.set_qpos(q)
        assert torch.allclose(tcp_local(env)[0], torch.tensor([0.23, 0.0, 0.09]), atol=2e-3)
    # 100 mm down the jaw: 3 mm past the fixed jaw's tip link along the approach, 22 mm beside it
    tip = robot.state.link_pose("Fixed_Jaw_tip")[0, :3] - env._env_origins[0]
    assert torch.allclose(tcp_local(env)[0] - tip, torch.tensor([0.022, 0.0, -0.003]), atol=1e-3)
    env.close()


@pytest.mark.parametrize("backend", ["physx_cpu", "physx_cuda_emulated"])
def test_tcp_jacobian_matches_finite_differences(backend):
    env = make(sim_backend=backend)
    env.reset(seed=0)
    robot = env.agent.robot
    q0 = torch.tensor([[0.3, 0.1, 0.2, 1.2, 0.4, 0.0]])
    robot.set_qpos(q0)
    jacobian = robot.tcp_jacobian()[0]
    eps = 1e-3
    for j in range(6):
        qp, qm = q0.clone(), q0.clone()
        qp[0, j] += eps
        qm[0, j] -= eps
        robot.set_qpos(qp)
        pp = env.agent.tcp_pose[0].clone()
        robot.set_qpos(qm)
        pm = env.agent.tcp_pose[0].clone()
        assert torch.allclose((pp[:3] - pm[:3]) / (2 * eps), jacobian[:3, j], atol=2e-3), j
    assert jacobian[:3, 5].abs().max() < 1e-6  # the gripper does not move the TCP
    env.close()


def test_action_spaces_of_every_control_mode():
    shapes = {"pd_joint_delta_pos": 6, "pd_joint_pos": 6, "pd_joint_pos_lerobot": 6, "pd_ee_delta_pos": 4,
              "pd_ee_pose": 7}
    for mode, dim in shapes.items():
        env = make(mode)
        space = env.single_action_space
        assert space.shape == (dim,), mode
        if mode == "pd_joint_pos_lerobot":  # degrees, then the gripper in 0..100
            assert np.allclose(space.high, [114.59, 90.0, 90.0, 103.13, 180.0, 100.0], atol=0.01)
            assert np.allclose(space.low, [-114.59, -90.0, -90.0, -103.13, -180.0, 0.0], atol=0.01)
        env.close()


def test_pd_joint_pos_tracks_and_clips_targets_to_the_joint_limits():
    env = make("pd_joint_pos")
    env.reset(seed=0)
    target = torch.tensor([[0.4, -0.3, 0.5, 1.0, -0.5, 0.0]])
    for _ in range(15):  # the gripper's drive is overdamped (d / k = 0.1 s): 1.1 rad closes in ~0.6 s
        env.step(target)
    assert torch.allclose(env.agent.robot.state.qpos, target, atol=0.01)
    env.step(torch.tensor([[9.0, -9.0, 9.0, 9.0, -9.0, 9.0]]))  # far outside the limits
    assert torch.allclose(env.agent.robot.state.drive_targets,
                          torch.tensor([[2.0, -1.5708, 1.5708, 1.8, -3.14159, 1.1]]), atol=1e-5)
    env.close()


def test_lerobot_and_delta_targets_outside_the_joint_limits_are_clipped_to_them():
    env = make("pd_joint_pos_lerobot")
    env.reset(seed=0)
    env.step(torch.tensor([[500.0, -500.0, 500.0, -500.0, 500.0, 300.0]]))  # degrees, gripper percent
    assert torch.allclose(env.agent.robot.state.drive_targets,
                          torch.tensor([[2.0, -1.5708, 1.5708, -1.8, 3.14159, 1.1]]), atol=1e-5)
    env.close()
    env = make("pd_joint_delta_pos")
    env.reset(seed=0)
    for _ in range(50):  # 50 x 0.05 rad: far past shoulder_lift's limit
        env.step(torch.tensor([[0.0, -1.0, 0.0, 0.0, 0.0, 1.0]]))
    assert env.agent.robot.state.drive_targets[0, 1].item() == pytest.approx(-1.5708, abs=1e-5)
    env.close()


def test_pd_joint_delta_pos_moves_at_most_its_bound_per_step():
    env = make("pd_joint_delta_pos")
    env.reset(seed=0)
    before = env.agent.robot.state.qpos
    env.step(torch.tensor([[1.0, -1.0, 1.0, 0.0, 1.0, 1.0]]))
    moved = env.agent.robot.state.qpos - before
    assert torch.allclose(moved[0, :5], torch.tensor([0.05, -0.05, 0.05, 0.0, 0.05]), atol=0.003)
    env.close()


def test_pd_joint_pos_lerobot_takes_degrees_and_gripper_percent():
    env = make("pd_joint_pos_lerobot")
    env.reset(seed=0)
    action = torch.tensor([[20.0, -10.0, 30.0, 60.0, -45.0, 25.0]])
    for _ in range(20):
        env.step(action)
    expected = torch.tensor([[math.radians(20), math.radians(-10), math.radians(30), math.radians(60),
                              math.radians(-45), -1.1 + 0.25 * 2.2]])
    assert torch.allclose(env.agent.robot.state.drive_targets, expected, atol=1e-5)
    assert torch.allclose(env.agent.robot.state.qpos, expected, atol=0.01)
    # the recorded units of the real arm come back from our joint angles
    assert torch.allclose(env.agent.lerobot_from_qpos(expected), action, atol=1e-3)
    assert torch.allclose(env.agent.qpos_from_lerobot(action), expected, atol=1e-6)
    env.close()


def test_lerobot_names_units_and_rest_values():
    spec = SO100.lerobot
    assert spec.robot_type == "so_follower"
    assert spec.names == ("shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos",
                          "wrist_roll.pos", "gripper.pos")
    env = make()
    env.reset(seed=0)
    values = env.agent.lerobot_from_qpos(env.agent.robot.state.qpos)
    assert torch.allclose(values, torch.tensor([[0.0, -9.969, 5.615, 94.366, 0.0, 100.0]]), atol=0.01)
    closed = env.agent.lerobot_from_qpos(torch.tensor([[0.0, 0.0, 0.0, 0.0, 0.0, so100.GRIPPER_CLOSED]]))
    assert closed[0, 5].item() == pytest.approx(0.0, abs=1e-4)
    env.close()


def _drive_tcp(env, goal, gripper, steps):
    infos = []
    for _ in range(steps):
        action = torch.zeros(env.num_envs, 4)
        action[:, :3] = torch.clamp(0.6 * (goal - tcp_local(env)) / 0.025, -1, 1)
        action[:, 3] = gripper
        infos.append(env.step(action)[4])
    return infos


def test_pd_ee_delta_pos_reaches_positions_with_the_orientation_free():
    env = make("pd_ee_delta_pos")
    env.reset(seed=0)
    env.step(torch.tensor([[1.0, 0.0, 0.0, 1.0]]))  # one full step: at most 0.025 m along +x
    assert 0.015 < tcp_local(env)[0, 0].item() - 0.23 <= 0.026
    goal = torch.tensor([[0.28, 0.06, 0.05]])
    _drive_tcp(env, goal, 1.0, 30)
    assert (tcp_local(env) - goal).norm() < 2e-3
    tilt = math.degrees(math.acos(quat_axis(env.agent.tcp_pose[:, 3:], 1)[0, 2].item()))  # approach = -y
    assert 2 < tilt < 15  # not held: the jaw tilts as the arm moves, within the workspace's range
    env.close()


def test_pd_ee_pose_reaches_a_reachable_pose():
    env = make("pd_ee_pose")
    env.reset(seed=0)
    robot = env.agent.robot
    q = torch.tensor([[0.3, 0.0, 0.3, 1.1, 0.5, 1.1]])  # a pose the arm can take, TCP 4 cm above the floor
    robot.set_qpos(q)
    goal = env.agent.tcp_pose.clone()
    env.reset(seed=0)
    from simulo_envs.geometry import quat_to_rotvec
    action = torch.cat([goal[:, :3] - env._env_origins, quat_to_rotvec(goal[:, 3:])], 1)
    for _ in range(40):
        env.step(torch.cat([action, torch.ones(1, 1)], 1))
    tcp = env.agent.tcp_pose
    assert (tcp[:, :3] - goal[:, :3]).norm() < 3e-3
    assert abs(float((tcp[:, 3:] * goal[:, 3:]).sum().abs()) - 1.0) < 1e-3  # same orientation
    env.close()


def test_grasp_detection_from_jaw_contacts():
    env = make("pd_ee_delta_pos", num_envs=2)
    env.reset(seed=0)
    cube = env.cube.state.pose
    cube[1, 1] += 0.2  # env 1: nothing between the jaws
    env.cube.set_pose(cube)
    over = torch.tensor([[0.265, 0.0, 0.05], [0.265, 0.0, 0.05]])
    _drive_tcp(env, over, 1.0, 10)
    at = over.clone()
    at[:, 2] = CUBE / 2
    infos = _drive_tcp(env, at, 1.0, 15)
    assert not infos[-1]["is_grasped"].any()  # open jaws around the cube: no grasp
    infos = _drive_tcp(env, at, -1.0, 12)
    assert infos[-1]["is_grasped"].tolist() == [True, False]  # env 1 closed on air
    assert env.agent.robot.state.qpos[1, 5] < so100.GRIPPER_CLOSED + 0.05
    infos = _drive_tcp(env, over, -1.0, 15)
    assert infos[-1]["is_grasped"].tolist() == [True, False]
    held = env.cube.state.pose[0, :3]
    assert held[2] > 0.04  # held up, its centre at the TCP
    assert (held - env.agent.tcp_pose[0, :3]).norm() < 0.01  # pushed against the fixed jaw, 7.4 mm off
    env.close()



def test_open_jaws_pressing_on_the_cube_are_not_a_grasp():
    """Both jaws wide open (gripper at 0.98 rad) resting on the cube's top face: each feels its
    force inside its 85 deg cone, but the forces point the same way (about 20 deg apart), so
    nothing is squeezed. A random policy reached this state in SO100Lift-v1."""
    env = make("pd_joint_pos")
    env.reset(seed=0)
    qpos = torch.tensor([[0.0, 0.735, -0.172, 1.742, -0.1, 0.975]])
    env.agent.reset(qpos=qpos)
    pose = env.cube.state.pose
    pose[0, :3] = torch.tensor([0.258, 0.0, CUBE / 2]) + env._env_origins[0]
    env.cube.set_pose(pose)
    target = qpos.clone()
    target[0, 5] = 0.975 / so100.GRIPPER_OPEN  # the gripper action is normalised
    for _ in range(10):
        _, _, _, _, info = env.step(target)
    forces = env.agent.robot.contact_forces([so100.FIXED_JAW, so100.MOVING_JAW], env.cube)[0]
    assert forces.norm(dim=1).min() > 0.5  # both jaws press on the cube...
    assert forces[:, 2].min() > 0.5  # ...from above: the cube pushes both up
    assert env.agent.is_grasping(env.cube, min_opposition=0.0).tolist() == [True]  # each inside its cone
    assert info["is_grasped"].tolist() == [False]
    assert env.agent.robot.state.qpos[0, 5] > 0.9  # still wide open
    env.close()


# ---------------------------------------------------------------- bad input
def test_unknown_robot_uid_lists_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown agent 'so102'.*'panda'.*'so100'.*'so101'"):
        gym.make("FrankaLift-v1", robot_uids="so102")


def test_a_task_refuses_a_robot_it_does_not_support():
    with pytest.raises(ValueError, match=r"FrankaLiftEnv supports \['panda', 'panda_wristcam'\]"):
        gym.make("FrankaLift-v1", robot_uids="so100")
    with pytest.raises(ValueError, match=r"supports \['so100'\]"):
        _CubeEnv(num_envs=1, robot_uids="panda")


def test_unknown_control_mode_lists_the_so100_modes():
    with pytest.raises(ValueError, match=r"pd_ee_delta_pose.*pd_joint_pos_lerobot"):
        make("pd_ee_delta_pose")


@pytest.mark.parametrize("mode", ["pd_joint_pos", "pd_joint_delta_pos", "pd_joint_pos_lerobot"])
def test_the_fused_joint_map_equals_each_controllers_own_targets(mode):
    env = make(mode, num_envs=3)
    env.reset(seed=0)
    controller = env.agent.controller
    space = env.single_action_space
    generator = torch.Generator().manual_seed(0)
    low, high = torch.from_numpy(space.low), torch.from_numpy(space.high)
    action = low + (high - low) * torch.rand(3, 6, generator=generator)
    qpos = env.agent.robot.state.qpos
    fused = controller.compute_targets(action, qpos)
    reference = torch.cat([ctrl.targets(action[:, a:b], qpos) for (a, b), ctrl in
                           zip(controller.slices.values(), controller.controllers.values())], 1)
    assert torch.allclose(fused, reference, atol=1e-5)
    env.close()
