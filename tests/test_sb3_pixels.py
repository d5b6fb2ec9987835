"""scripts/train_sb3.py --algo sac --obs-mode rgb: SAC from camera images, its actor reading images
and proprioception, its asymmetric critics the privileged state, DrQ's shift in gradient steps
only, and a model.zip that scripts/evaluate.py evaluates from images alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402

from script_runs import load_script, table  # noqa: E402
from simulo_envs.training import sb3_off_policy, sb3_pixels  # noqa: E402
from simulo_envs.training.sb3_pixels import PixelEncoder, PixelSACPolicy, StateExtractor  # noqa: E402

ARGS = ["--algo", "sac", "--obs-mode", "rgb", "--env-id", "FrankaLift-v1", "--num-envs", "2", "--seed", "3",
        "--no-progress"]
SPACE = spaces.Dict({"base_camera": spaces.Box(0, 255, (3, 16, 16), np.uint8),
                     "proprio": spaces.Box(-np.inf, np.inf, (5,), np.float32),
                     "state": spaces.Box(-np.inf, np.inf, (7,), np.float32)})
ACTIONS = spaces.Box(-1.0, 1.0, (2,), np.float32)


def batch(seed: int, size: int = 4) -> dict:
    """SB3-preprocessed observations of SPACE: images float in [0, 1]."""
    g = torch.Generator().manual_seed(seed)
    return {"base_camera": torch.rand(size, 3, 16, 16, generator=g), "proprio": torch.randn(size, 5, generator=g),
            "state": torch.randn(size, 7, generator=g)}


def policy(asymmetric: bool) -> PixelSACPolicy:
    torch.manual_seed(0)
    return PixelSACPolicy(SPACE, ACTIONS, lambda _: 3e-4, net_arch=[32, 32], features_extractor_class=PixelEncoder,
                          features_extractor_kwargs={"shift": 2, "channels": [8, 8], "feature_dim": 6},
                          critic_reads_state=asymmetric)


def test_the_asymmetric_critic_reads_the_state_and_the_actor_the_images_and_proprioception():
    model = policy(asymmetric=True)
    model.set_training_mode(False)
    assert isinstance(model.critic.features_extractor, StateExtractor)
    assert model.critic.features_extractor.features_dim == 7
    assert isinstance(model.critic_target.features_extractor, StateExtractor)
    assert model.actor.features_extractor.features_dim == 6 + 5   # one camera's features, then proprio
    obs, action = batch(0), torch.zeros(4, 2)
    other_state, other_image = {**obs, "state": batch(1)["state"]}, {**obs, "base_camera": batch(1)["base_camera"]}
    with torch.no_grad():
        q, act = model.critic(obs, action)[0], model.actor(obs, deterministic=True)
        assert not torch.equal(model.critic(other_state, action)[0], q)       # the critic reads the state ...
        assert torch.equal(model.critic(other_image, action)[0], q)           # ... and not the image
        assert torch.equal(model.actor(other_state, deterministic=True), act)  # the actor never reads the state
        assert not torch.equal(model.actor(other_image, deterministic=True), act)
        without_state = {key: value for key, value in obs.items() if key != "state"}
        assert torch.equal(model.actor(without_state, deterministic=True), act)
    symmetric = policy(asymmetric=False)
    assert isinstance(symmetric.critic.features_extractor, PixelEncoder)
    assert symmetric.critic.features_extractor is not symmetric.actor.features_extractor
    with pytest.raises(ValueError, match="asymmetric critic needs the observation key 'state'"):
        PixelSACPolicy(spaces.Dict({k: v for k, v in SPACE.spaces.items() if k != "state"}), ACTIONS,
                       lambda _: 3e-4, features_extractor_class=PixelEncoder, critic_reads_state=True)


def test_images_are_shifted_in_gradient_steps_only():
    torch.manual_seed(0)
    encoder = PixelEncoder(SPACE, shift=2, channels=[8], feature_dim=6)
    obs = batch(2, size=16)
    encoder.train()
    first, second = encoder(obs), encoder(obs)
    encoder.eval()
    plain = encoder(obs)
    assert not torch.equal(first, second) and not torch.equal(first, plain)   # a random shift per pass
    assert torch.equal(encoder(obs), plain)                                   # none when acting
    assert torch.equal(plain[:, 6:], obs["proprio"])                          # proprio passes as is
    uniform = {**obs, "base_camera": torch.full((16, 3, 16, 16), 0.3)}        # shifting a flat image changes nothing
    encoder.train()
    train_uniform = encoder(uniform)
    encoder.eval()
    assert torch.allclose(train_uniform, encoder(uniform))
    with pytest.raises(ValueError, match="shift must be an int >= 0"):
        PixelEncoder(SPACE, shift=-1)
    with pytest.raises(ValueError, match="camera 'proprio' is not a uint8"):
        PixelEncoder(SPACE, cameras=["proprio"])


@pytest.mark.parametrize("argv, message", [
    (["--obs-mode", "rgb", "--algo", "td3"], "--obs-mode rgb trains SAC only (add --algo sac), not TD3"),
    (["--obs-mode", "rgb"], "--obs-mode rgb trains SAC only (add --algo sac), not PPO"),
    (["--algo", "sac", "--camera-size", "32", "32"], "--camera-size needs --obs-mode rgb"),
    (["--algo", "sac", "--obs-mode", "state", "--asymmetric-critic", "--camera-size", "8", "8"],
     "--camera-size and --asymmetric-critic need --obs-mode rgb"),
    (["--algo", "sac", "--obs-mode", "rgb", "--camera-size", "4", "4"], "camera size must be two ints W H in [8, 256]"),
    (["--resume", "--obs-mode", "rgb"], "--resume: a resumed run keeps what its policy reads; leave out --obs-mode"),
])
def test_bad_pixel_options_are_refused_before_any_work(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as refused:
        load_script("train_sb3").main([*argv, "--log-dir", str(tmp_path / "run")])
    assert refused.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.e2e
def test_a_tiny_pixel_run_saves_and_evaluates_from_images_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sb3_off_policy.OFF_POLICY_DEFAULTS, "learning_starts", 8)
    monkeypatch.setitem(sb3_pixels.PIXEL_DEFAULTS, "batch_size", 8)
    monkeypatch.setitem(sb3_pixels.PIXEL_DEFAULTS, "buffer_size", 64)
    log_dir = tmp_path / "pixels"
    load_script("train_sb3").main([*ARGS, "--asymmetric-critic", "--camera-size", "16", "16", "--total-timesteps",
                                   "16", "--log-dir", str(log_dir), "--eval-episodes", "0"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("training FrankaLift-v1 from 16x16 camera images (critics on the state): 16 env steps = "
                             "8 steps of 2 envs, each followed by 1 gradient step of 8 transitions from env step 8 on")
    assert out[1].startswith("trained 16 env steps and 4 gradient steps in ")   # after steps 5 .. 8 of the envs
    assert table(log_dir)[-1]["env_steps"] == "16"
    run = json.loads((log_dir / "run.json").read_text())
    settings = run["hyperparameters"]
    assert settings["buffer_size"] == 64 and "'critic_reads_state': True" in settings["policy_kwargs"]
    path = str(log_dir / "model.zip")
    load_script("evaluate").main(["--checkpoint", path, "--episodes", "2", "--max-episode-steps", "5", "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["episodes"] == 2 and summary["mean_length"] == 5.0 and summary["env_steps"] == 16
    env = summary["provenance"]["env"]   # evaluated from images and proprioception: no state in the observation
    assert env["obs_mode"] == "rgb" and env["env_kwargs"]["sensor_configs"] == {"width": 16, "height": 16}
    with pytest.raises(SystemExit) as refused:
        load_script("evaluate").main(["--checkpoint", path, "--episodes", "1", "--camera-size", "32", "32"])
    assert refused.value.code == 2 and "the actor reads camera images of" in capsys.readouterr().err


def test_the_vec_envs_proprio_is_the_rgb_observations_state_and_state_the_whole_flat_state():
    from simulo_envs.envs.observations import flatten_obs
    from simulo_envs.vector import make_vector_env

    venv = make_vector_env("FrankaLift-v1", num_envs=2, obs_mode="rgb+state_dict",
                           sensor_configs={"width": 16, "height": 16})
    env = sb3_pixels.SB3PixelVecEnv(venv)
    try:
        obs = env.reset()
        raw = venv.base_env.get_obs(unflattened=True)
        kept = {k: v for k, v in raw["extra"].items() if k in venv.base_env.image_obs_extra}
        assert set(kept) and set(kept) != set(raw["extra"])   # some extras are privileged
        proprio = flatten_obs({"agent": raw["agent"], "extra": kept}).numpy()
        state = flatten_obs({"agent": raw["agent"], "extra": raw["extra"]}).numpy()
        assert np.array_equal(obs["proprio"], proprio) and np.array_equal(obs["state"], state)
        assert env.observation_space["proprio"].shape == (proprio.shape[1],)
        assert env.observation_space["state"].shape == (state.shape[1],)
        assert obs["base_camera"].shape == (2, 3, 16, 16) and obs["base_camera"].dtype == np.uint8
    finally:
        env.close()
