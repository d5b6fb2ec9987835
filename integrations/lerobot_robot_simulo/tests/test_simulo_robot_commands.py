"""LeRobot's own commands on the simulated SO-101 follower: ``lerobot-teleoperate`` and
``lerobot-record`` with a (scripted) leader, ``lerobot-replay`` of an episode recorded on the sim
and of one in the real follower's schema, a policy through ``lerobot-rollout`` and through the
async inference robot client. What the sim did comes back in the robot's trace
(``--robot.trace_path``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from robot_cli import SMALL_CAMERAS, run, trace

from lerobot_robot_simulo import SimuloCameraConfig, SimuloSO101FollowerConfig
from simulo_envs.datasets import load_dataset

pytestmark = pytest.mark.e2e

TASK_TEXT = "Carry the cube to the goal"


@pytest.fixture(scope="module")
def recorded(expert_episode, tmp_path_factory):
    """``lerobot-record``: two episodes, the scripted leader playing the expert's episode, the
    sim in lockstep from the expert's seed. Returns (dataset root, the robot's trace)."""
    expert_root, seed, _ = expert_episode
    out = tmp_path_factory.mktemp("record")
    root, trace_path = str(out / "dataset"), str(out / "trace.npz")
    run("lerobot-record", "--robot.type=simulo_so101_follower", "--robot.task=SO101PickPlace-v1",
        "--robot.real_time=false", f"--robot.seed={seed}", f"--robot.cameras={SMALL_CAMERAS}",
        f"--robot.dataset_root={root}", f"--robot.trace_path={trace_path}",
        "--teleop.type=simulo_scripted_leader", f"--teleop.dataset_root={expert_root}",
        "--dataset.repo_id=local/sim_so101", f"--dataset.root={root}", f"--dataset.single_task={TASK_TEXT}",
        "--dataset.num_episodes=2", "--dataset.episode_time_s=6", "--dataset.reset_time_s=1",
        "--dataset.push_to_hub=false", "--play_sounds=false")
    return root, trace(trace_path)


def test_record_writes_the_real_followers_schema_with_each_episodes_success(recorded, expert_episode):
    root, robot_trace = recorded
    from lerobot.datasets import LeRobotDataset

    lerobot_view = LeRobotDataset("local/sim_so101", root=root, video_backend="pyav")
    assert lerobot_view.meta.robot_type == "so_follower" and lerobot_view.fps == 30
    assert lerobot_view.meta.features["observation.state"]["names"][0] == "shoulder_pan.pos"
    assert lerobot_view[0]["observation.images.front"].shape == (3, 48, 64)
    assert lerobot_view.meta.episodes["success"] == [True, False] and lerobot_view.meta.episodes["seed"] == [0, 1]
    ours = load_dataset(root)
    assert list(ours.successes) == [True, False] and list(ours.seeds) == [0, 1]
    assert ours.cameras == {"front": (48, 64, 3), "wrist": (48, 64, 3)} and ours.task == TASK_TEXT
    _, _, success_step = expert_episode
    assert ours.lengths[0] > success_step  # the leader played past the expert's success
    episode = ours[0]
    assert episode.images["front"].float().std() > 5.0  # pictures, not blank frames
    # one reset, at the reset phase: episode 0 on seed 0, then episode 1 on seed 1
    assert sorted(set(robot_trace["obs_episode"].tolist())) == [0, 1]


def test_replay_of_the_sim_episode_reproduces_its_joint_trajectory(recorded, tmp_path):
    root, _ = recorded
    path = str(tmp_path / "replay.npz")
    run("lerobot-replay", "--robot.type=simulo_so101_follower", "--robot.real_time=false", "--robot.seed=0",
        "--robot.cameras={}", f"--robot.trace_path={path}", "--dataset.repo_id=local/sim_so101",
        f"--dataset.root={root}", "--dataset.episode=0", "--play_sounds=false")
    recorded_state = load_dataset(root)[0].observation_state.numpy()
    replayed = trace(path)["obs_joints"]
    assert replayed.shape == recorded_state.shape
    error = np.abs(replayed - recorded_state).max()
    print(f"sim episode replay: max joint error {error:.2e} deg over {len(replayed)} frames")
    assert error < 1e-3  # the same physics from the same seed and targets: 0.0 when measured


def test_replay_of_a_real_followers_episode_follows_its_joint_trajectory(synthetic_episode, tmp_path):
    root, actions = synthetic_episode
    path = str(tmp_path / "replay.npz")
    run("lerobot-replay", "--robot.type=simulo_so101_follower", "--robot.real_time=false", "--robot.cameras={}",
        f"--robot.trace_path={path}", "--dataset.repo_id=local/real_so101", f"--dataset.root={root}",
        "--dataset.episode=0", "--play_sounds=false")
    dataset = load_dataset(root)
    assert dataset.robot_type == "so_follower" and dataset.cameras == {"front": (480, 640, 3)}
    recorded_state = dataset[0].observation_state.numpy()
    replayed = trace(path)["obs_joints"]
    error = np.abs(replayed - recorded_state)[3:]  # after the first 0.1 s: the sim starts at its rest pose
    print("real-schema replay: max / mean joint error [deg, gripper 0-100] after frame 3:",
          error.max(0).round(2), error.mean(0).round(2))
    assert error[:, :5].max() < 3.0 and error[:, :5].mean() < 0.5
    assert error[:, 5].max() < 8.0  # the gripper servo is the slowest joint (0.4 s over its range)


def test_teleoperate_drives_the_sim_in_real_time(synthetic_episode, tmp_path):
    root, _ = synthetic_episode
    path = str(tmp_path / "teleop.npz")
    run("lerobot-teleoperate", "--robot.type=simulo_so101_follower", "--robot.task=SO101Lift-v1",
        "--robot.cameras={front: {type: simulo, camera: base_camera, width: 64, height: 48}}",
        f"--robot.trace_path={path}", "--teleop.type=simulo_scripted_leader", f"--teleop.dataset_root={root}",
        "--fps=30", "--teleop_time_s=3")
    data = trace(path)
    wall = data["obs_start"] - data["obs_start"][0]  # when each observation was asked for
    simulated = data["obs_sim"] + data["obs_dropped"]  # sim time, with what a stall skipped
    lag = np.abs(simulated - wall)
    print(f"teleoperation: {len(wall)} loops in {wall[-1]:.2f} s, sim time off the wall clock by "
          f"at most {lag.max() * 1e3:.1f} ms, dropped {data['obs_dropped'][-1]:.2f} s")
    assert len(wall) >= 5 and lag.max() <= 0.5 / 30 + 1e-3  # whole periods, to the nearest
    # the joints follow the leader: each observation near the targets sent one call before
    error = np.abs(data["obs_joints"][2:, :5] - data["act_sent"][1:-1, :5])
    assert np.median(error) < 3.0


@pytest.fixture(scope="module")
def tiny_policy(recorded, tmp_path_factory):
    """An untrained ACT for the recorded dataset's features, built and saved with LeRobot's
    classes as ``lerobot-train`` saves a checkpoint (policy, pre- and post-processor)."""
    import torch
    from lerobot.datasets import LeRobotDatasetMetadata
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.factory import make_policy, make_pre_post_processors

    root, _ = recorded
    meta = LeRobotDatasetMetadata("local/sim_so101", root=root)
    config = ACTConfig(device="cpu", push_to_hub=False, pretrained_backbone_weights=None, dim_model=32,
                       dim_feedforward=64, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, use_vae=False,
                       chunk_size=4, n_action_steps=4)
    torch.manual_seed(0)
    policy = make_policy(config, ds_meta=meta)
    pre, post = make_pre_post_processors(config, dataset_stats=meta.stats)
    out = str(tmp_path_factory.mktemp("policy") / "pretrained_model")
    for part in (policy, pre, post):
        part.save_pretrained(out)
    return out


def test_lerobot_rollout_runs_a_policy_on_the_sim_and_records_it(tiny_policy, tmp_path):
    root, path = str(tmp_path / "rollout_sim"), str(tmp_path / "rollout.npz")
    run("lerobot-rollout", "--strategy.type=episodic", f"--policy.path={tiny_policy}", "--device=cpu",
        "--robot.type=simulo_so101_follower", "--robot.real_time=false", "--robot.seed=5",
        f"--robot.cameras={SMALL_CAMERAS}", f"--robot.dataset_root={root}", f"--robot.trace_path={path}",
        "--dataset.repo_id=local/rollout_sim_so101", f"--dataset.root={root}", f"--dataset.single_task={TASK_TEXT}",
        "--dataset.num_episodes=1", "--dataset.episode_time_s=4", "--dataset.push_to_hub=false",
        "--play_sounds=false", "--return_to_initial_position=false")
    dataset = load_dataset(root)
    data = trace(path)
    print(f"rollout: {dataset.lengths[0]} frames recorded, {len(data['act_sent'])} policy actions applied")
    assert dataset.robot_type == "so_follower" and list(dataset.seeds) == [5] and len(dataset.successes) == 1
    assert dataset.lengths[0] >= 2 and len(data["act_sent"]) == dataset.lengths[0]
    # the recorded actions are the policy's; the sim applied them clipped to the joint limits
    # (an untrained policy asks for a gripper below closed, 0)
    recorded = dataset[0].action.numpy()
    assert np.allclose(recorded[:, :5], data["act_sent"][:, :5], atol=1e-4)
    assert np.allclose(np.clip(recorded[:, 5], 0.0, 100.0), data["act_sent"][:, 5], atol=1e-4)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_async_inference_robot_client_drives_the_sim(tiny_policy, tmp_path, monkeypatch):
    """LeRobot's policy server (its own process) and ``RobotClient`` (here) with the plugin robot:
    the client checks no robot list (``async_client``), and its actions reach the sim."""
    monkeypatch.chdir(tmp_path)  # the server and client write logs/ under the working directory
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "lerobot.async_inference.policy_server", "--host=127.0.0.1",
                               f"--port={port}"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        from lerobot.async_inference.configs import RobotClientConfig
        from lerobot.async_inference.robot_client import RobotClient  # its import writes logs/ here

        cameras = {name: SimuloCameraConfig(camera=camera, width=64, height=48)
                   for name, camera in (("front", "base_camera"), ("wrist", "wrist_camera"))}
        robot = SimuloSO101FollowerConfig(real_time=False, cameras=cameras)
        client = RobotClient(RobotClientConfig(policy_type="act", pretrained_name_or_path=tiny_policy, robot=robot,
                                               actions_per_chunk=4, task=TASK_TEXT, server_address=f"127.0.0.1:{port}",
                                               policy_device="cpu", client_device="cpu"))
        try:
            deadline = time.time() + 120
            while not client.start():  # the server may still be starting
                assert time.time() < deadline, "the policy server did not answer"
                time.sleep(2)
            threads = [threading.Thread(target=client.receive_actions, daemon=True),
                       threading.Thread(target=client.control_loop, args=(TASK_TEXT,), daemon=True)]
            for thread in threads:
                thread.start()
            while len(client.robot.sim.trace()["act_sent"]) < 8 and time.time() < deadline:
                time.sleep(0.5)
            client.stop()
            for thread in threads:
                thread.join(timeout=30)
            applied = client.robot.sim.trace()["act_sent"]
            print(f"async inference: {len(applied)} actions from the policy server applied")
            assert len(applied) >= 8
        finally:
            if client.robot.is_connected:
                client.robot.disconnect()
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
