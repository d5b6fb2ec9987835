"""docs/parity.md's BaseEnv table against the maniskill-baseenv seed: every seed keyword and member
has exactly one row, every row's name exists on our BaseEnv, and the counts line adds up. The
behaviour behind each row is tested in the feature's own test file."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import gymnasium as gym
import pytest

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.envs.base_env import BaseEnv

DOC = Path(__file__).resolve().parents[1] / "docs" / "parity.md"
SEED = Path("/work/shared/seeds/maniskill-baseenv.txt")  # where the seed lives on the dev machines

SEED_KEYWORDS = (
    "num_envs", "obs_mode", "reward_mode", "control_mode", "render_mode", "shader_dir",
    "enable_shadow", "sensor_configs", "human_render_camera_configs", "viewer_camera_configs",
    "robot_uids", "sim_config", "reconfiguration_freq", "sim_backend", "render_backend",
    "parallel_in_single_scene", "enhanced_determinism",
)
SEED_MEMBERS = (
    "_after_control_step", "_after_reconfigure", "_after_simulation_step", "_before_control_step",
    "_before_simulation_step", "_clear", "_clear_sim_state", "_close_viewer", "_flatten_raw_obs",
    "_get_obs_agent", "_get_obs_extra", "_get_obs_sensor_data", "_get_obs_state_dict",
    "_get_obs_with_sensor_data", "_initialize_episode", "_load_agent", "_load_lighting",
    "_load_scene", "_reconfigure", "_set_episode_rng", "_set_main_rng", "_set_scene_config",
    "_setup_scene", "_setup_sensors", "_setup_viewer", "_step_action", "add_to_state_dict_registry",
    "capture_sensor_data", "close", "compute_dense_reward", "compute_normalized_dense_reward",
    "compute_sparse_reward", "evaluate", "get_info", "get_obs", "get_reward", "get_sensor_images",
    "get_sensor_params", "get_state", "get_state_dict", "print_sim_details",
    "remove_from_state_dict_registry", "render", "render_all", "render_human", "render_rgb_array",
    "render_sensors", "reset", "set_state", "set_state_dict", "step", "update_obs_space",
    "SUPPORTED_OBS_MODES", "SUPPORTED_RENDER_MODES", "SUPPORTED_REWARD_MODES", "SUPPORTED_ROBOTS",
    "_agent_sensor_configs", "_batched_episode_rng", "_batched_main_rng", "_batched_rng_backend",
    "_control_freq", "_control_mode", "_custom_human_render_camera_configs",
    "_custom_sensor_configs", "_custom_viewer_camera_configs",
    "_default_human_render_camera_configs", "_default_sensor_configs", "_default_sim_config",
    "_default_viewer_camera_configs", "_elapsed_steps", "_enhanced_determinism", "_episode_rng",
    "_episode_seed", "_hidden_objects", "_human_render_camera_configs", "_human_render_cameras",
    "_init_raw_obs", "_init_raw_state", "_last_obs", "_main_rng", "_main_seed", "_obs_mode",
    "_parallel_in_single_scene", "_reconfig_counter", "_render_device", "_reward_mode",
    "_sample_video_link", "_sensor_configs", "_sensors", "_sim_device", "_sim_freq",
    "_sim_steps_per_control", "_viewer", "action_space", "agent", "backend", "control_freq",
    "control_mode", "control_timestep", "device", "elapsed_steps", "enable_shadow",
    "gpu_sim_enabled", "metadata", "num_envs", "obs_mode", "obs_mode_struct", "observation_space",
    "reconfiguration_freq", "render_mode", "reward_mode", "robot_link_names", "robot_uids", "scene",
    "segmentation_id_map", "sim_config", "sim_freq", "sim_timestep", "single_action_space",
    "single_observation_space", "viewer",
)
EXTRA_ROW = "B18"  # our own extra keywords: not a seed point, not counted


def table() -> dict[str, tuple[str, str]]:
    """Row id -> (first name in the seed-point column, verdict word)."""
    text = DOC.read_text()
    section = text.split("## BaseEnv", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| (B\d+) \| `(\w+)[^|]*\|[^|]*\| (\w+)", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def test_every_seed_point_has_exactly_one_row():
    rows = {k: v for k, v in table().items() if k != EXTRA_ROW}
    names = [name for name, _ in rows.values()]
    assert sorted(names) == sorted(SEED_KEYWORDS + SEED_MEMBERS)
    assert list(rows) == [f"B{i}" for i in range(1, 140) if f"B{i}" != EXTRA_ROW]
    verdicts = [v for _, v in rows.values()]
    assert set(verdicts) <= {"same", "different", "missing"}
    counts = f"**{verdicts.count('same')} of {len(verdicts)} the same, {verdicts.count('different')} different, " \
             f"{verdicts.count('missing')} missing.**"
    assert counts in DOC.read_text()


@pytest.mark.skipif(not SEED.exists(), reason="the seed file is not on this machine")
def test_names_match_the_seed_file():
    lines = SEED.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("_after_control_step("))
    member = re.compile(r"^(?:abstractmethod |property )?(\w+)(?:\(.*\)|: .*| = .*)?$")
    found, prev = [], ""
    for line in filter(str.strip, lines[start:]):
        m = member.match(line)
        if m and prev != "Return type:":  # a bare type name under "Return type:" is no member
            found.append(m.group(1))
        prev = line.strip()
    assert tuple(found) == SEED_MEMBERS
    cls = next(line for line in lines if line.startswith("class mani_skill.envs.sapien_env.BaseEnv("))
    assert tuple(p.split("=")[0] for p in cls[cls.index("(") + 1:-1].split(", ")) == SEED_KEYWORDS


def test_every_row_name_exists_on_base_env():
    assert set(SEED_KEYWORDS) <= set(inspect.signature(BaseEnv.__init__).parameters)
    env = gym.make("FrankaLift-v1", num_envs=1).unwrapped
    try:
        missing = [name for name in SEED_MEMBERS if not hasattr(env, name)]
        assert missing == []
        assert env._custom_sensor_configs == {} and env._custom_viewer_camera_configs == {}
        env._reconfigure()  # the seed's default options
        assert env._reconfig_count == 2 and env.reset()[0].shape == (1, 36)
    finally:
        env.close()
