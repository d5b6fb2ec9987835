"""LeRobot's own commands with ``--env.type=simulo``: ``lerobot-train`` trains ACT on our SO101Lift-v1
demonstrations and evaluates it in our env during training, then ``lerobot-eval`` evaluates the
checkpoint. A couple of training steps only: what is checked is the loop, not the policy. The
commands run in this process (``integrations/tests/lerobot_commands.py``)."""

from __future__ import annotations

import importlib.util
import json
import os

import av
import pytest
import torch
from lerobot_commands import REPO, run

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


@pytest.fixture(scope="module")
def evaluated(trained, tmp_path_factory) -> tuple[str, dict]:
    """``lerobot-eval`` of the trained checkpoint: 3 episodes from seed 100, batches of 2."""
    out, _ = trained
    model = os.path.join(out, "checkpoints", "last", "pretrained_model")
    folder = tmp_path_factory.mktemp("eval")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # scripts/evaluate.py's: the same arithmetic in the policy
    try:
        run("lerobot-eval", f"--policy.path={model}", *ENV, "--eval.n_episodes=3", "--eval.batch_size=2",
            "--policy.device=cpu", "--seed=100", f"--output_dir={folder}")
    finally:
        torch.set_num_threads(threads)
    with open(folder / "eval_info.json") as f:
        return model, json.load(f)


def test_lerobot_eval_evaluates_the_checkpoint_in_our_env(evaluated):
    _, info = evaluated
    metrics = info["per_task"][0]["metrics"]
    assert info["per_task"][0]["task_group"] == "simulo" and len(metrics["successes"]) == 3
    assert all(r > 0 for r in metrics["sum_rewards"])  # the task's dense reward reached LeRobot
    assert info["overall"]["n_episodes"] == 3


def _evaluate_script():
    spec = importlib.util.spec_from_file_location("evaluate_script", os.path.join(REPO, "scripts", "evaluate.py"))
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_our_evaluate_agrees_with_lerobot_eval(evaluated, trained, tmp_path, capsys):
    # The same folder, seeds and batches as lerobot-eval, with --shared-physics (lerobot-eval's one
    # env for every batch): episode k is lerobot-eval's episode k. Every episode here runs to the
    # 10-step limit (the 2-step policy never succeeds), so the returns cover the same steps.
    model, info = evaluated
    out, _ = trained
    threads = torch.get_num_threads()
    try:
        _evaluate_script().main(["--checkpoint", os.path.join(out, "checkpoints", "last"), "--episodes", "3",
                                 "--seed", "100", "--max-envs", "2", "--shared-physics", "--json",
                                 "--video-dir", str(tmp_path)])
    finally:
        torch.set_num_threads(threads)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    summary = lines[-1]
    metrics = info["per_task"][0]["metrics"]
    assert summary["env_id"] == "SO101Lift-v1" and summary["library"] == "lerobot" and summary["policy"] == "act"
    assert [row[0] for row in summary["per_episode"]] == [100, 101, 102]
    assert [row[1] for row in summary["per_episode"]] == metrics["successes"]
    assert [row[4] for row in summary["per_episode"]] == [10, 10, 10]
    assert [row[3] for row in summary["per_episode"]] == pytest.approx(metrics["sum_rewards"], rel=1e-6)
    assert summary["success_rate"] * 100 == pytest.approx(info["overall"]["pc_success"])
    frames = _frames(summary["video"])
    assert len(frames) == 11 and frames[0].shape == (128, 4 * 128, 3)  # reset + 10 steps, 4 envs side by side


def test_a_folder_trained_on_our_dataset_evaluates_in_the_env_it_was_recorded_in(so101_demos, tmp_path):
    # lerobot-train without --env: the env comes from the dataset's meta/simulo_env.json.
    from lerobot_env_simulo.evaluation import env_config

    folder = tmp_path / "pretrained_model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"type": "act"}))
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "train_config.json").write_text(json.dumps({"dataset": {"root": so101_demos}, "env": None}))
    config = env_config(str(tmp_path))  # the checkpoint folder above pretrained_model works too
    assert (config.task, config.fps, config.episode_length) == ("SO101Lift-v1", 20, 80)
    assert config.cameras == "base_camera=base_camera,wrist_camera=wrist_camera"
    assert (config.observation_width, config.observation_height) == (128, 128)
    assert config.control_mode == "pd_joint_pos_lerobot"
    (folder / "train_config.json").write_text(json.dumps({"dataset": {"root": str(tmp_path / "elsewhere")}}))
    with pytest.raises(ValueError, match="names no simulo env"):
        env_config(str(folder))


def test_the_benchmark_protocol_runs_a_lerobot_policy_in_a_held_out_variant(trained, tmp_path):
    # scripts/benchmark_suite.py with the policy folder: the split's variant and published seeds,
    # through LeRobot's rollout; lerobot-eval reaches the same variant with --env.variant.
    from lerobot_env_simulo.config import SimuloEnv

    out, _ = trained
    spec = importlib.util.spec_from_file_location("benchmark_suite_script",
                                                  os.path.join(REPO, "scripts", "benchmark_suite.py"))
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    threads = torch.get_num_threads()
    try:
        script.main(["--checkpoint", os.path.join(out, "checkpoints", "last"), "--splits", "heldout",
                     "--episodes", "2", "--out", str(tmp_path)])
    finally:
        torch.set_num_threads(threads)
    (row,) = json.loads((tmp_path / "benchmark_suite.json").read_text())["rows"]
    assert (row["env_id"], row["split"], row["seeds"]) == ("SO101Lift-v1", "heldout", [2_000_000, 2_000_001])
    config = SimuloEnv(task="SO101Lift-v1", variant="heldout", obs_type="agent_pos")
    env = config.create_envs(1)["simulo"][0]
    try:
        assert env.venv.unwrapped.variant == "heldout"
    finally:
        env.close()
