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
    env = gym.make(env_id, num_envs=2, obs_mode="rgb+segmentation")
    try:
        obs, _ = env.reset(seed=0)
        frames_the_robot_and_shows_objects_against_the_floor(env_id, env, obs)
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


MIN_ROBOT_SHARE = 0.05
"""Share of the sensor image the robot must cover at reset: the arm is framed, not cut off (the
SO arms cover about 9 %, the Panda 8-17 %)."""
MIN_CONTRAST = 20.0
"""Median over an object's (or the robot's) pixels of their RGB distance [0-255 levels] from the
floor's mean colour in the sensor image: half its pixels stand out at least this much."""
ROBOT_CONTRAST_TASKS = {"SO100Lift-v1", "SO100PickPlace-v1", "SO101Lift-v1", "SO101PickPlace-v1"}
"""Tasks whose robot is held to ``MIN_CONTRAST`` too. The Panda's white links render within
about 6 levels of the default grey floor (median); a darker floor for the Panda tasks would
change the images their committed image policies were trained on."""


def frames_the_robot_and_shows_objects_against_the_floor(env_id, env, obs) -> None:
    """The task's own sensor camera at reset: the robot covers ``MIN_ROBOT_SHARE`` of the image,
    and every object (the robot too, on ``ROBOT_CONTRAST_TASKS``) stands out of the floor by
    ``MIN_CONTRAST``."""
    base = env.unwrapped
    camera = base._default_sensor_configs[0].name  # the task's own view (not a wrist camera)
    seg = obs["sensor_data"][camera]["segmentation"][..., 0]
    rgb = obs["sensor_data"][camera]["rgb"].float()
    names = base.segmentation_id_map
    robots = [path for path, obj in base.scene.objects.items() if isinstance(obj, Robot)]
    floor = torch.isin(seg, torch.tensor([i for i, n in names.items() if n == "ground"]))
    robot = torch.isin(seg, torch.tensor([i for i, n in names.items() if any(n.startswith(r + ":") for r in robots)]))
    share = robot.flatten(1).float().mean(1)
    assert float(share.min()) >= MIN_ROBOT_SHARE, f"{env_id}: the robot covers {share.tolist()} of the image"

    def contrast(mask, k):
        return float((rgb[k][mask[k]] - rgb[k][floor[k]].mean(0)).norm(dim=1).median())

    for k in range(2):
        if env_id in ROBOT_CONTRAST_TASKS:
            assert contrast(robot, k) >= MIN_CONTRAST, f"{env_id}: robot against floor {contrast(robot, k):.0f}"
        for name, mask in task_object_masks(base, seg[..., None]).items():
            value = contrast(mask, k)
            assert value >= MIN_CONTRAST, f"{env_id}: {name} against the floor {value:.0f} levels"
