"""Every task's cameras show what the task is about at reset: its objects cover a minimum of
pixels of the sensor camera's segmentation image, and the ``render()`` camera frames them whole
(seen, and touching no image border)."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.robot import Robot

TASKS = sorted(env_id for env_id, cls in REGISTERED.items() if cls.__module__.startswith("simulo_envs.tasks."))
MIN_PIXELS = 20
"""Pixels (of 128 x 128) each task object must cover: a 4 cm cube at the workspace's centre covers
about 50 in the default sensor view, 20 when the gripper hides part of it."""


def task_object_masks(env, segmentation: torch.Tensor) -> dict[str, torch.Tensor]:
    """``{name: bool (N, H, W)}`` for every segmentation entry that is neither the ground, a robot
    link nor a prop hidden from the sensors (a goal marker): the task's objects, each link of an
    articulated object on its own."""
    base = env.unwrapped
    robots = [path for path, obj in base.scene.objects.items() if isinstance(obj, Robot)]
    hidden = {prop.path for prop in base._hidden_objects}
    masks = {}
    for seg_id, name in base.segmentation_id_map.items():
        if name == "ground" or name in hidden or any(name.startswith(robot + ":") for robot in robots):
            continue
        masks[name] = segmentation[..., 0] == seg_id
    return masks


@pytest.mark.parametrize("env_id", TASKS)
def test_the_sensor_camera_sees_the_task_objects_at_reset(env_id):
    env = gym.make(env_id, num_envs=2, obs_mode="segmentation")
    try:
        obs, _ = env.reset(seed=0)
        # One naming style: a prim path ("/World/Block", "/World/Cabinet:drawer") or "ground".
        names = list(env.unwrapped.segmentation_id_map.values())
        assert all(isinstance(n, str) and (n == "ground" or n.startswith("/World/")) for n in names), names
        masks = task_object_masks(env, obs["sensor_data"]["base_camera"]["segmentation"])
        assert masks, f"{env_id} has no object of its own in the segmentation map"
        for name, mask in masks.items():
            pixels = mask.flatten(1).sum(1).tolist()
            assert min(pixels) >= MIN_PIXELS, f"{env_id}: {name} covers {pixels} pixels of the sensor image"
    finally:
        env.close()


@pytest.mark.parametrize("env_id", TASKS)
def test_the_render_camera_frames_the_task_objects_whole(env_id):
    # The render camera's view, taken by a segmentation sensor placed where it is.
    render = REGISTERED[env_id]._default_human_render_camera_configs.fget(REGISTERED[env_id])[0]
    env = gym.make(env_id, num_envs=2, obs_mode="segmentation",
                   sensor_configs={"pose": render.pose, "fov": render.fov, "width": 128, "height": 128})
    try:
        obs, _ = env.reset(seed=0)
        for name, mask in task_object_masks(env, obs["sensor_data"]["base_camera"]["segmentation"]).items():
            assert mask.flatten(1).sum(1).min() >= MIN_PIXELS, f"{env_id}: {name} is not in the render view"
            border = mask[:, 0].any() | mask[:, -1].any() | mask[:, :, 0].any() | mask[:, :, -1].any()
            assert not border, f"{env_id}: {name} is cut by the render view's border"
    finally:
        env.close()
