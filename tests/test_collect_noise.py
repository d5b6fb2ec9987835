"""Recording with noise on the executed actions (DART, ``--action-noise``): the recorded actions
are the expert's clean ones, the noise repeats from the episode's seed in any batch slot or
worker, the dataset's metadata says so in both formats, bad noise and replays that cannot
reproduce such a dataset are refused before anything is written.

Episodes are cut at 12 steps (``max_episode_steps``) to keep the tests short: labels and noise
are per step, a whole push adds nothing."""

import importlib.util
import json
import math
import multiprocessing
import os
import threading

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import SchemaMismatchError, load_dataset
from simulo_envs.datasets.action_noise import ActionNoise, episode_generator
from simulo_envs.datasets.collect import CollectSettings, collect, env_kwargs_of, worker_episodes
from simulo_envs.datasets.hdf5 import read_group
from simulo_envs.datasets.pipeline import READY
from simulo_envs.datasets.replay_job import ReplaySettings, replay
from simulo_envs.datasets.rollout import run_expert, set_local_state_dict
from simulo_envs.datasets.schema import DatasetSchema
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.policies import EXPERTS

ENV = "FrankaPush-v1"
STEPS = 12
SHORT = {"max_episode_steps": STEPS}
STD = 0.3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def settings(out, noise=0.0, **overrides) -> CollectSettings:
    values = dict(num_episodes=2, out=str(out), fmt="hdf5", num_envs=2, seed=3, keep_failures=True,
                  env_kwargs=SHORT, action_noise=noise)
    values.update(overrides)
    return CollectSettings(ENV, **values)


def by_seed(folder) -> dict:
    """Seed -> the episode's HDF5 group (numpy) of the dataset in ``folder``."""
    ds = load_dataset(str(folder))
    return {int(seed): read_group(os.path.join(str(folder), "trajectory.h5"), i) for i, seed in enumerate(ds.seeds)}


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """Seeds 3 and 4 recorded twice, with noise (std 0.3) and without, HDF5 with env states."""
    root = tmp_path_factory.mktemp("dart")
    for name, noise in (("noisy", STD), ("clean", 0.0)):
        summary = collect(settings(root / name, noise), progress=False)
        assert summary["episodes"] == 2 and summary["error"] is None and summary["action_noise"] == noise
        assert summary["action_noise_units"] == ("action units" if noise else None)   # pd_ee_delta_pos's [-1, 1]
    return root / "noisy", root / "clean"


def test_the_metadata_says_whether_and_where_noise_was_added(recordings):
    noisy, clean = recordings
    ds = load_dataset(str(noisy))
    assert ds.action_noise_std == STD and ds.schema.action_noise_columns == ("arm.dx", "arm.dy", "arm.dz")
    assert ds.action_names == ("arm.dx", "arm.dy", "arm.dz", "gripper")  # the gripper gets no noise
    sidecar = json.loads((noisy / "trajectory.json").read_text())["simulo_schema"]
    assert sidecar["action_noise_std"] == STD and sidecar["action_noise_columns"] == ["arm.dx", "arm.dy", "arm.dz"]
    plain = load_dataset(str(clean))
    assert plain.action_noise_std == 0.0 and plain.schema.action_noise_columns == ()
    assert json.loads((clean / "trajectory.json").read_text())["simulo_schema"]["action_noise_std"] == 0.0


def test_labels_are_the_experts_actions_at_the_recorded_states(recordings):
    noisy, clean = recordings
    episodes, plain = by_seed(noisy), by_seed(clean)
    env = REGISTERED[ENV](num_envs=1, **env_kwargs_of(settings("unused")))
    try:
        for seed, group in episodes.items():
            expert = EXPERTS[ENV](env)
            env.reset(seed=seed)
            states, labels = group["env_states"], group["actions"]
            computed = []
            for t in range(len(labels)):
                set_local_state_dict(env, {kind: {k: v[t:t + 1] for k, v in states[kind].items()}
                                           for kind in ("actors", "articulations")}, [0])
                info = env.get_info()
                info["elapsed_steps"] = torch.tensor([t])  # the expert's phases restart at step 0 only
                computed.append(expert.act(info)[0].numpy())
            assert len(labels) == STEPS and np.allclose(np.stack(computed), labels, atol=1e-5)
            # the same initial state gives the same first label; the noise then moves the arm elsewhere
            assert np.array_equal(labels[0], plain[seed]["actions"][0])
            assert np.array_equal(group["obs"][0], plain[seed]["obs"][0])
            tcp_gap = np.abs(group["obs"][1:] - plain[seed]["obs"][1:]).max()
            assert tcp_gap > 1e-3
            assert np.abs(labels - plain[seed]["actions"]).max() > 1e-2
    finally:
        env.close()


