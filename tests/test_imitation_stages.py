"""Diffusion Policy's visual-training aids without an env: the encoder's pretraining stage, the
auxiliary regression of the state the policy does not read, and the image's region of interest."""

import math

import pytest
import torch
import torch.nn.functional as F

from simulo_envs.imitation import Demonstrations, Episode, ILConfig, PolicySpec, Windows
from simulo_envs.imitation.config import default_config
from simulo_envs.imitation.encoders import Normalizer, ObsEncoder
from simulo_envs.imitation.policies import DiffusionPolicy
from simulo_envs.imitation.trainer import _Budget, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

# an rgb policy reading state columns 0 and 1 of three; column 2 (an object's x, say) is left to the image
SPEC = PolicySpec("FrankaPush-v1", "rgb", "pd_ee_delta_pos", state_dim=2, action_dim=2, camera="cam",
                  image_size=(16, 16), state_columns=(0, 1), state_names=("q0", "q1", "cube_x"))
SMALL = {"hidden": 16, "blocks": 1, "image_channels": [4, 8], "image_features": 8}


def _demos(episodes: int = 3, length: int = 5) -> Demonstrations:
    generator = torch.Generator().manual_seed(0)
    out = []
    for index in range(episodes):
        image = torch.randint(0, 256, (length, 3, 16, 16), dtype=torch.uint8, generator=generator)
        state = torch.randn(length, 2, generator=generator)
        other = torch.full((length, 1), float(index))
        out.append(Episode(state, torch.randn(length, 2, generator=generator), image, index, other))
    return Demonstrations(SPEC, out, source="test")


def _policy(**overrides) -> tuple[DiffusionPolicy, dict]:
    config = default_config("diffusion", "rgb", {**SMALL, **overrides})
    windows = Windows(_demos(), config.obs_horizon, config.pred_horizon)
    torch.manual_seed(0)
    policy = DiffusionPolicy(SPEC, config, Normalizer(windows.state, windows.actions))
    if config.state_aux_weight > 0:
        policy.fit_other_state(windows.other)
    return policy, windows.batch(torch.arange(len(windows)))


def _grads(module) -> float:
    return sum(float(p.grad.abs().sum()) for p in module.parameters() if p.grad is not None)


def test_the_spec_names_the_unread_columns_and_windows_carry_them():
    assert SPEC.other_columns == (2,)
    assert PolicySpec("FrankaPush-v1", "state", "pd_ee_delta_pos", 3, 2).other_columns == ()
    batch = Windows(_demos(), obs_horizon=2, pred_horizon=2).batch(torch.tensor([0, 5, 14]))
    assert batch["other"].shape == (3, 2, 1)
    assert batch["other"][:, -1, 0].tolist() == [0.0, 1.0, 2.0]   # the episode index of each window


def test_pretraining_stage_trains_the_encoder_then_the_denoiser_alone():
    policy, batch = _policy(encoder_pretrain=0.5)
    policy.set_stage(True)
    policy.loss(batch).backward()
    assert _grads(policy.encoder) > 0 and _grads(policy.pretrain_head) > 0
    assert _grads(policy.denoiser) == 0                               # the denoiser idles
    policy.zero_grad(set_to_none=True)
    policy.set_stage(False)
    assert not any(p.requires_grad for p in policy.encoder.parameters())
    policy.loss(batch).backward()
    assert _grads(policy.denoiser) > 0
    assert all(p.grad is None for p in policy.encoder.parameters())   # frozen: AdamW leaves it alone
    assert all(p.grad is None for p in policy.pretrain_head.parameters())


def test_state_aux_regresses_the_unread_state_while_the_encoder_learns():
    policy, batch = _policy(state_aux_weight=2.0, shift_pad=0)
    assert policy.other_mean.tolist() == [1.0]                        # episodes 0, 1, 2 of equal length
    assert policy.other_std.tolist() == pytest.approx([math.sqrt(2 / 3)])
    torch.manual_seed(1)
    total = policy.loss(batch)
    torch.manual_seed(1)
    head, policy.state_aux_head = policy.state_aux_head, None         # the same noise: denoising alone
    denoising = policy.loss(batch)
    policy.state_aux_head = head
    target = (batch["other"] - 1.0) / math.sqrt(2 / 3)
    expected = F.mse_loss(head(policy.encoder(batch["state"], batch["image"])), target.flatten(1))
    assert float(expected.detach()) > 0.01 and torch.allclose(total, denoising + 2.0 * expected, atol=1e-5)
    total.backward()
    assert _grads(head) > 0
    missing = {k: v for k, v in batch.items() if k != "other"}
    with pytest.raises(ValueError, match="state the policy does not read"):
        policy.loss(missing)


