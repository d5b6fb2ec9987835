"""Visual domain randomization presets (randomization="visual") and the scene options the scripts share."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets.scene_cli import scene_kwargs
from simulo_envs.envs.randomization_presets import randomization_table
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.tasks.franka_reach import FrankaReachEnv
from script_runs import ROOT, load_script

SMALL = {"width": 32, "height": 32}


def _values(env) -> np.ndarray:
    return np.asarray(env.randomization.privileged(), dtype=np.float64)


def test_presets_name_tables():
    assert randomization_table(FrankaLiftEnv, "none") == ()
    assert randomization_table(FrankaLiftEnv, "default") == randomization_table(FrankaLiftEnv, None) == ()
    visual = randomization_table(FrankaLiftEnv, "visual")
    distractors = [f"visual_distractors.{slot}.{name}" for slot in (0, 1) for name in ("kind", "color", "position", "yaw")]
    assert [t.param for t in visual] == ["lights.intensity", "lights.color", "lights.direction", "lights.ambient",
                                         "block.color", "block.texture", "floor.color", "floor.texture",
                                         *distractors, "sensor_cameras.base_camera.pose_jitter",
                                         "sensor_cameras.base_camera.fov", "sensor_cameras.base_camera.brightness",
                                         "sensor_cameras.base_camera.contrast", "sensor_cameras.base_camera.noise_std"]
    with pytest.raises(ValueError, match="one of default, none, visual"):
        randomization_table(FrankaLiftEnv, "heavy")
    with pytest.raises(ValueError, match="randomization 'visual': FrankaReachEnv has no visual domain randomization "
                                         r"\(lights, colours, camera poses\) to add; choose 'default'") as refused:
        randomization_table(FrankaReachEnv, "visual")
    assert "visual_randomization" not in str(refused.value)   # the user's words, not an attribute's


def test_visual_draws_are_per_env_and_seeded():
    """Env k seeded s draws the same lights, colour and camera pose whatever num_envs; other seeds
    draw other values; and the images change with them."""
    two = REGISTERED["FrankaLift-v1"](num_envs=2, obs_mode="rgb", sensor_configs=SMALL, randomization="visual")
    one = REGISTERED["FrankaLift-v1"](num_envs=1, obs_mode="rgb", sensor_configs=SMALL, randomization="visual")
    plain = REGISTERED["FrankaLift-v1"](num_envs=1, obs_mode="rgb", sensor_configs=SMALL)
    try:
        obs2, _ = two.reset(seed=[7, 8])
        obs1, _ = one.reset(seed=8)
        obs0, _ = plain.reset(seed=8)
        both, alone = _values(two), _values(one)
        assert both.shape == (2, alone.shape[1]) and alone.shape[1] == 1 + 3 + 3 + 3 + 3 + 1 + 3 + 1 + 2 * 7 + 6 + 1 + 3
        np.testing.assert_array_equal(both[1], alone[0])
        assert not np.allclose(both[0], both[1])
        names = two.randomization.privileged_names
        jitter = [i for i, n in enumerate(names) if n.startswith("sensor_cameras.base_camera.pose_jitter")]
        assert len(jitter) == 6 and np.all(np.abs(both[:, jitter[:3]]) <= 0.02)
        np.testing.assert_array_equal(obs2["sensor_data"]["base_camera"]["rgb"][1],
                                      obs1["sensor_data"]["base_camera"]["rgb"][0])
        assert not torch.equal(obs1["sensor_data"]["base_camera"]["rgb"][0], obs0["sensor_data"]["base_camera"]["rgb"][0])
        one.reset(seed=8)
        np.testing.assert_array_equal(_values(one), alone)
    finally:
        for env in (two, one, plain):
            env.close()


@pytest.mark.parametrize("script", ["collect_demos", "train", "train_il", "evaluate"])
def test_every_script_spells_the_scene_options_alike(script):
    parser = load_script(script).build_parser()
    required = {"collect_demos": ["--env-id", "FrankaLift-v1", "--out", "x"], "train": [],
                "train_il": ["--dataset", "x"], "evaluate": ["--checkpoint", "x"]}[script]
    args = parser.parse_args(required + ["--camera-size", "48", "32", "--randomization", "visual"])
    assert scene_kwargs(args) == {"sensor_configs": {"width": 48, "height": 32}, "randomization": "visual"}
    assert scene_kwargs(parser.parse_args(required)) == {}
    with pytest.raises(SystemExit):
        parser.parse_args(required + ["--randomization", "heavy"])


@pytest.mark.parametrize("script, args", [("train", ["--env-id", "FrankaLift-v1"]),
                                          ("train_il", ["--dataset", "nowhere", "--obs", "state"]),
                                          ("evaluate", ["--checkpoint", os.path.join(ROOT, "tasks", "franka_lift_ppo.pt")]),
                                          ("evaluate", ["--checkpoint",
                                                        os.path.join(ROOT, "tasks", "franka_push_diffusion_state.pt")])])
def test_a_visual_preset_for_a_state_policy_is_refused_before_any_work(script, args, tmp_path, capsys):
    out = {"train_il": "--out", "train": "--log-dir", "evaluate": "--video-dir"}[script]
    with pytest.raises(SystemExit) as refused:
        load_script(script).main([*args, "--randomization", "visual", out, str(tmp_path / "run")])
    assert refused.value.code == 2
    error = capsys.readouterr().err
    assert "--randomization visual changes only what the cameras see" in error
    assert ("evaluate it under --randomization default" in error) == (script == "evaluate")
    assert not (tmp_path / "run").exists()


def test_an_imitation_spec_keeps_its_randomization():
    from simulo_envs.imitation.spec import PolicySpec, env_kwargs

    spec = PolicySpec("FrankaLift-v1", "state", "pd_ee_delta_pos", 3, 4, randomization="visual")
    assert env_kwargs(spec)["randomization"] == "visual"
    assert PolicySpec.from_dict(spec.to_dict()) == spec
    assert "randomization" not in env_kwargs(PolicySpec("FrankaLift-v1", "state", "pd_ee_delta_pos", 3, 4))


def test_the_first_visual_preset_keeps_its_meaning_for_the_checkpoints_that_name_it():
    # A preset's name keeps its meaning: the randomized student was trained under the first visual
    # preset (lights and the front camera's pose), which "visual" no longer is.

    table = randomization_table(REGISTERED["SO100Lift-v1"], "visual_v1")
    assert [t.param for t in table] == ["lights.intensity", "lights.color", "lights.direction", "lights.ambient",
                                        "sensor_cameras.base_camera.pose_jitter"]
    assert [t.param for t in randomization_table(FrankaLiftEnv, "visual_v1")][4] == "block.color"
    with pytest.raises(ValueError, match="randomization 'visual_v1': FrankaReachEnv has no visual domain"):
        randomization_table(FrankaReachEnv, "visual_v1")
    infos = torch.load(os.path.join(ROOT, "tasks", "so100_lift_student_randomized.pt"), weights_only=False)["infos"]
    assert infos["train_config"]["env_kwargs"]["randomization"] == "visual_v1"


def test_the_students_of_the_full_preset_and_of_the_so101_name_what_they_were_trained_on():
    # scripts/evaluate.py rebuilds a student's scenes from its checkpoint: the full-preset student is
    # evaluated under "visual" by default, the SO-101 student on its own arm with both cameras at 32 x 32.
    def config(name):
        return torch.load(os.path.join(ROOT, "tasks", name), weights_only=False)["infos"]

    visual = config("so100_lift_student_visual.pt")
    assert visual["env_id"] == "SO100Lift-v1" and visual["env_steps"] == 48_000
    assert visual["train_config"]["env_kwargs"]["randomization"] == "visual"
    so101 = config("so101_lift_student.pt")
    assert so101["env_id"] == "SO101Lift-v1" and so101["env_steps"] == 16_000
    assert so101["train_config"]["teacher"]["checkpoint"] == "tasks/so101_lift_ppo.pt"
    assert so101["train_config"]["cameras"] == ["base_camera", "wrist_camera"]
    assert so101["train_config"]["env_kwargs"]["sensor_configs"] == SMALL
    assert "randomization" not in so101["train_config"]["env_kwargs"]
