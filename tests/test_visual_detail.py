"""visual_detail: the keyword, its reach (sensors, render(), RecordEpisode videos) and the fidelity
of "fast" images against "full" ones."""

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert
from simulo_envs.wrappers.record import RecordEpisode

SIZE = 128


def _robot_ids(env):
    path = env.agent.robot.path
    return torch.tensor([i for i, name in env.segmentation_id_map.items()
                         if isinstance(name, str) and name.split(":")[0] == path])


@pytest.fixture(scope="module")
def pair():
    """FrankaLift-v1 with "full" and with "fast" visual meshes, same seed."""
    kwargs = dict(num_envs=1, obs_mode="rgb+segmentation", render_mode="rgb_array", control_mode="pd_ee_delta_pos",
                  sensor_configs=dict(width=SIZE, height=SIZE), human_render_camera_configs=dict(width=SIZE, height=SIZE))
    envs = {detail: gym.make("FrankaLift-v1", visual_detail=detail, **kwargs) for detail in ("full", "fast")}
    for env in envs.values():
        env.reset(seed=3)
    yield {detail: env.unwrapped for detail, env in envs.items()}
    for env in envs.values():
        env.close()


def test_default_is_fast_and_a_task_can_choose(pair):
    assert pair["fast"].visual_detail == "fast" and pair["full"].visual_detail == "full"
    env = gym.make("FrankaLift-v1", num_envs=1)
    assert env.unwrapped.visual_detail == "fast"  # state-only: nothing is rendered, nothing is built
    env.close()
    cls = type(env.unwrapped)
    full_task = type("FullDetailLift", (cls,), {"default_visual_detail": "full"})
    env = full_task(num_envs=1)
    assert env.visual_detail == "full"
    env.close()


def test_unknown_visual_detail_is_refused_before_anything_is_built():
    with pytest.raises(ValueError, match=r"visual_detail must be one of \['fast', 'full'\], got 'high'"):
        gym.make("FrankaLift-v1", num_envs=1, obs_mode="rgb", visual_detail="high")


def _sensor_and_render(env):
    data = env.get_obs()["sensor_data"]["base_camera"]
    return data["rgb"][0].numpy().astype(int), data["segmentation"][0, ..., 0], env.render()[0].numpy().astype(int)


def test_sensors_and_render_follow_the_setting_and_fast_stays_close(pair):
    """Same state, different meshes: every camera path differs between the settings (the setting
    reaches it), by little (mean under 3 levels), and the robot's pixels agree (IoU >= 0.97)."""
    expert = LiftExpert(pair["full"])
    inter = union = 0
    for step in range(12):
        pair["full"].step(expert.act())
        pair["fast"].set_state(pair["full"].get_state())
        full_rgb, full_seg, full_render = _sensor_and_render(pair["full"])
        fast_rgb, fast_seg, fast_render = _sensor_and_render(pair["fast"])
        if step % 4 == 0:
            assert (full_rgb != fast_rgb).any() and (full_render != fast_render).any()
            assert np.abs(full_rgb - fast_rgb).mean() < 3.0 and np.abs(full_render - fast_render).mean() < 3.0
        robot_full, robot_fast = torch.isin(full_seg, _robot_ids(pair["full"])), torch.isin(fast_seg, _robot_ids(pair["fast"]))
        inter += int((robot_full & robot_fast).sum())
        union += int((robot_full | robot_fast).sum())
    assert union > 1000  # the robot is in view
    assert inter / union >= 0.97


def test_videos_follow_the_setting(tmp_path):
    frames = {}
    for detail in ("full", "fast"):
        env = gym.make("FrankaLift-v1", num_envs=1, render_mode="rgb_array", visual_detail=detail,
                       human_render_camera_configs=dict(width=64, height=64))
        env = RecordEpisode(env, str(tmp_path / detail))
        env.reset(seed=0)
        for _ in range(2):
            env.step(np.zeros(env.action_space.shape, dtype=np.float32))
        env.close()
        frames[detail] = iio.imread(env.video_paths[0]).astype(int)
    assert frames["full"].shape == frames["fast"].shape == (3, 64, 64, 3)
    difference = np.abs(frames["full"] - frames["fast"])
    assert difference.max() > 40 and difference.mean() < 4.0