def test_state_noise_perturbs_the_state_the_denoiser_is_conditioned_on_and_nothing_else():
    policy, batch = _policy(encoder_pretrain=0.5, state_noise=0.5, shift_pad=0)
    policy.set_stage(False)
    seen, given = [], batch["state"].clone()
    policy.denoiser.register_forward_pre_hook(lambda module, args: seen.append(args[2]))
    clean = policy.encoder(batch["state"], batch["image"])
    for _ in range(40):
        policy.loss(batch)
    offsets = torch.stack(seen) - clean            # (draws, B, To * (2 + 8)): state then features, per step
    per_step = offsets.reshape(*offsets.shape[:2], 2, 10)
    assert per_step[..., 2:].abs().max() < 1e-5    # the image features are untouched
    assert float(per_step[..., :2].std()) == pytest.approx(0.5, rel=0.05)   # in units of the state's spread
    assert torch.equal(batch["state"], given)     # the batch itself is not changed


def test_settings_that_do_not_apply_are_refused():
    with pytest.raises(ValueError, match="Diffusion Policy settings"):
        ILConfig(policy="bc", obs_horizon=1, pred_horizon=1, action_horizon=1, encoder_pretrain=0.3)
    with pytest.raises(ValueError, match="Diffusion Policy settings"):
        ILConfig(policy="bc", obs_horizon=1, pred_horizon=1, action_horizon=1, state_aux_weight=1.0)
    with pytest.raises(ValueError, match="Diffusion Policy settings"):
        ILConfig(policy="bc", obs_horizon=1, pred_horizon=1, action_horizon=1, state_noise=0.1)
    with pytest.raises(ValueError, match=r"denoiser='unet': Diffusion Policy settings"):  # no U-Net in BC
        ILConfig(policy="bc", obs_horizon=1, pred_horizon=1, action_horizon=1, denoiser="unet")
    with pytest.raises(ValueError, match=r"inference_steps=5: Diffusion Policy settings"):
        default_config("bc", "state", {"inference_steps": 5})
    assert default_config("bc", "state", {"hidden": 64}).hidden == 64   # a setting BC reads is taken
    with pytest.raises(ValueError, match="state_noise must be >= 0"):
        ILConfig(state_noise=-0.1)
    with pytest.raises(ValueError, match="encoder_pretrain must be in"):
        ILConfig(encoder_pretrain=1.0)
    with pytest.raises(ValueError, match="image_crop must be"):
        ILConfig(image_crop=(0, 0, 4, 4))
    state_spec = PolicySpec("FrankaPush-v1", "state", "pd_ee_delta_pos", 2, 2)
    normalizer = Normalizer(torch.zeros(4, 2), torch.zeros(4, 2))
    for setting in ({"encoder_pretrain": 0.3}, {"state_aux_weight": 1.0}):
        with pytest.raises(ValueError, match="rgb"):
            DiffusionPolicy(state_spec, default_config("diffusion", "state", {**SMALL, **setting}), normalizer)


def test_image_crop_reads_a_region_and_refuses_one_outside_the_image():
    normalizer = Normalizer(torch.zeros(4, 2), torch.zeros(4, 2))
    encoder = ObsEncoder(normalizer, 1, 2, (16, 16), (4,), 8, shift_pad=0, crop=(4, 2, 8, 12))
    assert encoder.image.convs(torch.zeros(1, 3, 8, 12)).shape[-2:] == (4, 6)
    image = torch.zeros(2, 1, 3, 16, 16, dtype=torch.uint8)
    encoder.eval()
    base = encoder(torch.zeros(2, 1, 2), image)
    image[1, 0, :, 0, 0] = 255                       # outside the region: no effect
    assert torch.equal(encoder(torch.zeros(2, 1, 2), image), base)
    image[1, 0, :, 4, 2] = 255                       # its top-left pixel: seen
    assert not torch.equal(encoder(torch.zeros(2, 1, 2), image)[1], base[1])
    with pytest.raises(ValueError, match="does not fit"):
        ObsEncoder(normalizer, 1, 2, (16, 16), (4,), 8, crop=(10, 0, 8, 8))


