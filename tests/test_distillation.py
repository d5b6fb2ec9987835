"""Teacher-student distillation into an image policy (simulo_envs/training/distillation.py)."""

from __future__ import annotations

import copy
import os

import pytest
import torch

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.envs.registration import REGISTERED  # noqa: E402
from simulo_envs.imitation.spec import flat_state_layout  # noqa: E402
from simulo_envs.training.distillation import (DAggerDistillation, _random_shift, distillation_config,  # noqa: E402
                                               plan_distillation, read_teacher)
from simulo_envs.training.evaluation import evaluate, read_checkpoint  # noqa: E402
from simulo_envs.training.rsl_rl_env import make_rsl_env  # noqa: E402
from simulo_envs.training.rsl_rl_runner import SimuloRunner  # noqa: E402
from simulo_envs.training.rsl_rl_train import train  # noqa: E402
from simulo_envs.wrappers.rsl_rl import RslRlVecEnv  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SO100_TEACHER = os.path.join(ROOT, "tasks", "so100_lift_ppo.pt")
FRANKA_TEACHER = os.path.join(ROOT, "tasks", "franka_lift_ppo.pt")
SMALL = {"width": 16, "height": 16}


def _env(mode: str, n: int = 2) -> RslRlVecEnv:
    env = REGISTERED["SO100Lift-v1"](num_envs=n, obs_mode=mode, control_mode="pd_ee_delta_pos", sensor_configs=SMALL)
    wrapped = RslRlVecEnv(env)
    wrapped.reset(seed=5)
    return wrapped


def test_student_groups_hold_images_and_proprioception_only():
    """"rgb": cameras + proprio, nothing else; "rgb+state" adds the teacher's flat state, whose
    proprio columns are exactly the agent's and the TCP pose's, never the cube's."""
    student, both, state = _env("rgb"), _env("rgb+state"), _env("state")
    try:
        obs, full, flat = student.get_observations(), both.get_observations(), state.get_observations()
        assert set(obs.keys()) == {"base_camera", "wrist_camera", "proprio"}
        assert obs["base_camera"].shape == (2, 3, 16, 16) and obs["base_camera"].dtype == torch.uint8
        assert set(full.keys()) == {"base_camera", "wrist_camera", "proprio", "policy"}
        assert torch.equal(full["policy"], flat["policy"])          # the teacher sees what it was trained on
        assert torch.equal(full["proprio"], obs["proprio"])         # the student sees the same in both modes
        layout = flat_state_layout(both.base_env.get_obs(unflattened=True))
        kept = {key for key, (a, b) in layout.items() if set(range(a, b)) <= set(both.proprio_columns.tolist())}
        assert kept == {"agent/qpos", "agent/qvel", "extra/tcp_pose"}
        cube = set(range(*layout["extra/cube_pose"])) | set(range(*layout["extra/tcp_to_cube"]))
        assert not cube & set(both.proprio_columns.tolist())
        assert obs["proprio"].shape == (2, 19) and flat["policy"].shape == (2, 30)
    finally:
        for env in (student, both, state):
            env.close()


@pytest.mark.e2e
def test_student_groups_from_envs_in_worker_processes_match_the_in_process_ones():
    """"rgb+state" with the envs in 2 worker processes: the proprio columns are read from the
    workers (the task class's extras) and the groups equal the in-process env's."""
    from simulo_envs.workers.sharded import ShardedEnv

    both = _env("rgb+state")
    sharded = RslRlVecEnv(ShardedEnv(REGISTERED["SO100Lift-v1"], 2, 2, {
        "obs_mode": "rgb+state", "control_mode": "pd_ee_delta_pos", "sensor_configs": SMALL}))
    try:
        assert torch.equal(sharded.proprio_columns, both.proprio_columns)
        assert sharded.proprio_columns.tolist()[-7:] == list(range(12, 19))   # tcp_pose after qpos, qvel
        sharded.reset(seed=5)
        obs, ref = sharded.get_observations(), both.get_observations()
        assert set(obs.keys()) == set(ref.keys())
        assert torch.allclose(obs["proprio"], ref["proprio"], atol=1e-6)
    finally:
        sharded.close()
        both.close()


def test_random_shift_moves_whole_images_within_the_pad():
    torch.manual_seed(0)
    image = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8)
    assert torch.equal(_random_shift(image, 0), image)
    shifted = _random_shift(image, 2)
    assert shifted.shape == image.shape
    padded = torch.nn.functional.pad(image, (2, 2, 2, 2), mode="replicate")
    for i in range(2):   # each output is one 8x8 window of its padded input
        windows = [padded[i, :, y:y + 8, x:x + 8] for y in range(5) for x in range(5)]
        assert any(torch.equal(shifted[i], w) for w in windows)


