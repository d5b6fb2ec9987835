"""Imitation learning end to end on expert demonstrations gathered in memory: training,
checkpoints, resume, evaluation in the env, and the inputs that must be refused."""

import csv
import json
import os

import pytest

from imitation_demos import expert_demos
from simulo_envs.imitation import CheckpointError, DemonstrationError, default_config, export_policy, read_checkpoint
from simulo_envs.imitation.checkpoint import is_imitation_checkpoint
from simulo_envs.imitation.rollout import evaluate
from simulo_envs.imitation.spec import PolicySpec, spec_for_env
from simulo_envs.imitation.trainer import OutputInUse, train

TINY = {"hidden": 32, "blocks": 1, "batch_size": 16, "lr_warmup": 0}


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def push_demos(tmp_path_factory):
    return expert_demos(str(tmp_path_factory.mktemp("push") / "demos"), "FrankaPush-v1", 3, "state")


def test_demonstrations_from_a_dataset_have_the_env_layout(push_demos):
    spec = push_demos.spec
    assert (spec.env_id, spec.obs, spec.control_mode, spec.state_dim, spec.action_dim) == \
        ("FrankaPush-v1", "state", "pd_ee_delta_pos", 41, 4)
    assert spec.state_names[0] == "panda_joint1.qpos" and push_demos.state_names[-1] == "cube_to_goal.z"
    assert len(push_demos.episodes) == 3 and all(0 <= s < 10 for s in push_demos.seeds)
    push_demos.validate()


def test_train_checkpoints_resume_and_evaluate(push_demos, tmp_path):
    out = str(tmp_path / "run")
    config = default_config("diffusion", "state", {**TINY, "iterations": 6, "inference_steps": 2})
    result = train(push_demos, config, out, seed=3, checkpoint_every=4, progress=False, log_every=2)
    assert result.iterations == 6 and not result.interrupted
    assert sorted(n for n in os.listdir(out) if n.endswith(".pt")) == ["model_4.pt", "model_final.pt"]
    raw = read_checkpoint(result.checkpoint)
    assert raw["iteration"] == 6 and raw["seed"] == 3 and raw["config"]["policy"] == "diffusion"
    assert raw["demos"]["seeds"] == push_demos.seeds and raw["demos"]["episodes"] == 3
    with open(os.path.join(out, "progress.csv")) as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["iteration"]) for r in rows] == [2, 4, 6]
    # one training state per run: the older checkpoint keeps its acting weights (it still evaluates)
    older = read_checkpoint(os.path.join(out, "model_4.pt"))
    assert "train_state" not in older and "train_state" in raw and older["iteration"] == 4
    assert os.path.getsize(os.path.join(out, "model_4.pt")) < os.path.getsize(result.checkpoint) / 2
    with pytest.raises(CheckpointError, match="resume from the run's newest checkpoint"):
        train(push_demos, config.replace(iterations=8), out, resume=os.path.join(out, "model_4.pt"), progress=False)
    # a second training into the same folder is refused; resuming continues the log and the count
    with pytest.raises(OutputInUse, match="already holds a training"):
        train(push_demos, config, out, progress=False)
    resumed = train(push_demos, config.replace(iterations=8), out, resume=result.checkpoint,
                    checkpoint_every=100, progress=False, log_every=2)
    assert resumed.iterations == 8 and resumed.wall_s > raw["wall_s"]
    with open(os.path.join(out, "progress.csv")) as handle:
        assert [int(r["iteration"]) for r in csv.DictReader(handle)] == [2, 4, 6, 8]
    # the exported file acts alike and is smaller
    size = export_policy(resumed.checkpoint, str(tmp_path / "small.pt"))
    assert size < os.path.getsize(resumed.checkpoint) / 2
    summary = evaluate(str(tmp_path / "small.pt"), episodes=3, seed=10_000, max_envs=2)
    assert summary["episodes"] == 3 and summary["env_id"] == "FrankaPush-v1" and summary["iterations"] == 8
    assert summary["policy"] == "diffusion" and 0.0 <= summary["success_rate"] <= 1.0
    assert 1 <= summary["mean_length"] <= 100
    again = evaluate(str(tmp_path / "small.pt"), episodes=3, seed=10_000, max_envs=2)
    assert again == summary   # seeded envs and seeded denoising noise: the same numbers


