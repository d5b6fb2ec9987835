"""simulo_envs.datasets building blocks: statistics, schema names, atomic writes; and the
synthetic episodes the other dataset tests share (``make_episode``, ``SCHEMA``)."""

import os

import numpy as np
import pytest

from simulo_envs.datasets import DatasetSchema, Episode, atomic, stats  # noqa: F401
from simulo_envs.datasets.schema import task_instruction

SCHEMA = DatasetSchema(
    env_id="FrankaLift-v1", obs_mode="rgb", control_mode="pd_ee_delta_pos", reward_mode="normalized_dense", fps=20,
    robot_type="panda", state_names=tuple(f"s{i}" for i in range(5)), action_names=("arm.dx", "arm.dy", "arm.dz", "gripper"),
    cameras={"base_camera": (32, 48, 3)}, task="Lift a cube with a Franka Panda.", max_episode_steps=100,
    env_kwargs={"obs_mode": "rgb", "control_mode": "pd_ee_delta_pos"})
"""A small schema: 5 state columns (2 agent + 3 extra), 4 actions, one 48x32 camera."""

STATE_SCHEMA = DatasetSchema(**{**SCHEMA.__dict__, "obs_mode": "state", "cameras": {},
                                "env_kwargs": {"obs_mode": "state", "control_mode": "pd_ee_delta_pos"}})


def smooth_frames(rng, count: int, height: int, width: int) -> np.ndarray:
    """uint8 (count, H, W, 3) frames that move smoothly (like renders: gradients and a blob)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = rng.uniform(40, 200, size=3)
    frames = np.empty((count, height, width, 3), np.uint8)
    for t in range(count):
        cx, cy = width * (0.3 + 0.02 * t), height * 0.5
        blob = 60 * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 60.0)
        for c in range(3):
            frames[t, :, :, c] = np.clip(base[c] + 0.5 * x + 0.3 * y * (c - 1) + blob, 0, 255).astype(np.uint8)
    return frames


def make_episode(seed: int, steps: int = 12, images: bool = True, succeed: bool = True) -> Episode:
    """A synthetic episode of ``steps`` steps in SCHEMA's layout (state dict obs, env states)."""
    rng = np.random.default_rng(seed)
    obs = {"agent": {"qpos": rng.normal(size=(steps + 1, 2)).astype(np.float32)},
           "extra": {"tcp_pose": rng.normal(size=(steps + 1, 2)).astype(np.float32),
                     "is_grasped": rng.integers(0, 2, size=steps + 1).astype(bool)}}
    if images:
        obs["sensor_data"] = {"base_camera": {"rgb": smooth_frames(rng, steps + 1, 32, 48)}}
    success = np.zeros(steps, bool)
    success[-1] = succeed
    terminated = success.copy()
    return Episode(seed=seed, obs=obs, actions=rng.uniform(-1, 1, size=(steps, 4)).astype(np.float32),
                   rewards=rng.uniform(0, 1, size=steps).astype(np.float32), terminated=terminated,
                   truncated=np.zeros(steps, bool) if succeed else np.eye(1, steps, steps - 1, dtype=bool)[0],
                   success=success,
                   env_states={"actors": {"Block": rng.normal(size=(steps + 1, 13)).astype(np.float32)},
                               "articulations": {"Robot": rng.normal(size=(steps + 1, 31)).astype(np.float32)}})


# ---------------------------------------------------------------------- statistics
def test_vector_stats_are_numpy_statistics_over_frames():
    values = np.random.default_rng(0).normal(size=(50, 3))
    s = stats.vector_stats(values)
    assert np.allclose(s["mean"], values.mean(0)) and np.allclose(s["std"], values.std(0))
    assert np.allclose(s["min"], values.min(0)) and np.allclose(s["max"], values.max(0))
    assert np.allclose(s["q50"], np.median(values, 0)) and s["count"].tolist() == [50]
    assert stats.vector_stats(np.arange(4.0))["mean"].shape == (1,)  # a scalar feature


