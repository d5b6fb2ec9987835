"""scripts/replay.py and simulo_envs.datasets.replay: recorded episodes into another observation
mode (by actions, by env states), into another control mode, in worker processes; episodes of
another env and damaged files refused."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import DatasetLayoutError, SchemaMismatchError, load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.datasets.replay_job import ReplaySettings, recorded as recorded_episode, replay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_CAMERA = {"sensor_configs": {"width": 64, "height": 48}}


@pytest.fixture(scope="module")
def lift_demos(tmp_path_factory):
    """6 FrankaLift-v1 expert episodes, state only, HDF5 (with env states)."""
    out = tmp_path_factory.mktemp("demos") / "lift"
    summary = collect(CollectSettings("FrankaLift-v1", num_episodes=6, out=str(out), fmt="hdf5", num_envs=3, seed=7),
                      progress=False)
    assert summary["episodes"] == 6
    return str(out)


def test_obs_mode_by_actions_into_lerobot_rgb(lift_demos, tmp_path):
    out = tmp_path / "rgb"
    summary = replay(ReplaySettings(lift_demos, str(out), obs_mode="rgb", num_envs=2, count=2, env_kwargs=SMALL_CAMERA),
                     progress=False)
    assert (summary["replayed"], summary["still_succeed"], summary["success_rate"]) == (2, 2, 1.0)
    source, ds = load_dataset(lift_demos), load_dataset(str(out))
    assert ds.obs_mode == "rgb" and ds.control_mode == "pd_ee_delta_pos" and ds.cameras == {"base_camera": (48, 64, 3)}
    # images observe the robot's own state only: no block pose, no contact flag
    robot = [n for n in source.state_names if not n.startswith(("block_pose", "tcp_to_block", "is_grasped"))]
    assert list(ds.state_names) == robot and len(robot) == 9 + 9 + 7
    columns = [list(source.state_names).index(n) for n in robot]
    by_seed = {int(s): i for i, s in enumerate(source.seeds)}
    for ep in ds:
        recorded = source[by_seed[ep.seed]]
        assert ep.length == recorded.length and np.array_equal(ep.action.numpy(), recorded.action.numpy())
        # recorded in fresh physics (the default): the replay is the same trajectory, bit for bit
        assert np.array_equal(ep.observation_state.numpy(), recorded.observation_state.numpy()[:, columns])
        assert ep.images["base_camera"].shape == (ep.length, 48, 64, 3)


def test_obs_mode_by_env_states_is_exact(lift_demos, tmp_path):
    out = tmp_path / "states"
    summary = replay(ReplaySettings(lift_demos, str(out), fmt="hdf5", obs_mode="state_dict", use_env_states=True,
                                    num_envs=4), progress=False)
    assert summary["success_rate"] == 1.0 and summary["episodes"] == 6
    assert sorted(os.listdir(out)) == ["trajectory.h5", "trajectory.json"]   # a finished replay: two files
    source, ds = load_dataset(lift_demos), load_dataset(str(out))
    by_seed = {int(s): i for i, s in enumerate(source.seeds)}
    for ep in ds:
        recorded = source[by_seed[ep.seed]]
        assert ep.length == recorded.length
        assert np.allclose(ep.observation_state.numpy(), recorded.observation_state.numpy(), atol=1e-5)
        assert np.array_equal(ep.reward.numpy(), recorded.reward.numpy())
        assert np.array_equal(ep.done.numpy(), recorded.done.numpy())


@pytest.mark.parametrize("mode, names", [("pd_joint_pos", "panda_joint1.qpos"),
                                         ("pd_joint_delta_pos", "panda_joint1.delta_pos")])
def test_control_mode_conversion_still_succeeds(lift_demos, tmp_path, mode, names):
    out = tmp_path / mode
    summary = replay(ReplaySettings(lift_demos, str(out), fmt="hdf5", control_mode=mode, num_envs=3), progress=False)
    assert summary["success_rate"] == 1.0 and summary["episodes"] == 6 and summary["failed"] == []
    ds, source = load_dataset(str(out)), load_dataset(lift_demos)
    assert ds.control_mode == mode and ds.action_names[0] == names and ds.action_names[-1] == "gripper"
    actions = np.concatenate([ep.action.numpy() for ep in ds])
    assert actions.shape[1] == 8
    if mode == "pd_joint_pos":  # the same drive targets: the same trajectory, step for step
        assert ds.lengths.tolist() == [int(source.lengths[list(source.seeds).index(s)]) for s in ds.seeds]
    else:  # extra steps where the expert moved faster than 0.1 rad a step allows
        assert np.abs(actions).max() <= 1.0
        assert (ds.lengths > np.array([int(source.lengths[list(source.seeds).index(s)]) for s in ds.seeds])).all()
    # the replay ends each converted episode itself: the dataset records no time limit
    assert ds.schema.max_episode_steps is None and ds.schema.env_kwargs["max_episode_steps"] == -1
    assert summary["object_drift_m"]["max"] < 0.02 and summary["length_ratio"]["median"] >= 1.0


def test_a_motion_faster_than_the_delta_bound_converts_into_a_success(tmp_path):
    """FrankaPickPlace-v1, seed 3: the expert's joints move up to 0.15 rad in one step, while
    pd_joint_delta_pos moves a joint by at most 0.1 rad per step (measured: ~0.035 at its
    bound, ~0.7 rad/s). Converting by the recorded drive targets alone lost this episode (the
    cube grasped off-centre, short of the goal); following the recorded states with extra steps
    keeps it, on the first try."""
    source = tmp_path / "pick"
    collect(CollectSettings("FrankaPickPlace-v1", num_episodes=1, out=str(source), fmt="hdf5", num_envs=1, seed=3),
            progress=False)
    recorded = load_dataset(str(source))
    qpos = recorded_episode(recorded, 0).env_states["articulations"]["Robot"][:, 13:20]
    assert np.abs(np.diff(qpos, axis=0)).max() > 0.1  # the kind of input: faster than the bound
    summary = replay(ReplaySettings(str(source), str(tmp_path / "delta"), fmt="hdf5",
                                    control_mode="pd_joint_delta_pos", num_envs=1, max_retries=0), progress=False)
    assert summary["success_rate"] == 1.0 and summary["first_try_success_rate"] == 1.0
    converted = load_dataset(str(tmp_path / "delta"))
    assert converted.successes.tolist() == [True] and converted.seeds.tolist() == [3]
    assert converted.lengths[0] > 1.5 * recorded.lengths[0]  # the extra steps
    assert summary["object_drift_m"]["max"] < 0.02  # the cube went where it went when recorded


@pytest.mark.parametrize("mode, followed", [("pd_joint_delta_pos", list(range(7))), ("pd_joint_pos", [])])
def test_the_converter_knows_which_targets_one_step_can_set(mode, followed):
    import gymnasium as gym

    from simulo_envs.datasets.convert import ActionConverter, joint_positions

    env = gym.make("FrankaLift-v1", num_envs=2, control_mode=mode)
    try:
        env.reset(seed=[0, 1])
        converter = ActionConverter(env)
        assert converter.followed.tolist() == followed
        qpos = joint_positions(env)
        targets = qpos.copy()
        targets[0, 3] += 0.09  # within the 0.1 rad bound
        targets[1, 3] += 0.2  # beyond it
        targets[:, 7:] = -0.01  # the gripper closes: absolute, always one step
        assert converter.reachable(targets, qpos).tolist() == ([True, False] if followed else [True, True])
    finally:
        env.close()


def test_cartesian_target_modes_are_refused_before_any_write(lift_demos, tmp_path):
    with pytest.raises(NotImplementedError, match="not joint position control"):
        replay(ReplaySettings(lift_demos, str(tmp_path / "x"), control_mode="pd_ee_pose"), progress=False)
    assert not (tmp_path / "x").exists()


@pytest.mark.e2e  # two worker processes: about 20 s of CPU
def test_replay_in_two_workers_from_a_lerobot_source(lift_demos, tmp_path):
    """The same episodes, bit for bit, in two worker processes and in this one at another batch
    size (an isolated recording replays in fresh physics)."""
    lerobot = tmp_path / "lerobot"
    replay(ReplaySettings(lift_demos, str(lerobot), num_envs=2, count=4), progress=False)
    summary = replay(ReplaySettings(str(lerobot), str(tmp_path / "back"), fmt="hdf5", obs_mode="state_dict",
                                    num_envs=2, num_workers=2), progress=False)
    assert summary["replayed"] == 4 and summary["success_rate"] == 1.0 and summary["error"] is None
    assert sorted(load_dataset(str(tmp_path / "back")).seeds.tolist()) == sorted(load_dataset(str(lerobot)).seeds.tolist())
    replay(ReplaySettings(str(lerobot), str(tmp_path / "here"), fmt="hdf5", obs_mode="state_dict", num_envs=3),
           progress=False)
    workers, here = load_dataset(str(tmp_path / "back")), load_dataset(str(tmp_path / "here"))
    for seed in workers.seeds.tolist():
        a, b = workers[workers.seeds.tolist().index(seed)], here[here.seeds.tolist().index(seed)]
        assert torch.equal(a.action, b.action) and torch.equal(a.observation_state, b.observation_state)
        assert torch.equal(a.reward, b.reward)


# ---------------------------------------------------------------------- bad input
def test_episodes_of_another_env_are_refused(lift_demos, tmp_path):
    with pytest.raises(SchemaMismatchError, match="holds episodes of FrankaLift-v1, not FrankaPush-v1"):
        replay(ReplaySettings(lift_demos, str(tmp_path / "a"), env_id="FrankaPush-v1"), progress=False)
    forged = tmp_path / "forged"
    shutil.copytree(lift_demos, forged)
    sidecar = forged / "trajectory.json"
    meta = json.loads(sidecar.read_text())
    meta["env_info"]["env_id"] = meta["simulo_schema"]["env_id"] = "FrankaOpenDrawer-v1"
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(SchemaMismatchError, match="a trajectory of another env"):
        replay(ReplaySettings(str(forged), str(tmp_path / "b"), fmt="hdf5", num_envs=2), progress=False)
    assert not (tmp_path / "a").exists()


def test_initial_states_that_the_seed_does_not_give_are_refused(lift_demos, tmp_path):
    forged = tmp_path / "forged"
    shutil.copytree(lift_demos, forged)
    sidecar = forged / "trajectory.json"
    meta = json.loads(sidecar.read_text())
    for record in meta["episodes"]:
        record["episode_seed"] += 1000
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(SchemaMismatchError, match="reset\\(seed\\) of this env gives another initial state"):
        replay(ReplaySettings(str(forged), str(tmp_path / "out"), num_envs=2), progress=False)


def test_command_line_names_a_truncated_file_and_prints_json(lift_demos, tmp_path, capsys):
    """The refusal runs the script's ``main`` in this process (it needs no process of its own); the
    replay runs the command line as its own process."""
    script = os.path.join(ROOT, "scripts", "replay.py")
    broken = tmp_path / "broken"
    shutil.copytree(lift_demos, broken)
    main = broken / "trajectory.h5"
    main.write_bytes(main.read_bytes()[:100])
    spec = importlib.util.spec_from_file_location("replay_script", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    try:
        with pytest.raises(SystemExit) as refused:
            module.main(["--source", str(broken), "--out", str(tmp_path / "o")])
    finally:
        torch.set_num_threads(threads)   # the script's setting, given back
    assert refused.value.code == 2 and "trajectory.h5 is not a readable HDF5 file" in capsys.readouterr().err
    ok = subprocess.run([sys.executable, script, "--source", lift_demos, "--out", str(tmp_path / "o"), "--count", "2",
                         "--num-envs", "2", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert ok.returncode == 0, ok.stderr
    summary = json.loads(ok.stdout.strip().splitlines()[-1])
    assert {k: summary[k] for k in ("episodes", "success_rate")} == {"episodes": 2, "success_rate": 1.0}
    assert summary["frames"] > 0 and summary["seconds"] > 0 and summary["out"] == str(tmp_path / "o")
    assert "2/2 recorded successes still succeed" in ok.stdout.strip().splitlines()[-2]


def test_layout_errors_name_the_source(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetLayoutError, match="is not a dataset"):
        replay(ReplaySettings(str(tmp_path / "empty"), str(tmp_path / "o")), progress=False)


@pytest.mark.parametrize("env_id, mode", [("SO100Lift-v1", "pd_joint_pos_lerobot"), ("SO100Lift-v1", "pd_joint_delta_pos"),
                                          ("FrankaLift-v1", "pd_joint_pos")])
def test_converter_actions_set_the_wanted_drive_targets(env_id, mode):
    import gymnasium as gym

    from simulo_envs.datasets.convert import ActionConverter, as_tensor, drive_targets, joint_positions

    env = gym.make(env_id, num_envs=2, control_mode=mode)
    try:
        env.reset(seed=[3, 4])
        converter = ActionConverter(env)
        qpos = joint_positions(env)
        wanted = qpos - np.array([0.02, 0.03], np.float32)[:, None]  # within one step of every bound, the grippers open
        base = env.unwrapped
        for ctrl in base.agent.controller.controllers.values():  # a mimic part moves its joints together
            if ctrl.config.mimic:
                joints = ctrl.joint_index.cpu().numpy()
                wanted[:, joints] = wanted[:, joints[:1]]
        env.step(as_tensor(converter.actions(wanted, qpos), env))
        assert np.allclose(drive_targets(env), wanted, atol=1e-4)
    finally:
        env.close()


def test_bad_target_modes_and_output_folders_are_refused_untouched(lift_demos, tmp_path):
    from simulo_envs.datasets import DatasetExistsError

    with pytest.raises(ValueError, match="colour"):
        replay(ReplaySettings(lift_demos, str(tmp_path / "a"), obs_mode="colour"), progress=False)
    # --camera-size on a state replay (the source's mode): no camera to size, said rather than ignored
    with pytest.raises(ValueError, match="obs mode 'state' records no camera image"):
        replay(ReplaySettings(lift_demos, str(tmp_path / "a"), env_kwargs=SMALL_CAMERA), progress=False)
    assert not (tmp_path / "a").exists()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    with pytest.raises(DatasetExistsError, match="not a dataset"):
        replay(ReplaySettings(lift_demos, str(notes), count=1, num_envs=1), progress=False)
    assert [p.name for p in notes.iterdir()] == ["todo.txt"] and (notes / "todo.txt").read_text() == "mine"
    before = {p: p.read_bytes() for p in sorted(__import__("pathlib").Path(lift_demos).rglob("*")) if p.is_file()}
    with pytest.raises(SchemaMismatchError, match="obs_mode"):  # a dataset of other modes: not even with --append
        replay(ReplaySettings(lift_demos, lift_demos, fmt="hdf5", obs_mode="state_dict", append=True, count=1,
                              num_envs=1), progress=False)
    assert {p: p.read_bytes() for p in before} == before