def test_a_time_budget_stops_training_and_decays_the_learning_rate(push_demos, tmp_path):
    config = default_config("bc", "state", {**TINY, "iterations": 100_000, "lr_warmup": 0})
    result = train(push_demos, config, str(tmp_path / "cpu"), max_cpu_minutes=0.02, progress=False, log_every=1)
    assert 1 <= result.iterations < 100_000 and result.wall_s > 0
    with open(tmp_path / "cpu" / "progress.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert float(rows[-2]["cpu_s"]) <= 0.02 * 60 <= float(rows[-1]["cpu_s"]) + 0.005   # stopped at the cap (2 decimals)
    assert float(rows[-1]["lr"]) < 0.05 * config.lr < float(rows[0]["lr"])   # cosine over the time spent
    with pytest.raises(ValueError, match="max_minutes must be > 0"):
        train(push_demos, config, str(tmp_path / "x"), max_minutes=0)


def test_bc_trains_and_evaluates_with_workers(push_demos, tmp_path):
    config = default_config("bc", "state", {**TINY, "iterations": 3})
    result = train(push_demos, config, str(tmp_path / "bc"), checkpoint_every=100, progress=False)
    assert is_imitation_checkpoint(result.checkpoint)
    summary = evaluate(result.checkpoint, episodes=2, seed=10_000, num_workers=2)
    assert summary["policy"] == "bc" and summary["episodes"] == 2


def test_evaluate_script_reads_the_policy_type_from_the_checkpoint(push_demos, tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(__file__), "..", "scripts"))
    import evaluate as evaluate_script
    import plot_imitation

    out = str(tmp_path / "bc")
    config = default_config("bc", "state", {**TINY, "iterations": 4})
    checkpoint = train(push_demos, config, out, checkpoint_every=2, progress=False,
                       on_checkpoint=lambda path, i, wall: {"success_rate": i / 8}).checkpoint
    evaluate_script.main(["--checkpoint", checkpoint, "--episodes", "2", "--max-envs", "2", "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (summary["policy"], summary["obs"], summary["env_id"], summary["episodes"], summary["iterations"]) == \
        ("bc", "state", "FrankaPush-v1", 2, 4)
    assert summary["checkpoint"] == checkpoint and 0.0 <= summary["success_rate"] <= 1.0
    with pytest.raises(SystemExit):   # seeds of the demonstrations: refused before any rollout
        evaluate_script.main(["--checkpoint", checkpoint, "--episodes", "2", "--seed", "0"])
    assert "seed(s) the demonstrations were recorded with" in capsys.readouterr().err
    # the learning curve of the run: one line per panel, the success rates logged at its checkpoints
    figure = plot_imitation.main([out, "-o", str(tmp_path / "curve.png"), "--target", "0.9"])
    assert os.path.getsize(tmp_path / "curve.png") > 1000
    steps = figure.axes[0].lines[0]
    assert list(steps.get_xdata()) == [2, 4] and list(steps.get_ydata()) == [0.25, 0.5]
    # the same curve written afterwards from the checkpoints (no evaluation during training)
    table = os.path.join(out, "evaluations.csv")
    os.remove(table)
    evaluate_script.main(["--checkpoint", os.path.join(out, "model_4.pt"), os.path.join(out, "model_2.pt"),
                          "--episodes", "2", "--max-envs", "2", "--json", "--csv", table])
    capsys.readouterr()
    with open(table) as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["iteration"]) for r in rows] == [2, 4]   # in iteration order
    assert all(float(r["cpu_s"]) > 0 and float(r["wall_s"]) > 0 for r in rows)
    figure = plot_imitation.main([out, "-o", str(tmp_path / "curve2.png"), "--clock", "cpu"])
    assert list(figure.axes[0].lines[0].get_xdata()) == [2, 4]
    assert list(figure.axes[1].lines[0].get_xdata()) == [float(r["cpu_s"]) / 60 for r in rows]


def test_refused_inputs_change_nothing(push_demos, tmp_path):
    config = default_config("diffusion", "state", {**TINY, "iterations": 2})
    out = str(tmp_path / "run")
    checkpoint = train(push_demos, config, out, progress=False).checkpoint
    # evaluation seeds the demonstrations used
    with pytest.raises(ValueError, match=r"include 3 seed\(s\) the demonstrations were recorded with"):
        evaluate(checkpoint, episodes=5, seed=0)
    # a checkpoint of another task than the one asked for
    with pytest.raises(CheckpointError, match="trained on FrankaPush-v1, not FrankaLift-v1"):
        evaluate(checkpoint, episodes=2, expected_env_id="FrankaLift-v1")
    # resuming on demonstrations of another task, or another action width
    other = push_demos.subset(2)
    other.spec = PolicySpec("FrankaLift-v1", "state", "pd_ee_delta_pos", 41, 4)
    with pytest.raises(CheckpointError, match="the dataset has env 'FrankaLift-v1', expected 'FrankaPush-v1'"):
        train(other, config, str(tmp_path / "other"), resume=checkpoint, progress=False)
    assert not os.path.exists(tmp_path / "other" / "progress.csv")
    # resuming on other episodes of the task (fewer demos, another dataset), or with its budget spent
    with pytest.raises(CheckpointError, match=r"the run trained on 3 episodes \(seeds .*\), these are 2"):
        train(push_demos.subset(2), config.replace(iterations=4), out, resume=checkpoint, progress=False)
    with pytest.raises(ValueError, match="already trained 2 iterations, and the budget is 2"):
        train(push_demos, config, out, resume=checkpoint, progress=False)
    # zero or one episode, NaN: refused before the output folder is touched
    for demos, message in ((push_demos.subset(1), "holds 1 episode"), (_with_nan(push_demos), "state holds nan at step 5, column cube_pose.qy")):
        with pytest.raises(DemonstrationError, match=message):
            train(demos, config, str(tmp_path / "bad"), progress=False)
        assert not os.path.exists(tmp_path / "bad")
    # a file that is no imitation checkpoint
    (tmp_path / "x.pt").write_bytes(b"not a checkpoint")
    assert not is_imitation_checkpoint(str(tmp_path / "x.pt"))
    with pytest.raises(CheckpointError, match="not a checkpoint of scripts/train_il.py"):
        evaluate(str(tmp_path / "x.pt"), episodes=1)


def _with_nan(demos):
    copy = demos.subset(3)
    copy.episodes = [type(e)(e.state.clone(), e.actions.clone(), None, e.seed) for e in copy.episodes]
    copy.episodes[2].state[5, 30] = float("nan")
    return copy


def test_spec_for_env_reads_the_widths():
    spec = spec_for_env("FrankaLift-v1", "state", "pd_ee_delta_pos")
    assert (spec.state_dim, spec.action_dim, spec.control_freq) == (36, 4, 20.0)
    joint = spec_for_env("FrankaLift-v1", "state", "pd_joint_delta_pos")
    assert joint.action_dim == 8
    assert PolicySpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