def test_bad_teachers_and_cameras_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_teacher(str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="no camera 'top_camera'.*base_camera, wrist_camera"):
        plan_distillation(SO100_TEACHER, (16, 16), cameras=["top_camera"], num_envs=2, total_timesteps=100)
    with pytest.raises(ValueError, match=r"image_size \(height, width\) must be at least 16 px each, got \(40, 10\)"):
        distillation_config(SO100_TEACHER, read_teacher(SO100_TEACHER), (40, 10))


def _runner(n: int = 4, **algorithm):
    plan = plan_distillation(SO100_TEACHER, (16, 16), num_envs=n, total_timesteps=n * 25)
    config = copy.deepcopy(plan.config)
    config["runner"]["num_steps_per_env"] = 10
    config["runner"]["algorithm"].update(algorithm)
    env = make_rsl_env(plan.env_id, n, config, seed=0)
    return env, SimuloRunner(env, config["runner"], device="cpu")


def test_teacher_labels_and_dagger_mixing():
    """The teacher is the PPO checkpoint's actor; its actions, clipped to the action space, are the
    labels; with beta 1 every executed action is the teacher's, and beta falls to 0 over
    teacher_iterations updates."""
    torch.manual_seed(0)
    env, runner = _runner(teacher_start=1.0, teacher_iterations=2)
    try:
        alg = runner.alg
        assert isinstance(alg, DAggerDistillation) and alg.teacher_loaded
        weights = torch.load(SO100_TEACHER, weights_only=False)["actor_state_dict"]
        assert torch.equal(alg.teacher.state_dict()["mlp.0.weight"], weights["mlp.0.weight"])
        obs = env.get_observations()
        with torch.inference_mode():
            actions = alg.act(obs)
            raw = alg.teacher(obs)
            assert raw.abs().max() > 1.0   # the PPO mean leaves the action space: clipping matters
            assert torch.equal(actions, raw.clamp(-1.0, 1.0))
            assert torch.equal(alg.transition.privileged_actions, raw.clamp(-1.0, 1.0))
        alg.transition.clear()
        assert alg.beta == 1.0
        alg.num_updates = 1
        assert alg.beta == 0.5
        alg.num_updates = 2
        with torch.inference_mode():
            actions = alg.act(obs)
        assert alg.beta == 0.0 and not torch.equal(actions, alg.transition.privileged_actions)
        alg.transition.clear()
        assert alg.load({**alg.save(), "iter": 0}, None, strict=True)   # a resumed training: beta goes on
        assert alg.num_updates == 1 and alg.beta == 0.5
    finally:
        env.close()


def test_distillation_loss_falls_on_the_students_rollouts():
    """Two iterations of the student's own rollouts, kept (aggregation) and fitted: its error on
    the teacher's labels of those states falls to well under half the untrained student's."""
    torch.manual_seed(0)
    env, runner = _runner(aggregate_iterations=2, num_learning_epochs=40, mini_batch_size=40)
    student = runner.alg.student
    untrained = copy.deepcopy(student)
    try:
        runner.learn(2)
    finally:
        env.close()
    observations = torch.cat([obs for obs, _ in runner.alg._kept])
    labels = torch.cat([label for _, label in runner.alg._kept])
    assert labels.shape == (2 * 4 * 10, 4)
    with torch.no_grad():
        before = torch.nn.functional.mse_loss(untrained.eval()(observations), labels).item()
        after = torch.nn.functional.mse_loss(student.eval()(observations), labels).item()
    assert after < 0.5 * before, (before, after)


def test_a_student_checkpoint_trains_remembers_and_evaluates_on_images(tmp_path):
    """train() writes a checkpoint whose config names the teacher, the cameras, image size and
    randomization preset; evaluate() runs it with them in obs_mode "rgb", without any state beyond
    the proprioception, and refuses another image size."""
    plan = plan_distillation(SO100_TEACHER, (16, 16), cameras=["base_camera"], num_envs=2, total_timesteps=50,
                             env_kwargs={"randomization": "visual"})
    result = train(plan.env_id, seed=0, log_dir=str(tmp_path), plan=plan, progress=False)
    infos = read_checkpoint(result.checkpoint)
    config = infos["train_config"]
    assert config["teacher"]["checkpoint"] == SO100_TEACHER and config["cameras"] == ["base_camera"]
    assert config["env_kwargs"]["sensor_configs"] == SMALL and config["env_kwargs"]["randomization"] == "visual"
    assert config["runner"]["obs_groups"]["student"] == ["base_camera", "proprio"]
    summary = evaluate(result.checkpoint, 2, env_kwargs={"max_episode_steps": 3})
    assert summary["episodes"] == 2 and summary["env_id"] == "SO100Lift-v1"
    used = summary["provenance"]["env"]["env_kwargs"]
    assert used["obs_mode"] == "rgb" and used["randomization"] == "visual" and used["sensor_configs"] == SMALL
    with pytest.raises(ValueError, match="cannot be evaluated with"):
        evaluate(result.checkpoint, 1, env_kwargs={"sensor_configs": {"width": 32, "height": 32}})


