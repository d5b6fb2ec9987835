"""scripts/train.py, evaluate.py and plot_training.py: what they train, what they print, the errors
they give, tasks from the user's own module, and titles from the data."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("rsl_rl")

from simulo_envs.training.rsl_rl_train import plan_training, train, train_config_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_line_error(capsys, main, argv) -> str:
    """Run a script's ``main``; it must exit with status 2 and one argparse-style error line."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert ": error: " in last, err
    return last


@pytest.mark.e2e
def test_train_then_evaluate_scripts(tmp_path, capsys, one_torch_thread):
    """The command lines end to end: one iteration in which no episode finishes, then evaluation of
    both checkpoints in a process of its own; then the video of the final one. train.py and the
    video's evaluate.py run by their ``main`` in this process (a fresh process pays seconds of CPU
    for torch's import and its renderer's first picture; this one pays them once for all its tests;
    train.py's command line in a process of its own: test_train_interrupt.py, test_distributed.py).
    Nothing prints nan or the networks."""
    log_dir = tmp_path / "run"
    capsys.readouterr()
    load_script("train").main(["--env-id", "FrankaReach-v1", "--num-envs", "4", "--total-timesteps", "100",
                               "--seed", "1", "--log-dir", str(log_dir)])
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("training FrankaReach-v1: 100 env steps = 1 PPO iteration x 4 envs x 25 steps")
    assert "no training episode finished" in out and "nan" not in out + err
    assert "Actor Model" not in out and "no finished episode yet" in err   # the bar's note
    rows = (log_dir / "progress.csv").read_text().splitlines()
    assert rows[0] == "iteration,env_steps,wall_s,episodes,success_once,success_at_end,return,length,collect_s,learn_s"
    wall, collect, learn = (float(rows[1].split(",")[i]) for i in (2, 8, 9))
    assert rows[1].startswith("0,100,") and rows[1].split(",")[3:8] == ["0", "", "", "", ""] and len(rows) == 2
    assert collect > 0 and learn > 0 and collect + learn <= wall + 0.1   # this iteration's rollout and update
    assert json.loads((log_dir / "run.json").read_text())["env_id"] == "FrankaReach-v1"
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(log_dir))

    table = tmp_path / "tables" / "evaluations.csv"   # a folder not there yet: made, as checked up front
    checkpoints = ["--checkpoint", str(log_dir / "model_final.pt"), str(log_dir / "model_0.pt"), "--episodes", "3"]
    evaluation = subprocess.run([sys.executable, "scripts/evaluate.py", *checkpoints, "--csv", str(table)],
                                cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert evaluation.returncode == 0, evaluation.stdout[-2000:] + evaluation.stderr[-4000:]
    assert "Actor" not in evaluation.stdout and "MLPModel" not in evaluation.stdout
    assert "3/3" in evaluation.stderr and "evaluating FrankaReach-v1" in evaluation.stderr   # the progress bar
    summaries = list(csv.DictReader(table.open()))
    assert [os.path.basename(r["checkpoint"]) for r in summaries] == ["model_0.pt", "model_final.pt"]
    assert all(r["env_steps"] == "100" and r["episodes"] == "3" and 0 <= float(r["success_rate"]) <= 1
               for r in summaries)
    capsys.readouterr()
    load_script("evaluate").main(["--checkpoint", str(log_dir / "model_final.pt"), "--episodes", "1",
                                  "--video-dir", str(tmp_path / "videos")])
    filmed = capsys.readouterr().out.strip().splitlines()
    assert filmed[0].startswith("FrankaReach-v1: success rate") and filmed[-1].startswith("video: ")
    assert filmed[-1].endswith("FrankaReach-v1.mp4")
    import imageio.v3 as iio

    video = iio.imread(tmp_path / "videos" / "FrankaReach-v1.mp4")
    assert video.ndim == 4 and video.shape[0] >= 2 and video.shape[-1] == 3


def test_budget_is_whole_iterations_within_total_timesteps():
    plan = plan_training("FrankaReach-v1", num_envs=4, total_timesteps=250)
    assert (plan.iterations, plan.env_steps) == (2, 200)
    assert "200 env steps" in plan.describe() and "budget 250 rounded down" in plan.describe()
    assert "rounded" not in plan_training("FrankaReach-v1", num_envs=4, total_timesteps=300).describe()
    with pytest.raises(ValueError, match=r"less than one PPO iteration.*128 envs x 50 steps = 6,400"):
        plan_training("FrankaLift-v1", total_timesteps=5_000)
    assert plan_training("FrankaLift-v1", total_timesteps=20_000, num_envs=256).env_steps == 12_800
    with pytest.raises(ValueError, match="does not split evenly over 2 ranks"):
        plan_training("FrankaReach-v1", num_envs=5, world_size=2)


def test_progress_bar_moves_every_env_step(tmp_path, monkeypatch):
    from simulo_envs.training.rsl_rl_runner import ProgressLogger

    seen = []
    original = ProgressLogger.process_env_step

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append(self.progress_bar.n)

    monkeypatch.setattr(ProgressLogger, "process_env_step", spy)
    result = train("FrankaReach-v1", num_envs=4, total_timesteps=200, seed=0, log_dir=str(tmp_path), progress=True)
    assert seen == list(range(4, 204, 4))   # 4 envs per step, 2 rollouts of 25 steps
    assert result.env_steps == 200 and result.episodes == 4 and result.success_once is not None


def test_lift_mixed_trains_with_its_parent_tasks_config(capsys):
    plan = plan_training("FrankaLiftMixed-v1", num_envs=2, total_timesteps=100)
    assert plan.config["runner"] == train_config_for("FrankaLift-v1")["runner"]
    err = one_line_error(capsys, load_script("train").main, ["--env-id", "FrankaLiftMixed-v1",
                                                             "--total-timesteps", "5000"])
    assert "less than one PPO iteration of FrankaLiftMixed-v1" in err and "6,400" in err


USER_TASKS = textwrap.dedent("""
    import copy
    from simulo_envs.envs.base_env import BaseEnv
    from simulo_envs.envs.registration import register_env
    from simulo_envs.tasks.franka_reach import TRAIN_CONFIG, FrankaReachEnv

    @register_env("UserReach-v1", max_episode_steps=10)
    class UserReach(FrankaReachEnv):
        train_config = {**copy.deepcopy(TRAIN_CONFIG), "num_envs": 2}

    class UnregisteredReach(FrankaReachEnv):   # trains with FrankaReach-v1's config
        pass

    @register_env("UserBare-v1", max_episode_steps=10)
    class UserBare(BaseEnv):
        pass
""")


@pytest.fixture
def user_tasks(tmp_path, monkeypatch):
    """A task module ``user_tasks.py`` in the current directory, forgotten again afterwards."""
    from simulo_envs.envs.registration import REGISTERED

    (tmp_path / "user_tasks.py").write_text(USER_TASKS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    sys.modules.pop("user_tasks", None)
    for env_id in ("UserReach-v1", "UserBare-v1"):
        REGISTERED.pop(env_id, None)


def test_a_task_from_the_users_module_trains_and_evaluates(user_tasks, capsys):
    from simulo_envs.envs.registration import REGISTERED

    train_main = load_script("train").main
    train_main(["--task-module", "user_tasks", "--env-id", "UserReach-v1", "--total-timesteps", "50",
                "--log-dir", "run", "--no-progress"])
    out = capsys.readouterr().out
    assert "UserReach-v1: 50 env steps = 1 PPO iteration x 2 envs x 25 steps" in out
    # the checkpoint names its module: evaluation imports it again by itself
    sys.modules.pop("user_tasks")
    REGISTERED.pop("UserReach-v1")
    load_script("evaluate").main(["--checkpoint", "run/model_final.pt", "--episodes", "2", "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["env_id"] == "UserReach-v1" and summary["episodes"] == 2 and summary["mean_length"] <= 10

    plan = plan_training("user_tasks:UnregisteredReach", num_envs=2, total_timesteps=50)
    assert plan.env_id == "user_tasks:UnregisteredReach" and plan.env_cls.__name__ == "UnregisteredReach"
    assert plan.config["runner"] == train_config_for("FrankaReach-v1")["runner"]
    assert plan_training("user_tasks:UserReach-v1", total_timesteps=50).env_id == "UserReach-v1"


def test_script_errors_are_one_argparse_line(user_tasks, capsys, monkeypatch, tmp_path):
    train_main = load_script("train").main
    assert "unknown env id 'Nope-v1'" in one_line_error(capsys, train_main, ["--env-id", "Nope-v1"])
    assert "has no PPO config" in one_line_error(capsys, train_main, ["--task-module", "user_tasks",
                                                                      "--env-id", "UserBare-v1"])
    assert "'no_such_module'" in one_line_error(capsys, train_main, ["--task-module", "no_such_module"])
    assert "'no_such_module'" in one_line_error(capsys, train_main, ["--env-id", "no_such_module:Task"])
    assert "total_timesteps must be an int >= 1" in one_line_error(capsys, train_main, ["--total-timesteps", "0"])
    assert "--torch-threads must be >= 1" in one_line_error(capsys, train_main, ["--torch-threads", "0"])
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    assert "num_envs 5 does not split evenly over 2 ranks" in one_line_error(capsys, train_main, ["--num-envs", "5"])
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.delenv("RANK")

    evaluate_main = load_script("evaluate").main
    assert "no checkpoint file 'missing.pt'" in one_line_error(capsys, evaluate_main, ["--checkpoint", "missing.pt"])
    (tmp_path / "notes.pt").write_text("not a checkpoint")
    assert "is not a torch checkpoint" in one_line_error(capsys, evaluate_main, ["--checkpoint", "notes.pt"])
    assert "--episodes must be >= 1" in one_line_error(capsys, evaluate_main, ["--checkpoint", "x.pt",
                                                                               "--episodes", "0"])

    plot_main = load_script("plot_training").main
    assert "No such file" in one_line_error(capsys, plot_main, ["missing.csv", "out.png"])
    (tmp_path / "progress.csv").write_text("a,b\n1,2\n")
    assert "no progress rows" in one_line_error(capsys, plot_main, ["progress.csv", "out.png"])
    assert "STEPS=RATE" in one_line_error(capsys, plot_main, ["progress.csv", "out.png", "--eval", "5"])


def _fake_run(folder, env_id: str, world_size: int, num_envs: int, evaluations=None):
    folder.mkdir()
    (folder / "progress.csv").write_text(
        "iteration,env_steps,wall_s,episodes,success_once,success_at_end,return,length\n"
        "0,1000,1.0,0,,,,\n1,2000,2.0,10,0.5000,0.4000,10.0,50.0\n")
    (folder / "run.json").write_text(json.dumps({"env_id": env_id, "num_envs": num_envs, "world_size": world_size,
                                                 "envs_per_rank": num_envs // world_size}))
    if evaluations:
        (folder / "evaluations.csv").write_text("checkpoint,env_steps,success_rate\n" + "".join(
            f"model_{i}.pt,{steps},{rate}\n" for i, (steps, rate) in enumerate(evaluations)))
    return str(folder / "progress.csv")


def test_plot_titles_and_labels_come_from_the_runs(tmp_path):
    plot_training = load_script("plot_training")
    lift = plot_training.read_run(_fake_run(tmp_path / "lift", "FrankaLift-v1", 1, 1024))
    figure = plot_training.plot([lift], plot_training.default_title([lift]), [], [])
    assert figure.axes[0].get_title() == "PPO (rsl-rl-lib) on FrankaLift-v1, 1024 envs"

    one = _fake_run(tmp_path / "p1", "FrankaReach-v1", 1, 64, [(1000, 0.1), (2000, 0.9)])
    two = _fake_run(tmp_path / "p2", "FrankaReach-v1", 2, 64, [(1000, 0.2), (2000, 0.8)])
    output = tmp_path / "both.png"
    plot_training.main([one, two, "-o", str(output)])
    assert output.stat().st_size > 10_000
    runs = [plot_training.read_run(path) for path in (one, two)]
    figure = plot_training.plot(runs, plot_training.default_title(runs), [plot_training.run_label(r) for r in runs], [])
    labels = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert figure.axes[0].get_title() == "PPO (rsl-rl-lib) on FrankaReach-v1, 64 envs"
    assert labels == ["1 rank x 64 envs: training success once", "1 rank x 64 envs: evaluation (deterministic)",
                      "2 ranks x 32 envs: training success once", "2 ranks x 32 envs: evaluation (deterministic)"]

    # runs of the same configuration (other seeds) are averaged into one curve
    three = _fake_run(tmp_path / "p2b", "FrankaReach-v1", 2, 64, [(1000, 0.4), (2000, 1.0)])
    runs.append(plot_training.read_run(three))
    figure = plot_training.plot(runs, "t", [plot_training.run_label(r) for r in runs], [])
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    mean = lines["2 ranks x 32 envs: evaluation (deterministic), mean of 2 runs"]
    assert list(mean.get_xdata()) == [1000, 2000] and list(mean.get_ydata()) == pytest.approx([0.3, 0.9])


def test_envs_that_cannot_be_built_raise_setup_error_before_any_file(tmp_path):
    from simulo_envs.training.saved_runs import SetupError

    with pytest.raises(SetupError, match=r"cannot build FrankaReach-v1: .*unknown keyword argument\(s\) \['no_such_option'\].*\(keywords: .*'no_such_option': 1"):
        train("FrankaReach-v1", num_envs=2, total_timesteps=50, log_dir=str(tmp_path / "run"), progress=False,
              env_kwargs={"no_such_option": 1})
    assert not (tmp_path / "run").exists()   # nothing written
    with pytest.raises(SetupError) as refused:   # the env's reason first, as written (not quoted), then the keywords
        train("FrankaLift-v1", num_envs=2, total_timesteps=100, log_dir=str(tmp_path / "run"), progress=False,
              env_kwargs={"robot_uids": "so100"})
    assert str(refused.value).startswith("cannot build FrankaLift-v1: robot_uids='so100': FrankaLiftEnv supports "
                                         "['panda', 'panda_wristcam'] (keywords: {")
    assert not (tmp_path / "run").exists()


def test_ctrl_c_during_the_evaluation_after_a_resumed_session_leaves_no_stale_evaluation(
        user_tasks, capsys, monkeypatch):
    """A resumed session replaced model_final.pt: the earlier evaluation.json goes before the new
    evaluation starts, and a Ctrl-C during that evaluation ends with status 130 and one line."""
    train = load_script("train")
    argv = ["--task-module", "user_tasks", "--env-id", "UserReach-v1", "--log-dir", "run", "--no-progress"]
    train.main(argv + ["--total-timesteps", "50"])
    (user_tasks / "run" / "evaluation.json").write_text('{"success_rate": 1.0}')  # the first model's
    capsys.readouterr()

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "evaluate", stopped)
    with pytest.raises(SystemExit) as exit_info:
        train.main(argv + ["--resume", "--total-timesteps", "100", "--eval-episodes", "2"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 130 and "Traceback" not in err
    assert "evaluation stopped by Ctrl-C" in err and "model_final.pt" in err
    assert not (user_tasks / "run" / "evaluation.json").exists()
    assert (user_tasks / "run" / "model_final.pt").exists()
