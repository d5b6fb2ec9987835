"""Where the scripts write: a training's log folder holds one run (an earlier run is refused,
naming --resume and --overwrite; --overwrite leaves none of it behind), and every output path is
checked before any work, with the path and the reason; results already computed are printed
before anything is written."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

pytest.importorskip("rsl_rl")

from simulo_envs.training import rsl_rl_train as training  # noqa: E402
from simulo_envs.training.saved_runs import SetupError  # noqa: E402
from simulo_envs.wrappers.record import RecordEpisode  # noqa: E402
from simulo_envs.training.run_files import (OutputError, check_output_dir, check_output_file,  # noqa: E402
                                            claim_log_dir, latest_checkpoint)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = ["--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "100", "--no-progress"]


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def error_line(capsys, main, argv) -> str:
    """``main(argv)`` must exit with status 2 and an argparse error line, no traceback."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err, err
    return err.strip().splitlines()[-1]


@pytest.fixture
def no_work(monkeypatch):
    """Building an env, evaluating or rolling out fails the test: the checks must come first."""
    def refuse(*args, **kwargs):
        raise AssertionError("work started before the output paths were checked")

    import simulo_envs.training.rsl_rl_env as rsl_rl_env
    import simulo_envs.training.sb3_train as sb3_training

    # evaluation imports rsl_rl_env.make_rsl_env when it evaluates: patched there, it refuses there too
    for module, name in ((rsl_rl_env, "make_vector_env"), (rsl_rl_env, "make_rsl_env"), (training, "make_rsl_env"),
                         (sb3_training, "make_vector_env")):
        monkeypatch.setattr(module, name, refuse)
    return refuse


def test_a_log_folder_with_an_earlier_run_is_refused_then_overwritten_whole(tmp_path, capsys, monkeypatch):
    log_dir = tmp_path / "run"
    train = load_script("train").main
    train([*ARGS, "--total-timesteps", "200", "--checkpoint-every", "1", "--log-dir", str(log_dir)])
    first = sorted(os.listdir(log_dir))
    assert {"run.json", "progress.csv", "model_0.pt", "model_1.pt", "model_final.pt"} <= set(first)
    (log_dir / "evaluations.csv").write_text("checkpoint,env_steps,success_rate\nmodel_1.pt,200,0.5\n")
    capsys.readouterr()

    line = error_line(capsys, train, [*ARGS, "--log-dir", str(log_dir)])
    assert f"'{log_dir}' holds an earlier run (run.json, progress.csv, model_0.pt, model_1.pt and " in line
    assert "pass --resume to continue it, --overwrite to delete it and start again, or --log-dir " in line
    assert line.endswith(f"{log_dir}-2")
    assert sorted(os.listdir(log_dir)) == sorted(first + ["evaluations.csv"])   # untouched

    train([*ARGS, "--log-dir", str(log_dir), "--overwrite"])
    left = sorted(os.listdir(log_dir))
    events = [name for name in left if name.startswith("events.out")]
    assert len(events) == 1 and "evaluations.csv" not in left and "model_1.pt" not in left
    assert [r.split(",")[1] for r in (log_dir / "progress.csv").read_text().splitlines()[1:]] == ["100"]
    assert "--resume continues" in error_line(capsys, train, [*ARGS, "--log-dir", str(log_dir), "--resume",
                                                             "--overwrite"])


def test_claim_and_latest_checkpoint(tmp_path):
    assert claim_log_dir(str(tmp_path / "new")) == [] and not (tmp_path / "new").exists()
    with pytest.raises(OutputError, match="holds no earlier run to continue"):
        claim_log_dir(str(tmp_path / "new"), resume=True)
    (tmp_path / "old").mkdir()
    for name in ("model_5.pt", "model_40.pt", "notes.txt"):
        (tmp_path / "old" / name).write_text("x")
    assert claim_log_dir(str(tmp_path / "old"), overwrite=True) == ["model_40.pt", "model_5.pt"]
    assert latest_checkpoint(str(tmp_path / "old")).endswith("model_40.pt")
    (tmp_path / "notes").mkdir()   # files, none of a run: never mixed with a run's (hidden ones do not count)
    for name in ("notes.txt", ".DS_Store"):
        (tmp_path / "notes" / name).write_text("x")
    for flags in ({}, {"overwrite": True}):
        with pytest.raises(OutputError, match=r"log folder '.*notes' holds something else than a training "
                                              r"\(notes.txt\): choose a new or empty folder"):
            claim_log_dir(str(tmp_path / "notes"), **flags)