STUDENT_ARGS = ["--teacher", SO100_TEACHER, "--camera-size", "16", "16", "--cameras", "base_camera", "--num-envs", "2",
                "--total-timesteps", "100", "--no-progress"]


def test_ctrl_c_saves_the_students_last_iteration_which_evaluates_and_resumes(tmp_path, capsys, monkeypatch):
    import signal

    from script_runs import load_script
    from simulo_envs.training.rsl_rl_runner import ProgressLogger

    log_dir = str(tmp_path / "student")
    original, count = ProgressLogger.process_env_step, [0]

    def spy(self, *args, **kwargs):   # SIGINT in the second iteration's rollout (25 steps each)
        count[0] += 1
        if count[0] == 25 + 7:
            os.kill(os.getpid(), signal.SIGINT)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ProgressLogger, "process_env_step", spy)
    main = load_script("train").main
    with pytest.raises(SystemExit) as stopped:
        main([*STUDENT_ARGS, "--log-dir", log_dir])
    assert stopped.value.code == 130
    out = capsys.readouterr().out.strip().splitlines()
    assert "= 2 distillation iterations x 2 envs x 25 steps" in out[0]
    assert out[-1] == (f"interrupted by SIGINT after 1 distillation iteration (50 env steps): saved "
                       f"{log_dir}/model_0.pt; continue with --resume")
    summary = evaluate(os.path.join(log_dir, "model_0.pt"), 1, env_kwargs={"max_episode_steps": 3})
    assert summary["episodes"] == 1 and summary["provenance"]["env"]["env_kwargs"]["obs_mode"] == "rgb"
    monkeypatch.undo()
    before = {name: os.path.getmtime(os.path.join(log_dir, name)) for name in os.listdir(log_dir)}
    with pytest.raises(SystemExit) as refused:   # other inputs for the networks: refused before anything is written
        main(["--log-dir", log_dir, "--resume", "--cameras", "wrist_camera"])
    assert refused.value.code == 2 and "--cameras base_camera, not wrist_camera" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:   # a camera too small, in the option's words and order
        main([*STUDENT_ARGS[:2], "--camera-size", "10", "40", "--log-dir", str(tmp_path / "small")])
    assert refused.value.code == 2 and capsys.readouterr().err.strip().endswith(
        "error: --camera-size 10 40: the student's cameras need at least 16 px of width and of height")
    assert {name: os.path.getmtime(os.path.join(log_dir, name)) for name in os.listdir(log_dir)} == before
    main(["--log-dir", log_dir, "--resume", "--no-progress"])   # teacher, cameras, sizes and budget from the run
    out = capsys.readouterr().out
    assert "(resumed)" in out and "trained 50 env steps, 100 in all in " in out
    assert f"checkpoint {log_dir}/model_final.pt" in out
    infos = torch.load(os.path.join(log_dir, "model_final.pt"), weights_only=False)["infos"]
    assert infos["train_config"]["cameras"] == ["base_camera"]
    assert infos["train_config"]["env_kwargs"]["sensor_configs"] == {"width": 16, "height": 16}


def test_a_student_log_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys):
    from script_runs import load_script

    (tmp_path / "taken").write_text("a file where the log folder would go")
    with pytest.raises(SystemExit) as stopped:
        load_script("train").main([*STUDENT_ARGS, "--log-dir", str(tmp_path / "taken" / "run")])
    assert stopped.value.code == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["taken"]


def test_a_franka_student_reads_the_hand_camera_of_the_panda_that_carries_one(tmp_path, capsys):
    """``--robot-uids panda_wristcam``: the student's cameras are the task's front one and the
    hand camera, recorded with the robot in the env keywords; a robot the task lacks is refused
    in the option's words before anything is written."""
    from script_runs import load_script

    plan = plan_distillation(FRANKA_TEACHER, (16, 16), num_envs=2, total_timesteps=50,
                             env_kwargs={"robot_uids": "panda_wristcam"})
    assert plan.config["cameras"] == ["base_camera", "hand_camera"]
    assert plan.config["runner"]["obs_groups"]["student"] == ["base_camera", "hand_camera", "proprio"]
    assert plan.config["env_kwargs"]["robot_uids"] == "panda_wristcam"
    with pytest.raises(SystemExit) as refused:
        load_script("train").main(["--teacher", FRANKA_TEACHER, "--robot-uids", "so100", "--camera-size", "16", "16",
                                   "--log-dir", str(tmp_path / "run")])
    assert refused.value.code == 2
    assert "robot_uids='so100': FrankaLiftEnv supports ['panda', 'panda_wristcam']" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
