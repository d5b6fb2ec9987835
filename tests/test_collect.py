"""scripts/collect_demos.py and simulo_envs.datasets.collect: expert episodes into datasets,
seeds that reproduce episodes, failures kept or not, worker processes, the command line."""

import importlib.util
import json
import os

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.envs.registration import REGISTERED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "collect_demos.py")


@pytest.fixture
def collect_main():
    """The script's ``main``, run in this process (a refusal needs no process of its own); the
    torch thread count it sets is given back afterwards."""
    spec = importlib.util.spec_from_file_location("collect_demos_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    yield module.main
    torch.set_num_threads(threads)


def test_expert_episodes_are_written_with_seeds_that_reproduce_them(tmp_path):
    out = tmp_path / "lift"
    summary = collect(CollectSettings("FrankaLift-v1", num_episodes=5, out=str(out), fmt="hdf5", num_envs=3, seed=40),
                      progress=False)
    assert summary["episodes"] == 5 and summary["success_rate"] == 1.0 and summary["error"] is None
    ds = load_dataset(str(out))
    assert len(ds) == 5 and ds.successes.all() and len(set(ds.seeds.tolist())) == 5
    assert set(ds.seeds.tolist()) <= set(range(40, 40 + summary["tries"] + 3))  # tries finished, up to 3 running
    assert summary["frames"] == ds.num_frames
    from simulo_envs.datasets.hdf5 import read_group

    group = read_group(str(out / "trajectory.h5"), 2)
    env = REGISTERED["FrankaLift-v1"](num_envs=1, control_mode="pd_ee_delta_pos")
    try:
        obs, _ = env.reset(seed=int(ds.seeds[2]))  # a fresh env, another batch size: the same initial state
        state = env.get_state_dict()
    finally:
        env.close()
    # equal up to float32 rounding of the env origin the batch slot adds (grid of 2 m: ~2e-7 m)
    assert np.allclose(state["actors"]["Block"][0].numpy(), group["env_states"]["actors"]["Block"][0], atol=1e-6)
    assert np.allclose(state["articulations"]["Robot"][0].numpy(), group["env_states"]["articulations"]["Robot"][0],
                       atol=1e-6)
    assert np.allclose(obs[0].numpy(), group["obs"][0], atol=1e-6)
    assert ds[2].done[-1] and not ds[2].done[:-1].any()


def test_failures_are_dropped_unless_kept(tmp_path):
    doomed = {"max_episode_steps": 3}  # no lift fits in 3 steps
    dropped = collect(CollectSettings("FrankaLift-v1", num_episodes=2, out=str(tmp_path / "a"), num_envs=2,
                                      max_tries=4, env_kwargs=doomed), progress=False)
    assert (dropped["episodes"], dropped["tries"], dropped["success_rate"], dropped["gave_up"]) == (0, 4, 0.0, True)
    assert len(load_dataset(str(tmp_path / "a"))) == 0
    kept = collect(CollectSettings("FrankaLift-v1", num_episodes=3, out=str(tmp_path / "b"), num_envs=2,
                                   keep_failures=True, env_kwargs=doomed), progress=False)
    ds = load_dataset(str(tmp_path / "b"))
    assert kept["episodes"] == 3 and kept["success_rate"] == 0.0 and not ds.successes.any()
    assert ds.lengths.tolist() == [3, 3, 3] and ds[0].done.tolist() == [False, False, True]


def test_full_episodes_run_to_the_time_limit_and_count_success_at_their_last_step(tmp_path):
    limit = 70
    full = collect(CollectSettings("FrankaLift-v1", num_episodes=2, out=str(tmp_path / "full"), fmt="hdf5", num_envs=2,
                                   seed=7, env_kwargs={"max_episode_steps": limit}, full_episodes=True), progress=False)
    ds = load_dataset(str(tmp_path / "full"))
    assert full["full_episodes"] and full["episodes"] == 2 and ds.lengths.tolist() == [limit, limit]
    assert ds.successes.all() and ds[0].done.tolist() == [False] * (limit - 1) + [True]
    from simulo_envs.datasets.hdf5 import read_group

    group = read_group(str(tmp_path / "full" / "trajectory.h5"), 0)
    assert not np.asarray(group["terminated"]).any() and np.asarray(group["success"]).sum() > 1  # held, not ended
    ended = collect(CollectSettings("FrankaLift-v1", num_episodes=2, out=str(tmp_path / "ended"), fmt="hdf5",
                                    num_envs=2, seed=7, env_kwargs={"max_episode_steps": limit}), progress=False)
    assert not ended["full_episodes"] and (load_dataset(str(tmp_path / "ended")).lengths < limit).all()
    assert ds.schema.full_episodes and not load_dataset(str(tmp_path / "ended")).schema.full_episodes
    with pytest.raises(ValueError, match="full_episodes: False != True|full_episodes: True != False"):
        collect(CollectSettings("FrankaLift-v1", num_episodes=1, out=str(tmp_path / "full"), fmt="hdf5", num_envs=1,
                                append=True, env_kwargs={"max_episode_steps": limit}), progress=False)
    assert len(load_dataset(str(tmp_path / "full"))) == 2   # the refused append wrote nothing


@pytest.mark.e2e
def test_rgb_episodes_in_two_worker_processes(tmp_path):
    out = tmp_path / "rgb"
    summary = collect(CollectSettings("FrankaLift-v1", num_episodes=3, out=str(out), num_envs=2, num_workers=2,
                                      obs_mode="rgb+state", env_kwargs={"sensor_configs": {"width": 64, "height": 48}}),
                      progress=False)
    assert summary["episodes"] == 3 and summary["success_rate"] == 1.0 and summary["error"] is None
    ds = load_dataset(str(out))
    assert ds.cameras == {"base_camera": (48, 64, 3)} and ds.obs_mode == "rgb+state"
    # the images and the whole state beside them (obs["state"] from the workers): 9 + 9 + 7 + 7 + 3 + 1
    assert len(ds.state_names) == 36 and ds.state_names[25:28] == ("block_pose.x", "block_pose.y", "block_pose.z")
    ep = ds[0]
    assert ep.observation_state.shape == (ep.length, 36) and ep.observation_state[:, 27].min() > 0.02  # block on the floor or above
    assert ep.images["base_camera"].shape == (ep.length, 48, 64, 3) and ep.images["base_camera"].dtype == torch.uint8
    assert ep.images["base_camera"].float().std() > 5  # a rendered scene, not a blank frame
    assert ds.stats["observation.images.base_camera"]["mean"].shape == (3, 1, 1)
    # the same settings in this process, three envs at a time: the same episodes, bit for bit
    collect(CollectSettings("FrankaLift-v1", num_episodes=2, out=str(tmp_path / "here"), num_envs=3,
                            obs_mode="rgb+state", env_kwargs={"sensor_configs": {"width": 64, "height": 48}}),
            progress=False)
    here = load_dataset(str(tmp_path / "here"))
    assert here.seeds.tolist() == ds.seeds.tolist()[:2]
    for k in range(2):
        a, b = ds.episode(k, images=False), here.episode(k, images=False)
        assert torch.equal(a.action, b.action) and torch.equal(a.observation_state, b.observation_state)


def test_command_line_summary_json_and_append(tmp_path, collect_main, capsys):
    """Both runs by the script's ``main`` in this process (its command line as a process of its
    own, stopped and killed: test_datasets_bad_input.py)."""
    out = str(tmp_path / "cli")
    capsys.readouterr()
    assert collect_main(["--env-id", "FrankaLift-v1", "--num-episodes", "2", "--num-envs", "2", "--out", out,
                         "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert {k: summary[k] for k in ("episodes", "success_rate", "out")} == {"episodes": 2, "success_rate": 1.0, "out": out}
    assert summary["frames"] > 0 and summary["seconds"] > 0
    assert lines[-2].startswith("FrankaLift-v1: wrote 2 episodes")
    assert collect_main(["--env-id", "FrankaLift-v1", "--num-episodes", "1", "--num-envs", "1", "--out", out,
                         "--append", "--json"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["episodes"] == 1 and again["error"] is None
    ds = load_dataset(out)
    assert len(ds) == 3 and ds.seeds[2] > max(ds.seeds[:2])  # appended seeds continue after the dataset's


@pytest.mark.parametrize("args, message", [
    (["--env-id", "NoSuchTask-v9"], "unknown env id 'NoSuchTask-v9'"),
    (["--env-id", "FrankaReach-v1"], "FrankaReach-v1 has no scripted expert"),
    (["--env-id", "FrankaLift-v1", "--obs-mode", "colour"], "colour"),
    (["--env-id", "FrankaLift-v1", "--control-mode", "pd_ee_delta_pose"], "is not supported: its part 'arm'"),
    (["--env-id", "FrankaLift-v1", "--control-mode", "pd_joint_vel"], "pd_joint_vel"),
    (["--env-id", "FrankaLift-v1", "--camera-size", "64", "64"],
     "--camera-size 64 64: obs mode 'state' records no camera image"),
    (["--env-id", "FrankaLift-v1", "--camera", "front=base_camera:32x24"],   # refused before the env is built
     "--camera front=base_camera:32x24: obs mode 'state' records no camera image"),
    (["--env-id", "FrankaLift-v1", "--control-mode", "pd_joint_pos", "--action-noise", "0.05"],
     "convert to no other control mode"),
])
def test_bad_arguments_are_refused_before_anything_is_written(tmp_path, capsys, collect_main, args, message):
    out = tmp_path / "never"
    with pytest.raises(SystemExit) as exit_info:
        collect_main([*args, "--num-episodes", "1", "--num-envs", "1", "--out", str(out)])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not out.exists()


def test_episodes_recorded_in_the_control_mode_asked(tmp_path, collect_main, capsys):
    """The experts drive pd_ee_delta_pos; each episode is converted into pd_joint_pos as it
    finishes, the dataset holds the converted episodes, and they replay in that mode as recorded."""
    from simulo_envs.datasets.replay_job import ReplaySettings, replay

    out = str(tmp_path / "joint")
    assert collect_main(["--env-id", "FrankaLift-v1", "--num-episodes", "3", "--num-envs", "2", "--control-mode",
                         "pd_joint_pos", "--format", "hdf5", "--out", out, "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    conversion = summary["conversion"]
    assert (conversion["from"], conversion["to"]) == ("pd_ee_delta_pos", "pd_joint_pos")
    assert conversion["converted"] >= 3 and conversion["still_succeed"] == 3 == summary["episodes"]
    assert conversion["success_rate"] == 3 / conversion["converted"]
    assert "converted pd_ee_delta_pos -> pd_joint_pos: 3/" in lines[-2]
    ds = load_dataset(out)
    assert ds.control_mode == "pd_joint_pos" and ds.schema.env_kwargs["control_mode"] == "pd_joint_pos"
    assert ds.action_names[:2] == ("panda_joint1.qpos", "panda_joint2.qpos") and ds.successes.all()  # [rad]
    first = ds[0].action.numpy()
    assert np.all(np.abs(first[:, :7]) <= 2 * np.pi) and np.abs(first[:, 0]).max() < 0.6  # joint angles [rad], not deltas
    again = replay(ReplaySettings(out, str(tmp_path / "again"), fmt="hdf5", obs_mode="state", num_envs=2),
                   progress=False)
    assert again["still_succeed"] == again["recorded_successes"] == 3   # the recorded actions redo each episode
    replayed = load_dataset(str(tmp_path / "again"))
    by_seed = {int(seed): i for i, seed in enumerate(ds.seeds)}
    for ep in replayed:
        assert np.array_equal(ep.observation_state.numpy(), ds[by_seed[ep.seed]].observation_state.numpy())