def unwritable(tmp_path) -> str:
    """A folder path nothing can be written under, for root too: a path through a file."""
    (tmp_path / "a_file").write_text("x")
    return str(tmp_path / "a_file" / "out")


def test_output_checks_name_the_path_and_the_reason(tmp_path):
    bad = unwritable(tmp_path)
    with pytest.raises(OutputError, match=rf"cannot write video folder '{bad}': '{tmp_path}/a_file' is a file"):
        check_output_dir(bad, "video folder")
    with pytest.raises(OutputError, match=rf"cannot write CSV file '{bad}/x.csv'.*is a file"):
        check_output_file(f"{bad}/x.csv", "CSV file")
    with pytest.raises(OutputError, match="it is a folder"):
        check_output_file(str(tmp_path), "CSV file")
    assert check_output_dir(str(tmp_path / "new" / "deeper")) and not (tmp_path / "new").exists()
    if os.geteuid() != 0:   # permissions bind everyone but root
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(OutputError, match=rf"cannot write log folder '{locked}/run': Permission denied"):
            check_output_dir(str(locked / "run"), "log folder")


def test_unwritable_outputs_fail_before_any_work(tmp_path, capsys, no_work):
    bad = unwritable(tmp_path)
    assert f"cannot write log folder '{bad}'" in error_line(capsys, load_script("train").main,
                                                            [*ARGS, "--log-dir", bad])
    assert f"cannot write log folder '{bad}'" in error_line(capsys, load_script("train_sb3").main,
                                                            [*ARGS, "--log-dir", bad])
    notes = tmp_path / "notes"   # a folder of something else: refused before any work as well
    notes.mkdir()
    (notes / "notes.txt").write_text("x")
    for script in ("train", "train_sb3"):
        assert "holds something else than a training (notes.txt)" in error_line(
            capsys, load_script(script).main, [*ARGS, "--log-dir", str(notes)])
    evaluate = load_script("evaluate").main
    assert f"cannot write video folder '{bad}'" in error_line(capsys, evaluate,
                                                              ["--checkpoint", "x.pt", "--video-dir", bad])
    assert f"cannot write CSV file '{bad}/e.csv'" in error_line(capsys, evaluate,
                                                                ["--checkpoint", "x.pt", "--csv", f"{bad}/e.csv"])
    assert f"cannot write video file '{bad}/demo.mp4'" in error_line(capsys, load_script("demo").main,
                                                                     ["--video", f"{bad}/demo.mp4"])
    import gymnasium as gym

    env = gym.make("FrankaReach-v1", num_envs=1, render_mode="rgb_array")   # no camera picture taken yet
    with pytest.raises(OutputError, match=rf"cannot write RecordEpisode output_dir '{bad}'"):
        RecordEpisode(env, bad)
    env.close()


def test_missing_folders_are_made_only_where_the_option_says_and_never_at_the_root(tmp_path, capsys, no_work):
    """A folder option makes its folder with its parents; a file option makes its own folder only
    in an existing one; neither makes a new folder at the file system's root (a typo)."""
    top = f"/simulo-missing-{os.getpid()}"
    assert check_output_dir(str(tmp_path / "a" / "b")) and check_output_file(str(tmp_path / "a" / "x.csv"))
    with pytest.raises(OutputError, match=rf"cannot write CSV file '{tmp_path}/a/b/x.csv': its folder '{tmp_path}/a/b': "
                                          rf"'{tmp_path}/a' does not exist \(a file's folder is made only in an existing "
                                          rf"folder\): create it first if it is meant"):
        check_output_file(str(tmp_path / "a" / "b" / "x.csv"), "CSV file")
    with pytest.raises(OutputError, match=rf"cannot write video folder '{top}/videos': '{top}' does not exist, and no "
                                          rf"folder is made at the file system's root"):
        check_output_dir(f"{top}/videos", "video folder")
    assert f"its folder '{top}/dir': '{top}' does not exist, and no folder is made at the file system's root" in \
        error_line(capsys, load_script("evaluate").main, ["--checkpoint", "x.pt", "--csv", f"{top}/dir/x.csv"])
    assert not os.path.exists(top) and os.listdir(tmp_path) == []
    if os.path.isdir("/proc/self"):   # a folder that exists but takes no file: named as not writable
        assert error_line(capsys, load_script("evaluate").main, ["--checkpoint", "x.pt", "--csv", "/proc/x.csv"]) \
            .endswith("error: cannot write CSV file '/proc/x.csv': its folder '/proc': it is not writable")


