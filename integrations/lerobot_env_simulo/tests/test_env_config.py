"""``--env.type=simulo`` through LeRobot 0.6's own classes: plugin discovery, the config's
features, LeRobot's ``make_env`` (the config and a hub-style ``env.py``), its observation
preprocessing, and its evaluation loop (``rollout``, ``eval_policy``) on our env."""

from __future__ import annotations

import importlib.metadata
import os
import shutil

import gymnasium as gym
import numpy as np
import pytest
import torch
from lerobot.configs import FeatureType
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from lerobot.envs.configs import EnvConfig
from lerobot.envs.factory import make_env, make_env_config, make_env_pre_post_processors
from lerobot.envs.utils import env_to_policy_features, preprocess_observation
from lerobot.policies.act.configuration_act import ACTConfig
from lerobot.policies.factory import make_policy, make_pre_post_processors
from lerobot.processor import PolicyProcessorPipeline
from lerobot.processor.converters import policy_action_to_transition, transition_to_policy_action
from lerobot.scripts.lerobot_eval import eval_policy, rollout

from lerobot_env_simulo import SimuloEnv
from plugin_discovery import fresh_process_choices

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_lerobot_finds_the_plugin_by_its_distribution_name():
    assert importlib.metadata.distribution("lerobot_env_simulo").metadata["Name"] == "lerobot_env_simulo"
    choices = fresh_process_choices()   # a new process: nothing of ours imported before LeRobot looks
    assert "simulo" not in choices["before"]["env"]
    assert choices["after"]["env"]["simulo"] == ["lerobot_env_simulo.config", "SimuloEnv"]
    assert EnvConfig.get_choice_class("simulo") is SimuloEnv


def test_the_config_gives_lerobots_policy_features():
    cfg = make_env_config("simulo", task="SO100Lift-v1")
    assert cfg.type == "simulo" and cfg.fps == 20
    features = env_to_policy_features(cfg)
    assert {k: (f.type, f.shape) for k, f in features.items()} == {
        "action": (FeatureType.ACTION, (6,)),
        "observation.state": (FeatureType.STATE, (6,)),
        "observation.images.base_camera": (FeatureType.VISUAL, (3, 128, 128)),
        "observation.images.wrist_camera": (FeatureType.VISUAL, (3, 128, 128)),
    }
    so101 = make_env_config("simulo", task="SO101Lift-v1", fps=30, cameras="front=base_camera,wrist=wrist_camera")
    assert so101.fps == 30 and set(env_to_policy_features(so101)) == {
        "action", "observation.state", "observation.images.front", "observation.images.wrist"}
    renamed = make_env_config("simulo", task="FrankaLift-v1", cameras="front=base_camera")
    assert set(env_to_policy_features(renamed)) == {"action", "observation.state", "observation.images.front"}
    assert renamed.features["agent_pos"].shape == (36,)  # no follower: the flat state


def test_a_bad_config_is_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"unknown task 'SO100Lfit-v1' \(did you mean 'SO100Lift-v1'\?\)"):
        make_env_config("simulo", task="SO100Lfit-v1")
    with pytest.raises(ValueError, match=r"camera 'wrist' \(did you mean 'wrist_camera'\?\): SO100Lift-v1 has the "
                                         r"sensor cameras \['base_camera', 'wrist_camera'\]"):
        make_env_config("simulo", task="SO100Lift-v1", cameras="wrist")
    with pytest.raises(ValueError, match=r"robot='so100' for SO101Lift-v1"):
        make_env_config("simulo", task="SO101Lift-v1", robot="so100")
    with pytest.raises(ValueError, match=r"fps=7 for SO100Lift-v1: the physics runs at \d+ Hz"):
        make_env_config("simulo", task="SO100Lift-v1", fps=7)


@pytest.fixture(scope="module")
def so100_env():
    cfg = make_env_config("simulo", task="SO100Lift-v1", episode_length=12)
    envs = make_env(cfg, n_envs=2, use_async_envs=True)  # lerobot-eval's default asks for async envs
    env = envs["simulo"][0]
    yield cfg, envs, env
    env.close()


def test_lerobots_make_env_gives_one_batched_env(so100_env):
    _, envs, env = so100_env
    assert list(envs) == ["simulo"] and list(envs["simulo"]) == [0]
    assert isinstance(env, gym.vector.VectorEnv) and not isinstance(env, gym.vector.AsyncVectorEnv)
    assert env.num_envs == 2 and env.base_env.num_envs == 2  # both envs in one batched env of this process
    assert env.unwrapped.metadata["render_fps"] == 20 and env.call("_max_episode_steps")[0] == 12


