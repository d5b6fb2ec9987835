"""The Panda with a hand camera (``robot_uids="panda_wristcam"``, agents/panda.py): where the camera
rides, and that the arm is the Panda's otherwise."""

from __future__ import annotations

import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents.panda import HAND_CAMERA
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.geometry import quat_axis

pytestmark = pytest.mark.usefixtures("one_torch_thread")

HAND_TO_TCP = 0.1034
"""``panda_hand_tcp`` sits this far along ``panda_hand``'s +z [m], in the same orientation (agents/panda.py)."""


def _arm_motion(n: int) -> torch.Tensor:
    action = torch.zeros(n, 8)
    action[:, 0], action[:, 3], action[:, 7] = 0.8, 0.6, -1.0   # turn the base, bend the elbow, close
    return action


def test_the_hand_camera_rides_on_the_hand_and_looks_past_the_fingertips():
    env = REGISTERED["FrankaLift-v1"](num_envs=1, obs_mode="rgb", robot_uids="panda_wristcam",
                                      sensor_configs={"width": 16, "height": 16})
    try:
        obs, _ = env.reset(seed=3)
        assert set(obs["sensor_data"]) == {"base_camera", "hand_camera"}
        assert obs["sensor_data"]["hand_camera"]["rgb"].shape == (1, 16, 16, 3)
        eyes = []
        for _ in range(2):
            tcp = env.agent.tcp_pose[0].double()
            rotation = torch.stack([quat_axis(tcp[None, 3:7], axis)[0] for axis in range(3)], dim=1)
            in_hand = torch.tensor(HAND_CAMERA.pose.position, dtype=torch.float64) - torch.tensor([0.0, 0.0, HAND_TO_TCP])
            cam2world = env.get_sensor_params()["hand_camera"]["cam2world_gl"][0].double()
            eye = cam2world[:3, 3]
            # the pose in panda_hand: (0.0465, -0.02, 0.036) m, looking along the hand's +z (OpenGL: -z forward)
            assert torch.allclose(eye, tcp[:3] + rotation @ in_hand, atol=1e-4)
            assert torch.allclose(-cam2world[:3, 2], rotation[:, 2], atol=1e-4)
            assert torch.allclose(cam2world[:3, 1], rotation[:, 0], atol=1e-4)   # image up: the hand's +x
            eyes.append(eye)
            for _ in range(3):
                obs, *_ = env.step(_arm_motion(1))
        assert (eyes[1] - eyes[0]).norm() > 0.02   # it moved with the hand
    finally:
        env.close()


def test_the_arm_with_the_hand_camera_moves_as_the_panda():
    """No body was added: the same seed and actions give the same state, bit for bit."""
    states = []
    for robot in ("panda", "panda_wristcam"):
        env = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="state", robot_uids=robot)
        try:
            env.reset(seed=7)
            for _ in range(4):
                obs, *_ = env.step(_arm_motion(2))
            states.append(obs)
        finally:
            env.close()
    assert torch.equal(states[0], states[1])
    assert states[0].shape == (2, 36)


def test_a_robot_the_task_does_not_support_is_refused():
    with pytest.raises(ValueError, match=r"FrankaLiftEnv supports \['panda', 'panda_wristcam'\]"):
        REGISTERED["FrankaLift-v1"](num_envs=1, robot_uids="so100")