def test_the_episode_is_its_clean_actions_plus_the_seeds_noise_executed(recordings):
    """Executing clip(label + noise of the seed's generator) in a fresh one-env env gives the
    recorded states bit for bit (fresh physics): nothing else moved the arm."""
    noisy, _ = recordings
    seed, group = next(iter(by_seed(noisy).items()))
    env = REGISTERED[ENV](num_envs=1, **env_kwargs_of(settings("unused")))
    try:
        env.reset(seed=seed, options={"reconfigure": True})
        generator = episode_generator(seed)
        for t, label in enumerate(group["actions"]):
            executed = label.copy()
            executed[:3] += generator.normal(0.0, STD, size=3).astype(np.float32)
            obs, *_ = env.step(torch.from_numpy(np.clip(executed, -1.0, 1.0))[None])
            assert np.array_equal(obs[0].numpy(), group["obs"][t + 1]), f"step {t}"
    finally:
        env.close()


def test_a_seed_gives_the_same_episode_in_another_slot_and_in_a_worker(recordings, tmp_path):
    noisy, _ = recordings
    episodes = by_seed(noisy)  # seed 4 ran in slot 1 of 2 there
    alone = collect(settings(tmp_path / "alone", STD, num_episodes=1, num_envs=1, seed=4), progress=False)
    assert alone["episodes"] == 1
    again = by_seed(tmp_path / "alone")[4]
    for key in ("obs", "actions", "rewards"):
        assert np.array_equal(again[key], episodes[4][key]), key
    # a worker's generator (run here): seeds from the shared counter, its own env
    counter, stop = multiprocessing.Value("q", 3), threading.Event()
    items = worker_episodes(0, ENV, env_kwargs_of(settings("unused")), 1, counter, 4, False, "hdf5", STD, False, False,
                            stop)
    assert next(items) is READY
    seed, succeeded, episode = next(items)   # (its seed, the expert's success, the recorded episode)
    items.close()
    assert succeeded == episode.succeeded and seed == 3
    assert episode.seed == 3 and np.array_equal(episode.obs, episodes[3]["obs"])
    assert np.array_equal(episode.actions, episodes[3]["actions"])


def test_noise_is_clipped_to_the_action_space_and_spares_the_gripper():
    env = REGISTERED[ENV](num_envs=2, control_mode="pd_ee_delta_pos")
    try:
        noise = ActionNoise(env, 5.0)
        assert noise.columns.tolist() == [0, 1, 2]
        noise.begin([0, 1], [7, 8])
        action = torch.tensor([[0.9, -0.9, 0.0, -1.0], [0.1, 0.2, 0.3, 1.0]])
        executed = noise.apply(action, np.array([True, False])).numpy()
        assert np.abs(executed[0, :3]).max() == 1.0 and np.all(np.abs(executed) <= 1.0)
        assert executed[0, 3] == -1.0 and np.array_equal(executed[1], action[1].numpy())  # gripper; idle env
        again = ActionNoise(env, 5.0)
        again.begin([1], [7])  # seed 7 in another slot: the same draw
        assert np.array_equal(again.noise(np.array([False, True]))[1], noise_of(7, 5.0))
    finally:
        env.close()


def noise_of(seed: int, std: float) -> np.ndarray:
    out = np.zeros(4, np.float32)
    out[:3] = episode_generator(seed).normal(0.0, std, size=3)
    return out


def test_the_lerobot_format_stores_the_noise_and_appending_other_noise_is_refused(tmp_path):
    out = tmp_path / "lerobot"
    summary = collect(settings(out, 0.1, fmt="lerobot", num_episodes=1, num_envs=1), progress=False)
    assert summary["episodes"] == 1
    meta = json.loads((out / "meta" / "simulo_env.json").read_text())
    assert meta["action_noise_std"] == 0.1 and meta["action_noise_columns"] == ["arm.dx", "arm.dy", "arm.dz"]
    assert load_dataset(str(out)).action_noise_std == 0.1
    with pytest.raises(SchemaMismatchError, match="action_noise_std: 0.1 != 0.0"):
        collect(settings(out, 0.0, fmt="lerobot", num_episodes=1, num_envs=1, append=True), progress=False)
    assert len(load_dataset(str(out))) == 1


