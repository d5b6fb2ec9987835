"""The two policies: ``BCPolicy`` (behaviour cloning) and ``DiffusionPolicy``.

Both take an observation history and return a chunk of env actions to execute:

    policy.plan(state float32 (B, To, D), image uint8 (B, To, 3 * K, H, W) or None) -> float32 (B, Ta, A)

(``K``: the cameras the policy reads, ``PolicySpec.cameras``, stacked on the channel axis)

with ``To = obs_horizon`` and ``Ta = action_horizon`` of their ``ILConfig``, and train on
``Windows`` batches through ``policy.loss(batch) -> scalar``.

- BC: the observation through ``ObsEncoder`` and an MLP to one normalised action, mean squared
  error (Pomerleau, 1989; the MLP/conv baseline of ManiSkill 3 and of Diffusion Policy's paper).
- Diffusion Policy (Chi et al., RSS 2023): a denoiser (``denoisers.py``) predicts the noise added
  to a normalised chunk of ``pred_horizon`` actions, conditioned on the encoded observations
  (epsilon prediction, DDPM training with ``train_timesteps`` steps and the squared-cosine noise
  schedule, diffusers' ``DDPMScheduler``). At run time diffusers' ``DDIMScheduler`` denoises in
  ``inference_steps`` deterministic steps (Song et al., ICLR 2021) from Gaussian noise; the chunk's
  actions ``obs_horizon - 1 .. obs_horizon - 2 + action_horizon`` (the current step onward) are
  executed (receding horizon).
  With ``encoder_pretrain`` > 0 (rgb), training has two stages: first the image encoder and a
  regression head learn the clean chunk by mean squared error (behaviour cloning's signal, which
  trains a visual encoder far faster than the denoising loss), then the encoder is frozen and
  the denoiser learns on its features (the paper's end-to-end encoder replaced by one pretrained
  on the same demonstrations, as the paper's comparison of vision encoders does with pretrained ones).
  Once frozen, the encoder's features are computed once per frame (``feature_copies`` randomly
  shifted copies) and read from that cache. ``state_aux_weight`` > 0 adds, while the encoder
  trains, a regression of the state columns the policy does not read (``PolicySpec.other_columns``:
  object poses, the goal), privileged supervision used in training only.
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from simulo_envs.imitation.config import ILConfig
from simulo_envs.imitation.denoisers import build_denoiser
from simulo_envs.imitation.encoders import STATE_STD_FLOOR, Normalizer, ObsEncoder, check_crop
from simulo_envs.imitation.spec import PolicySpec

__all__ = ["BCPolicy", "DiffusionPolicy", "build_policy", "check_settings"]


def _encoder(spec: PolicySpec, config: ILConfig, normalizer: Normalizer) -> ObsEncoder:
    return ObsEncoder(normalizer, config.obs_horizon, spec.state_dim, spec.image_size, config.image_channels,
                      config.image_features, config.shift_pad, config.image_encoder, config.image_crop,
                      len(spec.cameras) if spec.obs == "rgb" else 1)


def check_settings(spec: PolicySpec, config: ILConfig) -> None:
    """Refuse settings that do not apply to a policy of ``spec`` (before anything is built or written).

    Raises:
        ValueError: ``encoder_pretrain`` or ``state_aux_weight`` without images (or, for the
            latter, without state columns left to the image); an ``image_crop`` outside the image,
            or with several cameras.
    """
    if config.encoder_pretrain > 0 and spec.obs != "rgb":
        raise ValueError("encoder_pretrain needs an image encoder (--obs rgb)")
    if config.state_aux_weight > 0 and (spec.obs != "rgb" or not spec.other_columns):
        raise ValueError("state_aux_weight needs an rgb policy whose demonstrations hold state it does not read "
                         "(object poses): record them with the state beside the images (collect_demos.py or "
                         "replay.py --obs-mode rgb+state; an 'rgb' dataset holds the robot's own state only)")
    if config.image_crop and spec.image_size is not None:
        check_crop(config.image_crop, spec.image_size)
        if len(spec.cameras) > 1:
            raise ValueError(f"image_crop is a region of one camera's image; the policy reads {len(spec.cameras)} "
                             f"cameras ({', '.join(spec.cameras)}): read one (train_il.py --camera NAME) or drop it")


def _mlp(width: int, config: ILConfig, out: int) -> nn.Sequential:
    """``config.blocks`` Linear + Mish layers of ``config.hidden`` units, then a Linear to ``out``."""
    layers = []
    for _ in range(config.blocks):
        layers += [nn.Linear(width, config.hidden), nn.Mish()]
        width = config.hidden
    return nn.Sequential(*layers, nn.Linear(width, out))


class BCPolicy(nn.Module):
    """Behaviour cloning (see the module docstring)."""

    def __init__(self, spec: PolicySpec, config: ILConfig, normalizer: Normalizer):
        super().__init__()
        self.spec, self.config = spec, config
        self.normalizer = normalizer
        self.encoder = _encoder(spec, config, normalizer)
        self.head = _mlp(self.encoder.cond_dim, config, config.pred_horizon * spec.action_dim)

    def _forward(self, state, image) -> torch.Tensor:
        out = self.head(self.encoder(state, image))
        return out.reshape(len(out), self.config.pred_horizon, self.spec.action_dim)

    def loss(self, batch: dict) -> torch.Tensor:
        """Mean squared error between predicted and demonstrated normalised actions."""
        return F.mse_loss(self._forward(batch["state"], batch.get("image")), self.normalizer.action(batch["actions"]))

    @torch.no_grad()
    def plan(self, state: torch.Tensor, image: Optional[torch.Tensor] = None,
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
        """The actions (B, action_horizon, A) to run next, in the env's action units, from the last ``obs_horizon``
        observations ``state`` (B, To, S) (and ``image`` (B, To, 3K, H, W) uint8 for an image policy);
        ``generator`` seeds the sampling noise."""
        chunk = self.normalizer.unaction(self._forward(state, image).clamp(-1, 1))
        start = self.config.obs_horizon - 1
        return chunk[:, start:start + self.config.action_horizon]


class DiffusionPolicy(nn.Module):
    """Diffusion Policy (see the module docstring)."""

    def __init__(self, spec: PolicySpec, config: ILConfig, normalizer: Normalizer):
        super().__init__()
        from diffusers import DDIMScheduler, DDPMScheduler

        self.spec, self.config = spec, config
        self.normalizer = normalizer
        self.encoder = _encoder(spec, config, normalizer)
        if config.denoiser == "unet":
            extra = {"down_dims": config.down_dims}
        else:
            extra = {"hidden": config.hidden, "blocks": config.blocks}
        self.denoiser = build_denoiser(config.denoiser, spec.action_dim, self.encoder.cond_dim, config.pred_horizon,
                                       **extra)
        schedule = dict(num_train_timesteps=config.train_timesteps, beta_schedule="squaredcos_cap_v2",
                        clip_sample=True, prediction_type="epsilon")
        self.train_scheduler = DDPMScheduler(**schedule)
        self.sampler = DDIMScheduler(**schedule, set_alpha_to_one=True, steps_offset=0)
        self.sampler.set_timesteps(config.inference_steps)
        # an auxiliary regression of the clean chunk from the conditioning (training only): direct
        # supervision for the image encoder, which the denoising loss alone trains slowly
        self.aux_head = (nn.Linear(self.encoder.cond_dim, config.pred_horizon * spec.action_dim)
                         if config.aux_bc_weight > 0 else None)
        check_settings(spec, config)
        self.pretrain_head = (_mlp(self.encoder.cond_dim, config, config.pred_horizon * spec.action_dim)
                              if config.encoder_pretrain > 0 else None)
        others = len(spec.other_columns)
        self.state_aux_head = None
        if config.state_aux_weight > 0:
            self.state_aux_head = _mlp(self.encoder.cond_dim, config, config.obs_horizon * others)
            self.register_buffer("other_mean", torch.zeros(others))
            self.register_buffer("other_std", torch.ones(others))
        self.pretraining = False      # the trainer's stage (see set_stage)
        self.encoder_frozen = False
        self.feature_bank: Optional[torch.Tensor] = None   # (F, copies, feature_dim), see cache_features

    def fit_other_state(self, other: torch.Tensor) -> None:
        """Scale of the ``state_aux_weight`` targets: zero mean, unit variance over ``other``
        (float32 (F, P), every demonstrated frame's unread state columns)."""
        if self.state_aux_head is not None:
            self.other_mean.copy_(other.mean(0))
            self.other_std.copy_(other.std(0, unbiased=False).clamp_min(STATE_STD_FLOOR))

    def _state_aux_loss(self, cond: torch.Tensor, batch: dict) -> torch.Tensor:
        if "other" not in batch:
            raise ValueError("state_aux_weight needs demonstrations that carry the state the policy does not read")
        target = ((batch["other"] - self.other_mean) / self.other_std).flatten(1)
        return self.config.state_aux_weight * F.mse_loss(self.state_aux_head(cond), target)

    def set_stage(self, pretraining: bool) -> None:
        """Training stage of an ``encoder_pretrain`` run: True, the encoder and regression head
        learn (the denoiser idles); False, the image encoder is frozen and the denoiser learns."""
        self.pretraining = pretraining
        self.encoder_frozen = not pretraining
        for parameter in self.encoder.parameters():
            parameter.requires_grad_(pretraining)

    @torch.no_grad()
    def cache_features(self, images: torch.Tensor, copies: int, chunk: int = 512) -> None:
        """With the encoder frozen: encode every demonstrated frame once per copy (copy 0 unshifted,
        the others randomly shifted as in training), so that training reads the features from
        ``feature_bank`` (F, copies, K * feature_dim) by the batch's ``"frames"`` instead of running
        the encoder every step. ``images``: uint8 (F, 3 * K, H, W), the ``Windows``' frames."""
        bank = []
        for copy in range(copies):
            bank.append(torch.cat([self.encoder.image_features(images[i:i + chunk], shift=copy > 0)
                                   for i in range(0, len(images), chunk)]))
        self.feature_bank = torch.stack(bank, dim=1)

    def _cached_condition(self, batch: dict) -> torch.Tensor:
        frames = batch["frames"]
        copy = torch.randint(0, self.feature_bank.shape[1], frames.shape)
        return self.encoder.condition(batch["state"], self.feature_bank[frames, copy])

    def loss(self, batch: dict) -> torch.Tensor:
        """Mean squared error of the predicted noise (DDPM's simplified objective), plus
        ``aux_bc_weight`` times that of the clean chunk regressed from the conditioning; in the
        pretraining stage, that regression's error alone (through ``pretrain_head``)."""
        clean = self.normalizer.action(batch["actions"])
        if self.pretraining:
            cond = self.encoder(batch["state"], batch.get("image"))
            loss = F.mse_loss(self.pretrain_head(cond), clean.flatten(1))
            return loss + self._state_aux_loss(cond, batch) if self.state_aux_head is not None else loss
        if self.config.state_noise > 0:   # the denoiser learns to lean on the image (see ILConfig.state_noise)
            noise = torch.randn_like(batch["state"]) * self.config.state_noise * self.normalizer.state_std
            batch = {**batch, "state": batch["state"] + noise}
        if self.encoder_frozen and self.feature_bank is not None:
            cond = self._cached_condition(batch)
        else:
            with torch.set_grad_enabled(torch.is_grad_enabled() and not self.encoder_frozen):
                cond = self.encoder(batch["state"], batch.get("image"))
        if self.state_aux_head is not None and not self.encoder_frozen:
            loss = self._state_aux_loss(cond, batch)
        else:
            loss = 0.0
        noise = torch.randn_like(clean)
        steps = torch.randint(0, self.config.train_timesteps, (len(clean),))
        noisy = self.train_scheduler.add_noise(clean, noise, steps)
        loss = loss + F.mse_loss(self.denoiser(noisy, steps, cond), noise)
        if self.aux_head is not None:
            loss = loss + self.config.aux_bc_weight * F.mse_loss(self.aux_head(cond), clean.flatten(1))
        return loss

    @torch.no_grad()
    def plan(self, state: torch.Tensor, image: Optional[torch.Tensor] = None,
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
        """The actions (B, action_horizon, A) to run next, in the env's action units, from the last ``obs_horizon``
        observations ``state`` (B, To, S) (and ``image`` (B, To, 3K, H, W) uint8 for an image policy);
        ``generator`` seeds the sampling noise."""
        cond = self.encoder(state, image)
        config = self.config
        chunk = torch.randn(len(state), config.pred_horizon, self.spec.action_dim, generator=generator)
        for step in self.sampler.timesteps:
            steps = torch.full((len(chunk),), int(step), dtype=torch.long)
            chunk = self.sampler.step(self.denoiser(chunk, steps, cond), step, chunk).prev_sample
        chunk = self.normalizer.unaction(chunk.clamp(-1, 1))
        start = config.obs_horizon - 1
        return chunk[:, start:start + config.action_horizon]


def build_policy(spec: PolicySpec, config: ILConfig, normalizer: Normalizer) -> nn.Module:
    """The ``BCPolicy`` or ``DiffusionPolicy`` of ``config.policy``."""
    return (BCPolicy if config.policy == "bc" else DiffusionPolicy)(spec, config, normalizer)
