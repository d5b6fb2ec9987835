"""The two policies: ``BCPolicy`` (behaviour cloning) and ``DiffusionPolicy``.

Both take an observation history and return a chunk of env actions to execute:

    policy.plan(state float32 (B, To, D), image uint8 (B, To, 3, H, W) or None) -> float32 (B, Ta, A)

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
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from simulo_envs.imitation.config import ILConfig
from simulo_envs.imitation.denoisers import build_denoiser
from simulo_envs.imitation.encoders import Normalizer, ObsEncoder
from simulo_envs.imitation.spec import PolicySpec

__all__ = ["BCPolicy", "DiffusionPolicy", "build_policy"]


def _encoder(spec: PolicySpec, config: ILConfig, normalizer: Normalizer) -> ObsEncoder:
    return ObsEncoder(normalizer, config.obs_horizon, spec.state_dim, spec.image_size, config.image_channels,
                      config.image_features, config.shift_pad, config.image_encoder)


class BCPolicy(nn.Module):
    """Behaviour cloning (see the module docstring)."""

    def __init__(self, spec: PolicySpec, config: ILConfig, normalizer: Normalizer):
        super().__init__()
        self.spec, self.config = spec, config
        self.normalizer = normalizer
        self.encoder = _encoder(spec, config, normalizer)
        layers, width = [], self.encoder.cond_dim
        for _ in range(config.blocks):
            layers += [nn.Linear(width, config.hidden), nn.Mish()]
            width = config.hidden
        self.head = nn.Sequential(*layers, nn.Linear(width, config.pred_horizon * spec.action_dim))

    def _forward(self, state, image) -> torch.Tensor:
        out = self.head(self.encoder(state, image))
        return out.reshape(len(out), self.config.pred_horizon, self.spec.action_dim)

    def loss(self, batch: dict) -> torch.Tensor:
        """Mean squared error between predicted and demonstrated normalised actions."""
        return F.mse_loss(self._forward(batch["state"], batch.get("image")), self.normalizer.action(batch["actions"]))

    @torch.no_grad()
    def plan(self, state: torch.Tensor, image: Optional[torch.Tensor] = None,
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
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

    def loss(self, batch: dict) -> torch.Tensor:
        """Mean squared error of the predicted noise (DDPM's simplified objective), plus
        ``aux_bc_weight`` times that of the clean chunk regressed from the conditioning."""
        cond = self.encoder(batch["state"], batch.get("image"))
        clean = self.normalizer.action(batch["actions"])
        noise = torch.randn_like(clean)
        steps = torch.randint(0, self.config.train_timesteps, (len(clean),))
        noisy = self.train_scheduler.add_noise(clean, noise, steps)
        loss = F.mse_loss(self.denoiser(noisy, steps, cond), noise)
        if self.aux_head is not None:
            loss = loss + self.config.aux_bc_weight * F.mse_loss(self.aux_head(cond), clean.flatten(1))
        return loss

    @torch.no_grad()
    def plan(self, state: torch.Tensor, image: Optional[torch.Tensor] = None,
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
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
