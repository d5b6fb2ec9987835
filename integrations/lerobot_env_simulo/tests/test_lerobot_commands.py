"""LeRobot's own commands with ``--env.type=simulo``: ``lerobot-train`` trains ACT on our SO101Lift-v1
demonstrations and evaluates it in our env during training, then ``lerobot-eval`` evaluates the
checkpoint. A couple of training steps only: what is checked is the loop, not the policy. The
commands run in this process (``integrations/tests/lerobot_commands.py``)."""

from __future__ import annotations

import json
import os

import av
import pytest
from lerobot_commands import run

pytestmark = pytest.mark.e2e

TINY_ACT = ["--policy.type=act", "--policy.pretrained_backbone_weights=null", "--policy.dim_model=32",
            "--policy.dim_feedforward=64", "--policy.n_heads=2", "--policy.n_encoder_layers=1",
            "--policy.n_decoder_layers=1", "--policy.use_vae=false", "--policy.chunk_size=4",
            "--policy.n_action_steps=4", "--policy.device=cpu", "--policy.push_to_hub=false"]
ENV = ["--env.type=simulo", "--env.task=SO101Lift-v1", "--env.episode_length=10",
       "--env.visualization_width=128", "--env.visualization_height=128"]


@pytest.fixture(scope="module")
def trained(so101_demos, tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("train") / "run")
    log = run("lerobot-train", "--dataset.repo_id=local/so101_demos", f"--dataset.root={so101_demos}",
              "--dataset.video_backend=pyav", *TINY_ACT, *ENV, "--steps=2", "--env_eval_freq=2",
              "--eval.n_episodes=2", "--eval.batch_size=2", "--batch_size=2", "--num_workers=0", "--save_freq=2",
              "--wandb.enable=false", f"--output_dir={out}")
    return out, log


def _frames(path: str) -> list:
    with av.open(path) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def test_lerobot_train_trains_on_our_dataset_and_evaluates_in_our_env(trained):
    out, log = trained
    model = os.path.join(out, "checkpoints", "000002", "pretrained_model")
    with open(os.path.join(model, "train_config.json")) as f:
        config = json.load(f)
    assert config["env"]["type"] == "simulo" and config["env"]["task"] == "SO101Lift-v1"
    assert config["policy"]["input_features"]["observation.state"]["shape"] == [6]
    assert config["policy"]["input_features"]["observation.images.base_camera"]["shape"] == [3, 128, 128]
    assert config["policy"]["input_features"]["observation.images.wrist_camera"]["shape"] == [3, 128, 128]
    assert "'pc_success': 0.0, 'n_episodes': 2" in log  # the evaluation in our env ran, two episodes
    videos = os.path.join(out, "eval", "videos_step_000002", "simulo_0")
    frames = _frames(os.path.join(videos, "eval_episode_0.mp4"))
    assert len(frames) == 10 and frames[0].shape == (128, 128, 3)  # the episode's 10 steps at 128x128


def test_lerobot_eval_evaluates_the_checkpoint_in_our_env(trained, tmp_path):
    out, _ = trained
    model = os.path.join(out, "checkpoints", "last", "pretrained_model")
    run("lerobot-eval", f"--policy.path={model}", *ENV, "--eval.n_episodes=3", "--eval.batch_size=2",
        "--policy.device=cpu", "--seed=100", f"--output_dir={tmp_path}")
    with open(tmp_path / "eval_info.json") as f:
        info = json.load(f)
    metrics = info["per_task"][0]["metrics"]
    assert info["per_task"][0]["task_group"] == "simulo" and len(metrics["successes"]) == 3
    assert all(r > 0 for r in metrics["sum_rewards"])  # the task's dense reward reached LeRobot
    assert info["overall"]["n_episodes"] == 3