def test_two_stage_learning_rate_and_training():
    budget = _Budget(warmup=0, iterations=100, max_wall_s=None, max_cpu_s=None, split=0.4)
    factors = {}
    for iteration in (0, 20, 39, 40, 41, 70, 99):
        budget.iteration = iteration
        factors[iteration] = budget.factor()
    assert factors[0] == 1.0 and factors[20] == pytest.approx(0.5) and factors[39] < 0.01
    assert factors[40] == pytest.approx(1e-3) and factors[41] == pytest.approx(1 / 60 / 0.02)
    assert factors[70] == pytest.approx(0.5) and factors[99] < 0.01
    assert budget.pretraining() is False and (setattr(budget, "iteration", 39) or budget.pretraining())


def test_a_two_stage_training_freezes_the_encoder_in_its_second_stage(tmp_path):
    config = default_config("diffusion", "rgb", {**SMALL, "iterations": 20, "encoder_pretrain": 0.5,
                                                 "state_aux_weight": 1.0, "lr_warmup": 0})
    states = {}

    def keep_state(path, iteration, wall_s):   # a periodic checkpoint keeps its training state until the next
        states[iteration] = torch.load(path, weights_only=False)["train_state"]["weights"]

    result = train(_demos(), config, str(tmp_path), checkpoint_every=10, progress=False, on_checkpoint=keep_state)
    assert result.iterations == 20
    middle = states[10]
    final = torch.load(tmp_path / "model_final.pt", weights_only=False)["train_state"]["weights"]
    for name in middle:
        if name.startswith("encoder.image."):
            assert torch.equal(middle[name], final[name]), name
        if name.startswith("denoiser.") and name.endswith("weight"):
            assert not torch.equal(middle[name], final[name]), name


def test_a_frozen_encoder_reads_cached_features_by_frame():
    policy, _ = _policy(encoder_pretrain=0.5)
    windows = Windows(_demos(), policy.config.obs_horizon, policy.config.pred_horizon)
    policy.set_stage(False)
    policy.cache_features(windows.image, copies=3, chunk=4)
    assert policy.feature_bank.shape == (15, 3, 8)
    assert torch.allclose(policy.feature_bank[:, 0], policy.encoder.image_features(windows.image, shift=False),
                          atol=1e-5)
    assert not torch.allclose(policy.feature_bank[:, 1], policy.feature_bank[:, 0])   # shifted copies
    batch = windows.batch(torch.tensor([3, 7]), images=False)
    assert "image" not in batch and batch["frames"].tolist() == [[2, 3], [6, 7]]
    loss = policy.loss(batch)                          # no image needed
    loss.backward()
    assert _grads(policy.denoiser) > 0


def test_a_resumed_frozen_run_stays_frozen_whatever_its_new_budget(tmp_path):
    config = default_config("diffusion", "rgb", {**SMALL, "iterations": 15, "encoder_pretrain": 0.5, "lr_warmup": 0})
    train(_demos(), config, str(tmp_path), checkpoint_every=1000, progress=False)
    frozen_at_15 = torch.load(tmp_path / "model_final.pt", weights_only=False)
    assert frozen_at_15["train_state"]["encoder_frozen"] is True and frozen_at_15["iteration"] == 15
    # a larger budget would put iteration 15 back in the first stage (15 / 100 < 0.5): it must not unfreeze
    result = train(_demos(), config.replace(iterations=100), str(tmp_path), checkpoint_every=1000, progress=False,
                   resume=str(tmp_path / "model_final.pt"))
    assert result.iterations == 100
    final = torch.load(tmp_path / "model_final.pt", weights_only=False)
    for name, value in frozen_at_15["train_state"]["weights"].items():
        if name.startswith("encoder.image."):
            assert torch.equal(final["train_state"]["weights"][name], value), name


def test_settings_that_do_not_fit_the_demonstrations_write_nothing(tmp_path):
    out = tmp_path / "run"
    for overrides, message in (({"image_crop": [10, 0, 8, 8]}, "does not fit"),):
        with pytest.raises(ValueError, match=message):
            train(_demos(), default_config("diffusion", "rgb", {**SMALL, **overrides}), str(out), progress=False)
        assert not out.exists()
    no_other = _demos()
    for episode in no_other.episodes:
        episode.other = None
    with pytest.raises(ValueError, match="state the policy does not read"):
        train(no_other, default_config("diffusion", "rgb", {**SMALL, "state_aux_weight": 1.0}), str(out),
              progress=False)
    assert not out.exists()