def test_camera_options_a_state_policy_would_ignore_are_refused_before_any_work(tmp_path, capsys):
    """A state policy reads no image: a camera size or a choice of cameras would be recorded and
    change nothing, so every script refuses them in the options' own words, before any work."""
    state_policy = ("a state policy reads no camera image, so it would change nothing: leave it out, or train a "
                    "policy that reads images (train_il.py --obs rgb, or an image student: train.py --teacher)")
    train = load_script("train").main
    for extra, given in ((["--camera-size", "32", "24"], "--camera-size 32 24"),
                         (["--cameras", "base_camera"], "--cameras base_camera")):
        assert error_line(capsys, train, [*ARGS, "--log-dir", str(tmp_path / "rl"), *extra]).endswith(
            f"error: {given}: {state_policy}")
    assert error_line(capsys, load_script("train_sb3").main, [*ARGS, "--camera-size", "32", "24"]).endswith(
        "error: --camera-size needs --obs-mode rgb (a state policy reads no camera image)")
    line = error_line(capsys, load_script("train_il").main, ["--dataset", str(tmp_path / "demos"), "--camera-size",
                                                             "32", "24", "--camera", "front", "--camera", "wrist",
                                                             "--out", str(tmp_path / "il")])
    assert line.endswith("error: --camera-size 32 24 and --camera front --camera wrist: a state policy reads no "
                         "camera image, so they would change nothing: leave them out, or train a policy that reads "
                         "images (train_il.py --obs rgb, or an image student: train.py --teacher)"), line
    evaluate = load_script("evaluate").main
    for checkpoint in ("franka_lift_ppo.pt", "franka_push_diffusion_state.pt"):   # RL and imitation
        assert error_line(capsys, evaluate, ["--checkpoint", os.path.join(ROOT, "tasks", checkpoint), "--camera-size",
                                             "32", "24", "--episodes", "1"]).endswith(
            "error: --camera-size 32 24: this checkpoint is a state policy, which reads no camera image, so it would "
            "change nothing: leave it out")
    assert not (tmp_path / "rl").exists() and not (tmp_path / "il").exists()


def test_ctrl_c_while_a_training_starts_is_one_line_and_status_130(tmp_path, capsys, monkeypatch):
    """After the plan line, libraries load and envs build for seconds before the loop that handles
    Ctrl-C: a Ctrl-C there ends the script with one line, no traceback, status 130."""
    import simulo_envs.training.sb3_train as sb3_training

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "claim_log_dir", ctrl_c)        # inside train(), before its loop
    monkeypatch.setattr(sb3_training, "claim_log_dir", ctrl_c)    # inside train_sb3(), before its loop
    for script in ("train", "train_sb3"):
        with pytest.raises(SystemExit) as stopped:
            load_script(script).main([*ARGS, "--log-dir", str(tmp_path / script)])
        captured = capsys.readouterr()
        assert stopped.value.code == 130 and captured.out.startswith("training FrankaReach-v1: ")
        assert captured.err == ("interrupted by SIGINT while the training was starting: nothing new saved; "
                                "the same command starts it again\n")