def test_aggregate_pools_mean_and_variance_exactly():
    rng = np.random.default_rng(1)
    parts = [rng.normal(loc=i, size=(n, 2)) for i, n in enumerate((7, 30, 3))]
    total = stats.aggregate([{"x": stats.vector_stats(p)} for p in parts])["x"]
    every = np.concatenate(parts)
    assert np.allclose(total["mean"], every.mean(0)) and np.allclose(total["std"], every.std(0))
    assert np.allclose(total["min"], every.min(0)) and np.allclose(total["max"], every.max(0))
    assert total["count"].tolist() == [40]


def test_image_stats_are_per_channel_in_unit_range():
    frames = np.zeros((2, 4, 4, 3), np.uint8)
    frames[..., 0], frames[..., 1], frames[1, ..., 2] = 255, 51, 255
    s = stats.image_stats(frames)
    assert s["mean"].shape == (3, 1, 1) and s["count"].tolist() == [2]
    assert np.allclose(s["mean"].ravel(), [1.0, 0.2, 0.5]) and np.allclose(s["std"].ravel(), [0.0, 0.0, 0.5])


# ---------------------------------------------------------------------- schema
def test_schema_json_round_trip_and_differences():
    again = DatasetSchema.from_json(SCHEMA.to_json())
    assert again == SCHEMA and again.differences(SCHEMA) == []
    other = DatasetSchema(**{**SCHEMA.__dict__, "control_mode": "pd_joint_pos", "env_id": "FrankaPush-v1"})
    assert [d.split(":")[0] for d in SCHEMA.differences(other)] == ["env_id", "control_mode"]
    with pytest.raises(KeyError, match="fps"):
        DatasetSchema.from_json({k: v for k, v in SCHEMA.to_json().items() if k != "fps"})


def test_schema_names_come_from_the_env_and_its_agent():
    import simulo_envs  # noqa: F401
    from simulo_envs.datasets import schema_from_env
    from simulo_envs.envs.registration import REGISTERED

    env = REGISTERED["FrankaLift-v1"](num_envs=1, control_mode="pd_joint_delta_pos")
    try:
        schema = schema_from_env(env, "FrankaLift-v1")
    finally:
        env.close()
    assert schema.robot_type == "panda" and schema.fps == 20 and schema.state_dim == 36
    assert schema.state_names[:2] == ("panda_joint1.qpos", "panda_joint2.qpos")  # radians: never .pos
    assert schema.state_names[9] == "panda_joint1.qvel" and schema.state_names[18:21] == ("tcp_pose.x", "tcp_pose.y",
                                                                                         "tcp_pose.z")
    assert schema.state_names[-1] == "is_grasped"
    assert schema.action_names == tuple(f"panda_joint{i}.delta_pos" for i in range(1, 8)) + ("gripper",)
    assert schema.task == "Lift a cube with a Franka Panda."


def test_task_instruction_of_a_variant_comes_from_its_parent_task():
    import simulo_envs  # noqa: F401
    from simulo_envs.envs.registration import REGISTERED

    assert task_instruction(REGISTERED["FrankaLiftMixed-v1"]) == "Lift a cube with a Franka Panda."
    assert task_instruction(REGISTERED["FrankaPush-v1"]) == "Push a cube into a goal region on the floor with a Franka Panda."


# ---------------------------------------------------------------------- atomic writes
def test_atomic_write_keeps_the_old_content_when_the_write_fails(tmp_path):
    target = tmp_path / "f.json"
    atomic.write_json(str(target), {"a": 1})
    with pytest.raises(RuntimeError):
        with atomic.atomic_path(str(target)) as tmp:
            with open(tmp, "w") as handle:
                handle.write("partial")
            raise RuntimeError("disk gone")
    assert target.read_text().strip().replace(" ", "").replace("\n", "") == '{"a":1}'
    assert os.listdir(tmp_path) == ["f.json"]  # no temporary left behind