def test_lerobot_preprocesses_our_observation(so100_env):
    _, _, env = so100_env
    obs, _ = env.reset(seed=[0, 1])
    batch = preprocess_observation(obs)
    assert set(batch) == {"observation.images.base_camera", "observation.images.wrist_camera", "observation.state"}
    image = batch["observation.images.base_camera"]
    assert image.dtype == torch.float32 and image.shape == (2, 3, 128, 128)
    torch.testing.assert_close(image, torch.from_numpy(obs["pixels"]["base_camera"]).permute(0, 3, 1, 2) / 255.0)
    qpos = env.base_env.agent.robot.state.qpos.double()
    follower = torch.cat([torch.rad2deg(qpos[:, :5]), 100.0 * (qpos[:, 5:] + 1.1) / 2.2], dim=1)
    torch.testing.assert_close(batch["observation.state"].double(), follower, atol=1e-3, rtol=0)


def _small_act(cfg) -> tuple:
    """An untrained ACT policy from LeRobot's factory for this env (no pretrained backbone: nothing
    is downloaded), and its processors."""
    pcfg = ACTConfig(pretrained_backbone_weights=None, dim_model=32, dim_feedforward=64, n_heads=2,
                     n_encoder_layers=1, n_decoder_layers=1, use_vae=False, chunk_size=4, n_action_steps=4,
                     device="cpu")
    policy = make_policy(pcfg, env_cfg=cfg)
    return (policy, *make_env_pre_post_processors(cfg, pcfg), *make_pre_post_processors(pcfg, dataset_stats=None))


def test_lerobots_eval_loop_runs_a_lerobot_policy(so100_env):
    cfg, _, env = so100_env
    policy, env_pre, env_post, pre, post = _small_act(cfg)
    info = eval_policy(env, policy, env_pre, env_post, pre, post, n_episodes=3, start_seed=10)
    assert [e["seed"] for e in info["per_episode"]] == [10, 11, 12]
    assert all(np.isfinite(e["sum_reward"]) and e["sum_reward"] > 0 for e in info["per_episode"])  # dense reward
    assert info["aggregated"]["pc_success"] == 0.0  # an untrained policy lifts nothing in 12 steps


class ReplayDemo(torch.nn.Module):
    """Plays recorded actions back, one row per step for each env (a stand-in for a trained
    policy: ``rollout`` needs ``reset`` and ``select_action``)."""

    def __init__(self, actions: list[torch.Tensor]):
        super().__init__()
        self.actions, self.t = actions, 0

    def reset(self):
        self.t = 0

    def select_action(self, observation):
        rows = [a[min(self.t, len(a) - 1)] for a in self.actions]
        self.t += 1
        return torch.stack(rows)


def test_success_reaches_lerobots_rollout(so101_demos):
    """The expert's recorded joint targets (degrees, gripper 0-100, read back with LeRobot's
    ``LeRobotDataset``), replayed from the recorded seeds through LeRobot's ``rollout``, lift the
    cube again: LeRobot sees success at the step the dataset recorded it."""
    dataset = LeRobotDataset("local/so101_demos", root=so101_demos, video_backend="pyav")
    episodes = dataset.meta.episodes
    seeds = [int(episodes[i]["seed"]) for i in range(2)]
    actions = [torch.stack([torch.as_tensor(r["action"]) for r in dataset.hf_dataset if r["episode_index"] == i])
               for i in range(2)]
    cfg = make_env_config("simulo", task="SO101Lift-v1")
    env = make_env(cfg, n_envs=2)["simulo"][0]
    try:
        env_pre, env_post = make_env_pre_post_processors(cfg, None)  # the env's own: identity
        pre = PolicyProcessorPipeline(steps=[])
        post = PolicyProcessorPipeline(steps=[], to_transition=policy_action_to_transition,
                                       to_output=transition_to_policy_action)
        ret = rollout(env, ReplayDemo(actions), env_pre, env_post, pre, post, seeds=seeds)
    finally:
        env.close()
    first_success = [int(torch.nonzero(ret["success"][i])[0]) for i in range(2)]
    assert first_success == [len(a) - 1 for a in actions]  # the last recorded step, as recorded
    first_done = [int(torch.nonzero(ret["done"][i])[0]) for i in range(2)]
    assert first_done == first_success  # success terminates the episode


def test_a_hub_style_env_py_loads_through_lerobots_make_env(tmp_path):
    """LeRobot's ``make_env("<user>/<repo>", trust_remote_code=True)`` with our ``hub/env.py`` in a
    local hub cache (offline: ``HF_HUB_OFFLINE=1``, the layout ``huggingface_hub`` reads)."""
    commit = "0" * 40
    repo = tmp_path / "models--simulo--so100-lift"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    shutil.copy(os.path.join(REPO, "integrations", "lerobot_env_simulo", "hub", "env.py"), snapshot / "env.py")
    envs = make_env("simulo/so100-lift", n_envs=2, trust_remote_code=True, hub_cache_dir=str(tmp_path))
    (suite, tasks), = envs.items()
    env = tasks[0]
    try:
        assert suite == "SO100Lift-v1" and env.num_envs == 2
        obs, _ = env.reset(seed=0)
        assert obs["pixels"]["base_camera"].shape == (2, 128, 128, 3) and obs["agent_pos"].shape == (2, 6)
    finally:
        env.close()