def test_evaluation_results_are_printed_before_the_video_is_written(tmp_path, capsys, monkeypatch):
    log_dir = tmp_path / "run"
    load_script("train").main([*ARGS, "--log-dir", str(log_dir)])
    capsys.readouterr()
    evaluate = load_script("evaluate")

    def broken_video(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(evaluate, "record_policy_video", broken_video)
    for extra, printed in (([], "FrankaReach-v1: success rate "), (["--json"], '"success_rate": ')):
        with pytest.raises(SystemExit):
            evaluate.main(["--checkpoint", str(log_dir / "model_final.pt"), "--episodes", "2", "--no-progress",
                           "--video-dir", str(tmp_path / "videos"), "--max-episode-steps", "4", *extra])
        captured = capsys.readouterr()
        assert printed in captured.out, captured.out
        assert f"the video could not be written to {tmp_path / 'videos'}: Read-only file system" in captured.err
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert summary["episodes"] == 2 and "video" not in summary
    # an RL checkpoint takes a time limit as an imitation one does: every episode ends at step 4 at the latest
    assert max(row[4] for row in summary["per_episode"]) <= 4 and summary["provenance"]["env"]["max_episode_steps"] == 4


@pytest.mark.parametrize("preset, said", [("visual", " under randomization visual"), ("default", ""), (None, "")])
def test_the_evaluation_line_names_a_randomization_other_than_the_tasks_own(preset, said):
    summary = {"env_id": "SO100Lift-v1", "episodes": 2, "success_rate": 0.5, "success_at_end": 0.5, "mean_return": 1.0,
               "mean_length": 10.0, "env_steps": None,
               "provenance": {"env": {"env_kwargs": {} if preset is None else {"randomization": preset}}}}
    line = load_script("evaluate")._describe(summary, several=False)
    assert line == ("SO100Lift-v1: success rate 50.0% over 2 episodes (success at end 50.0%, mean return 1.00, "
                    "mean length 10.0)" + said)


def test_a_run_without_a_checkpoint_is_no_earlier_run_to_keep(tmp_path):
    """A run stopped before its first iteration leaves run.json and an empty log: a new run takes
    the folder (its leftovers to delete), and --resume says there is nothing to continue."""
    (tmp_path / "run").mkdir()
    for name in ("run.json", "progress.csv", "notes.txt"):
        (tmp_path / "run" / name).write_text("x")
    assert claim_log_dir(str(tmp_path / "run")) == ["run.json", "progress.csv"]
    with pytest.raises(OutputError, match="saved no checkpoint: leave out --resume to start it again there"):
        claim_log_dir(str(tmp_path / "run"), resume=True)
    (tmp_path / "run" / "model.zip").write_text("x")
    assert claim_log_dir(str(tmp_path / "run"), resume=True) == []
    with pytest.raises(OutputError, match="holds an earlier run"):
        claim_log_dir(str(tmp_path / "run"))


def _saved(log_dir, env_id="FrankaReach-v1", **config) -> str:
    """A log folder with a checkpoint recording a run of ``env_id`` (what ``saved_run`` reads)."""
    import torch

    os.makedirs(log_dir, exist_ok=True)
    train_config = {"num_envs": 4, "total_timesteps": 300, "env_kwargs": {}, "runner": {"save_interval": 7}, **config}
    torch.save({"infos": {"env_id": env_id, "seed": 3, "train_config": train_config}},
               os.path.join(log_dir, "model_1.pt"))
    return str(log_dir)


def test_a_resumed_run_compares_what_the_env_resolves_and_names_the_options(tmp_path):
    from simulo_envs.training.saved_runs import take_saved_run

    log_dir = _saved(tmp_path / "run")
    given = {"sim_backend": "physx_cpu", "randomization": "default"}   # the run used them by default
    run = take_saved_run(log_dir, {"--seed": 3, "--env-id": "FrankaReach-v1"}, given)
    assert given == {} and (run.seed, run.num_envs, run.total_timesteps, run.checkpoint_every) == (3, 4, 300, 7)
    for option, env_kwargs, message in (
            ("--sim-backend", {"sim_backend": "physx_cuda_emulated"}, "--sim-backend physx_cpu, not physx_cuda_emulated"),
            ("--camera-size", {"sensor_configs": {"width": 16, "height": 16}}, "--camera-size (the task's own), not 16 16"),
            ("--seed", {}, "--seed 3, not 4"), ("--teacher", {}, "is a PPO run, not a student")):
        extra = {"--seed": 4} if option == "--seed" else {"--teacher": "t.pt"} if option == "--teacher" else {}
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            take_saved_run(log_dir, extra, dict(env_kwargs))
    student = _saved(tmp_path / "student", cameras=["base_camera"], teacher={"checkpoint": "tasks/so100_lift_ppo.pt"},
                     env_kwargs={"sensor_configs": {"width": 16, "height": 16}})
    with pytest.raises(ValueError, match="trained without --terminations: a resumed run keeps its settings"):
        take_saved_run(log_dir, {"--terminations": True}, {})
    with pytest.raises(ValueError, match="--cameras base_camera, not wrist_camera"):
        take_saved_run(student, {"--cameras": ["wrist_camera"]}, {})
    with pytest.raises(ValueError, match="--camera-size 16 16, not 32 32"):
        take_saved_run(student, {}, {"sensor_configs": {"width": 32, "height": 32}})
    run = take_saved_run(student, {"--cameras": ["base_camera"], "--teacher": os.path.join(ROOT, "tasks",
                                                                                           "so100_lift_ppo.pt")}, {})
    assert run.teacher == "tasks/so100_lift_ppo.pt" and run.cameras == ["base_camera"]


def test_a_resumed_randomization_compares_by_the_table_it_resolves_to_both_ways(tmp_path, monkeypatch):
    """``none`` is ``default`` for FrankaReach-v1 (its own table is empty) and not for
    FrankaLiftRandomized-v1, whichever of the two the run trained with and whichever is given again;
    ``visual`` is not ``default`` where the task has a visual table: train.py's and train_il.py's
    resume agree on it (one reader: saved_runs.same_env_setting)."""
    import argparse

    from simulo_envs.imitation import checkpoint as il_checkpoint
    from simulo_envs.training.saved_runs import take_saved_run

    cases = [("FrankaReach-v1", None, "none", None), ("FrankaReach-v1", "none", "default", None),
             ("FrankaLiftRandomized-v1", None, "none", "--randomization default, not none"),
             ("FrankaLiftRandomized-v1", "none", "default", "--randomization none, not default"),
             ("FrankaLift-v1", None, "visual", "--randomization default, not visual")]
    train_il = load_script("train_il")
    for k, (env_id, trained, given, refused) in enumerate(cases):
        log_dir = _saved(tmp_path / str(k), env_id, env_kwargs={} if trained is None else {"randomization": trained})
        raw = {"spec": {"env_id": env_id, "obs": "state", "randomization": trained}, "seed": 0, "iteration": 10,
               "config": {"policy": "bc", "iterations": 100}, "demos": {"episodes": 4}, "train_state": {}}
        monkeypatch.setattr(il_checkpoint, "read_checkpoint", lambda path: raw)
        args = argparse.Namespace(resume=os.path.join(log_dir, "model_10.pt"), policy=None, obs=None, seed=None,
                                  randomization=given, num_demos=None, checkpoint_every=None, camera=None, out=None)
        if refused:
            with pytest.raises(ValueError, match=refused):
                take_saved_run(log_dir, {}, {"randomization": given})
            with pytest.raises(ValueError, match=refused):
                train_il.take_resumed_run(args, {})
        else:
            env_kwargs = {"randomization": given}
            take_saved_run(log_dir, {}, env_kwargs)
            overrides = {}
            train_il.take_resumed_run(args, overrides)
            assert env_kwargs == ({} if trained is None else {"randomization": trained})   # the run's own spelling
            assert args.randomization == trained and overrides == {"iterations": 100}


def test_a_resumed_checkpoint_whose_networks_read_other_inputs_is_refused(tmp_path):
    """resume_infos (what train() checks too) refuses a student's checkpoint for a plan with other
    cameras or camera size, before anything is built or written."""
    from simulo_envs.tasks.franka_reach import FrankaReachEnv

    runner = {"num_steps_per_env": 25, "obs_groups": {"student": ["base_camera", "proprio"]}}
    saved = {"cameras": ["base_camera"], "env_kwargs": {"sensor_configs": {"width": 16, "height": 16}}}
    log_dir = _saved(tmp_path / "student", runner=runner, **saved)
    import torch

    path = os.path.join(log_dir, "model_1.pt")
    checkpoint = torch.load(path, weights_only=False)
    checkpoint["infos"].update(iterations=2, env_steps=200)
    torch.save(checkpoint, path)

    def plan(cameras, size):
        config = {"num_envs": 4, "cameras": cameras, "env_kwargs": {"sensor_configs": {"width": size, "height": size}},
                  "runner": {**runner, "obs_groups": {"student": [*cameras, "proprio"]}}}
        return training.TrainPlan("FrankaReach-v1", FrankaReachEnv, config, 4, 1, 25, 3, 300)

    assert training.resume_infos(log_dir, plan(["base_camera"], 16))[0] == path
    with pytest.raises(SetupError, match=r"on cameras \['base_camera'\], not \['wrist_camera'\]"):
        training.resume_infos(log_dir, plan(["wrist_camera"], 16))
    with pytest.raises(SetupError, match="on camera size"):
        training.resume_infos(log_dir, plan(["base_camera"], 32))