def test_an_so_arms_lerobot_schema_records_the_clean_joint_targets_in_degrees(tmp_path):
    """The SO arms' LeRobot schema (joint targets in degrees, driven through the expert's IK):
    the noise goes on the executed arm targets [deg], the label is the expert's clean target."""
    runs = {}
    for name, noise in (("noisy", 2.0), ("clean", 0.0)):
        out = tmp_path / name
        summary = collect(CollectSettings("SO100Lift-v1", num_episodes=1, out=str(out), fmt="lerobot", num_envs=1,
                                          seed=5, keep_failures=True, env_kwargs={"max_episode_steps": 6},
                                          action_noise=noise), progress=False)
        assert summary["episodes"] == 1 and summary["error"] is None
        assert summary["action_noise_units"] == ("degrees" if noise else None)
        runs[name] = load_dataset(str(out))
    noisy, clean = runs["noisy"], runs["clean"]
    arm = ("shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos")
    assert noisy.robot_type == "so_follower" and noisy.action_names == (*arm, "gripper.pos")
    assert noisy.action_noise_std == 2.0 and noisy.schema.action_noise_columns == arm  # degrees, not the gripper
    n, c = noisy[0], clean[0]
    assert torch.equal(n.observation_state[0], c.observation_state[0])
    assert torch.equal(n.action[0], c.action[0])  # the same state, the same clean label: no noise in it
    assert (n.observation_state[1:, :5] - c.observation_state[1:, :5]).abs().max() > 0.2  # the noise moved the arm
    assert torch.equal(n.action[:, 5], c.action[:, 5])  # the gripper's command gets none


def test_a_schema_written_before_the_noise_fields_reads_as_noiseless():
    schema = DatasetSchema(env_id=ENV, obs_mode="state", control_mode="pd_ee_delta_pos", reward_mode="dense", fps=20,
                           robot_type="panda", state_names=("a",), action_names=("arm.dx", "gripper"),
                           action_noise_std=0.2, action_noise_columns=("arm.dx",))
    assert DatasetSchema.from_json(json.loads(json.dumps(schema.to_json()))) == schema
    old = {k: v for k, v in schema.to_json().items() if not k.startswith("action_noise")}
    assert DatasetSchema.from_json(old).action_noise_std == 0.0
    with pytest.raises(ValueError, match="not action names"):
        DatasetSchema.from_json({**schema.to_json(), "action_noise_columns": ["arm.dq"]})


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf, True, "0.1"])
def test_bad_noise_is_refused_before_anything_runs(tmp_path, bad):
    out = tmp_path / "never"
    with pytest.raises(ValueError, match="action noise std"):
        collect(settings(out, bad), progress=False)
    assert not out.exists()
    with pytest.raises(ValueError, match="action noise std"):
        next(run_expert(None, None, lambda: None, action_noise=bad))  # before the env is touched
    with pytest.raises(ValueError, match="action noise std"):
        DatasetSchema(env_id=ENV, obs_mode="state", control_mode="pd_ee_delta_pos", reward_mode="dense", fps=20,
                      robot_type="panda", state_names=(), action_names=(), action_noise_std=bad)


def test_the_command_line_refuses_bad_noise(tmp_path, capsys):
    script = os.path.join(ROOT, "scripts", "collect_demos.py")
    spec = importlib.util.spec_from_file_location("collect_demos_script", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    try:
        for args, message in ((["--env-id", ENV, "--action-noise", "-0.5"], "action noise std must be finite and >= 0"),
                              (["--env-id", ENV, "--action-noise", "nan"], "got nan")):
            out = tmp_path / "never"
            with pytest.raises(SystemExit) as exit_info:
                module.main([*args, "--num-episodes", "1", "--num-envs", "1", "--out", str(out)])
            assert exit_info.value.code == 2 and message in capsys.readouterr().err
            assert not out.exists()
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("options, message", [
    ({}, "replay it by its env states instead (--use-env-states)"),
    ({"control_mode": "pd_joint_pos"}, "a control-mode conversion replays the actions and cannot convert it"),
])
def test_replaying_a_noisy_dataset_by_its_actions_is_refused(recordings, tmp_path, options, message):
    noisy, _ = recordings
    out = tmp_path / "never"
    with pytest.raises(ValueError, match="recorded with action noise \\(std 0.3 on arm.dx, arm.dy, arm.dz\\)") as info:
        replay(ReplaySettings(str(noisy), str(out), **options), progress=False)
    assert message in str(info.value) and not out.exists()


def test_a_noisy_dataset_replays_by_its_env_states_and_keeps_its_labels(recordings, tmp_path):
    noisy, _ = recordings
    out = tmp_path / "states"
    summary = replay(ReplaySettings(str(noisy), str(out), fmt="hdf5", use_env_states=True, keep_failures=True,
                                    num_envs=2), progress=False)
    assert summary["episodes"] == 2 and summary["error"] is None
    source, replayed = by_seed(noisy), by_seed(out)
    for seed, group in replayed.items():
        assert np.array_equal(group["actions"], source[seed]["actions"])
        assert np.array_equal(group["obs"], source[seed]["obs"])
    assert load_dataset(str(out)).action_noise_std == STD


def test_a_noisy_lerobot_dataset_cannot_be_replayed(tmp_path):
    source = tmp_path / "lerobot"
    collect(settings(source, 0.1, fmt="lerobot", num_episodes=1, num_envs=1), progress=False)
    with pytest.raises(ValueError, match="holds no env states to follow instead"):
        replay(ReplaySettings(str(source), str(tmp_path / "never"), obs_mode="state"), progress=False)
    assert not (tmp_path / "never").exists()
