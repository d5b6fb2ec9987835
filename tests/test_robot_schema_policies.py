"""Every dataset ``collect_demos.py`` writes trains. An SO-100 dataset in the real arm's schema
(LeRobot's ``so_follower``: joint positions in degrees and 0..100, joint-target actions) gives a
policy that reads what the real arm gives (those joint positions and the camera) and acts in the
arm's action space, and evaluation runs it in the sim through the same units."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.datasets import load_dataset
from simulo_envs.datasets.collect import CollectSettings, collect
from simulo_envs.imitation import default_config
from simulo_envs.imitation.datasets_io import load_demonstrations
from simulo_envs.imitation.rollout import evaluate, make_eval_env
from simulo_envs.imitation.spec import policy_inputs
from simulo_envs.imitation.trainer import train

REST_DEGREES = [0.0, -9.969, 5.615, 94.366, 0.0, 100.0]
"""The SO-100's rest pose in the follower's units (agents/so100.py REST_QPOS in degrees, gripper open)."""
TINY = {"hidden": 32, "blocks": 1, "batch_size": 8, "lr_warmup": 0, "iterations": 2}

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def so100_demos(tmp_path_factory) -> str:
    """What the docs tell a user to collect (fewer episodes, smaller images): SO100Lift-v1, rgb, LeRobot."""
    out = str(tmp_path_factory.mktemp("so100") / "demos")
    summary = collect(CollectSettings(env_id="SO100Lift-v1", num_episodes=2, out=out, num_envs=2, obs_mode="rgb",
                                      env_kwargs={"sensor_configs": {"width": 32, "height": 32}}), progress=False)
    assert summary["episodes"] == 2
    return out


@pytest.mark.parametrize("policy, obs", [("bc", "rgb"), ("bc", "state"), ("diffusion", "rgb"),
                                         ("diffusion", "state")])
def test_a_real_arm_schema_dataset_trains_on_what_the_arm_gives(so100_demos, tmp_path, policy, obs):
    demos = load_demonstrations(so100_demos, obs)
    spec = demos.spec
    assert (spec.state_source, spec.control_mode, spec.state_dim, spec.action_dim) == \
        ("robot", "pd_joint_pos_lerobot", 6, 6)
    assert spec.state_names == ("shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos",
                                "wrist_roll.pos", "gripper.pos")
    assert torch.allclose(demos.episodes[0].state[0], torch.tensor(REST_DEGREES), atol=0.01)
    assert (spec.cameras, spec.image_size) == ((("base_camera", "wrist_camera"), (32, 32)) if obs == "rgb"
                                               else (None, None))  # the front and the wrist camera
    result = train(demos, default_config(policy, obs, dict(TINY)), str(tmp_path / "run"), progress=False)
    summary = evaluate(result.checkpoint, 2, seed=1000, max_envs=2)
    assert summary["episodes"] == 2 and summary["mean_length"] > 0


def test_the_sim_gives_the_policy_the_follower_units(so100_demos, tmp_path):
    demos = load_demonstrations(so100_demos, "rgb")
    env = make_eval_env(demos.spec, 2)
    try:
        assert env.unwrapped.control_mode == "pd_joint_pos_lerobot"  # the policy acts in the arm's units
        obs, _ = env.reset(seed=int(load_dataset(so100_demos).seeds[0]))
        state, image = policy_inputs(obs, demos.spec)
        agent = env.unwrapped.agent
        assert torch.allclose(state, agent.lerobot_from_qpos(agent.robot.state.qpos), atol=1e-4)
        assert torch.allclose(state[0], torch.tensor(REST_DEGREES), atol=0.01)
        assert image.shape == (2, 6, 32, 32) and image.dtype == torch.uint8  # both cameras, stacked
        # a recorded action (degrees, 0..100) steps the arm towards the recorded target
        target = demos.episodes[0].actions[5]
        for _ in range(10):
            obs, *_ = env.step(target.expand(2, -1))
        reached, _ = policy_inputs(obs, demos.spec)
        assert np.abs((reached[0] - target).numpy()[:5]).max() < 2.0
    finally:
        env.close()


def test_a_dataset_of_another_calibration_is_refused_with_the_difference(so100_demos, tmp_path):
    import json
    import shutil

    from simulo_envs.imitation.demos import DemonstrationError

    copy = str(tmp_path / "recalibrated")
    shutil.copytree(so100_demos, copy)
    path = f"{copy}/meta/simulo_env.json"
    with open(path) as f:
        schema = json.load(f)
    schema["robot_units"]["offset"][1] = 0.1  # shoulder_lift's zero 0.1 rad elsewhere
    with open(path, "w") as f:
        json.dump(schema, f)
    with pytest.raises(DemonstrationError, match=r"robot units differ from SO100Lift-v1's agent in \['offset'\]"):
        load_demonstrations(copy, "state")


@pytest.mark.parametrize("obs", ["state", "rgb"])
def test_train_il_warns_that_a_state_policy_on_the_joints_alone_cannot_see_the_cube(so100_demos, tmp_path, capsys,
                                                                                      obs, monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(__file__)), "scripts"))
    import train_il

    args = ["--dataset", so100_demos, "--obs", obs, "--policy", "bc", "--iterations", "1", "--no-progress",
            "--out", str(tmp_path / "run")] + [f"--set={name}={value}" for name, value in TINY.items()
                                                if name != "iterations"]
    assert train_il.main(args) == 0
    err = capsys.readouterr().err
    assert (train_il.BLIND_STATE_WARNING in err) == (obs == "state")  # an image policy sees the cube
    assert "--format hdf5" in train_il.BLIND_STATE_WARNING
