"""Noise-prediction networks of Diffusion Policy: ``eps = net(noisy action chunk, timestep, condition)``.

Both map a noisy chunk (B, Tp, A), integer diffusion timesteps (B,) and a conditioning vector
(B, C) to a tensor shaped like the chunk.

- ``ConditionalUnet1D``: the 1-D temporal U-Net of Diffusion Policy (Chi et al., RSS 2023,
  section III-B and Fig. 3): convolutions over the chunk's time axis, a down path and an up path
  with skip connections, every residual block modulated by FiLM (Perez et al., AAAI 2018) from the
  timestep embedding and the observation condition. Written here from the paper's description.
- ``MLPDenoiser``: the chunk flattened, residual MLP blocks conditioned by concatenation; lighter,
  for a CPU budget (the choice between them is measured in ``docs/imitation.md``).

The timestep embedding is the sinusoidal one of "Attention is all you need" (Vaswani et al., 2017).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["ConditionalUnet1D", "MLPDenoiser", "timestep_embedding", "build_denoiser", "DENOISERS"]


def timestep_embedding(steps: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of integer ``steps`` (B,) -> float32 (B, dim) (``dim`` even)."""
    half = dim // 2
    frequencies = torch.exp(-math.log(10000.0) * torch.arange(half, device=steps.device) / (half - 1))
    angles = steps.to(torch.float32).unsqueeze(1) * frequencies.unsqueeze(0)
    return torch.cat([angles.sin(), angles.cos()], dim=1)


class _StepEmbedding(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.net = nn.Sequential(nn.Linear(dim, dim * 4), nn.Mish(), nn.Linear(dim * 4, dim))

    def forward(self, steps: torch.Tensor) -> torch.Tensor:
        return self.net(timestep_embedding(steps, self.dim))


class _ConvBlock(nn.Sequential):
    """Conv1d -> GroupNorm -> Mish, length preserved."""

    def __init__(self, channels_in: int, channels_out: int, kernel: int, groups: int):
        super().__init__(nn.Conv1d(channels_in, channels_out, kernel, padding=kernel // 2),
                         nn.GroupNorm(groups, channels_out), nn.Mish())


class _FiLMResBlock(nn.Module):
    """Two conv blocks; the first one's output scaled and shifted per channel from ``cond``."""

    def __init__(self, channels_in: int, channels_out: int, cond_dim: int, kernel: int, groups: int):
        super().__init__()
        self.first = _ConvBlock(channels_in, channels_out, kernel, groups)
        self.second = _ConvBlock(channels_out, channels_out, kernel, groups)
        self.film = nn.Sequential(nn.Mish(), nn.Linear(cond_dim, 2 * channels_out))
        self.skip = nn.Conv1d(channels_in, channels_out, 1) if channels_in != channels_out else nn.Identity()

    def forward(self, x: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        scale, shift = self.film(cond).unsqueeze(-1).chunk(2, dim=1)
        h = self.first(x) * scale + shift
        return self.second(h) + self.skip(x)


class ConditionalUnet1D(nn.Module):
    """1-D temporal U-Net (see the module docstring).

    Args:
        action_dim: A. cond_dim: C (the observation encoder's output).
        down_dims: channels of each level; the chunk is halved in time between levels, so
            ``pred_horizon`` must be divisible by ``2 ** (len(down_dims) - 1)``.
        step_dim: width of the timestep embedding. kernel: temporal kernel size. groups: GroupNorm groups.
    """

    def __init__(self, action_dim: int, cond_dim: int, down_dims: tuple[int, ...] = (64, 128, 256),
                 step_dim: int = 64, kernel: int = 5, groups: int = 8):
        super().__init__()
        self.step = _StepEmbedding(step_dim)
        film_dim = step_dim + cond_dim
        widths = [action_dim, *down_dims]
        self.down = nn.ModuleList()
        for level, (w_in, w_out) in enumerate(zip(widths[:-1], widths[1:])):
            last = level == len(down_dims) - 1
            self.down.append(nn.ModuleList([
                _FiLMResBlock(w_in, w_out, film_dim, kernel, groups),
                _FiLMResBlock(w_out, w_out, film_dim, kernel, groups),
                nn.Identity() if last else nn.Conv1d(w_out, w_out, 3, stride=2, padding=1)]))
        self.mid = nn.ModuleList([_FiLMResBlock(down_dims[-1], down_dims[-1], film_dim, kernel, groups)
                                  for _ in range(2)])
        self.up = nn.ModuleList()
        for level, (w_out, w_in) in enumerate(zip(reversed(down_dims[:-1]), reversed(down_dims[1:]))):
            self.up.append(nn.ModuleList([
                _FiLMResBlock(2 * w_in, w_out, film_dim, kernel, groups),
                _FiLMResBlock(w_out, w_out, film_dim, kernel, groups),
                nn.ConvTranspose1d(w_out, w_out, 4, stride=2, padding=1)]))
        self.out = nn.Sequential(_ConvBlock(down_dims[0], down_dims[0], kernel, groups),
                                 nn.Conv1d(down_dims[0], action_dim, 1))
        self.time_divisor = 2 ** (len(down_dims) - 1)

    def forward(self, chunk: torch.Tensor, steps: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """The predicted noise (B, Tp, A) of ``chunk`` (B, Tp, A) at diffusion ``steps`` (B,), conditioned on
        ``cond`` (B, C)."""
        film = torch.cat([self.step(steps), cond], dim=1)
        x = chunk.transpose(1, 2)                       # (B, A, Tp): time is the convolution axis
        skips = []
        for first, second, downsample in self.down:
            x = second(first(x, film), film)
            skips.append(x)
            x = downsample(x)
        for block in self.mid:
            x = block(x, film)
        for first, second, upsample in self.up:
            x = torch.cat([x, skips.pop()], dim=1)
            x = upsample(second(first(x, film), film))
        return self.out(x).transpose(1, 2)


class MLPDenoiser(nn.Module):
    """The chunk (B, Tp, A) flattened, with the timestep embedding and ``cond`` concatenated, through
    ``blocks`` residual blocks (LayerNorm, Linear, Mish, Linear) of width ``hidden``."""

    def __init__(self, action_dim: int, cond_dim: int, pred_horizon: int, hidden: int = 512, blocks: int = 3,
                 step_dim: int = 64):
        super().__init__()
        self.step = _StepEmbedding(step_dim)
        self.shape = (pred_horizon, action_dim)
        self.inp = nn.Linear(pred_horizon * action_dim + step_dim + cond_dim, hidden)
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.LayerNorm(hidden + cond_dim), nn.Linear(hidden + cond_dim, hidden), nn.Mish(),
                          nn.Linear(hidden, hidden)) for _ in range(blocks)])
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, pred_horizon * action_dim))

    def forward(self, chunk: torch.Tensor, steps: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """The predicted noise (B, Tp, A) of ``chunk`` (B, Tp, A) at diffusion ``steps`` (B,), conditioned on
        ``cond`` (B, C)."""
        x = self.inp(torch.cat([chunk.flatten(1), self.step(steps), cond], dim=1))
        for block in self.blocks:
            x = x + block(torch.cat([x, cond], dim=1))
        return self.out(x).reshape(-1, *self.shape)


DENOISERS = ("unet", "mlp")


def build_denoiser(kind: str, action_dim: int, cond_dim: int, pred_horizon: int, **kwargs) -> nn.Module:
    """A ``ConditionalUnet1D`` (``"unet"``; keywords ``down_dims``, ``kernel``...) or an
    ``MLPDenoiser`` (``"mlp"``; ``hidden``, ``blocks``).

    Raises:
        ValueError: another kind; a ``pred_horizon`` the U-Net's levels cannot halve.
    """
    if kind == "unet":
        net = ConditionalUnet1D(action_dim, cond_dim, **kwargs)
        if pred_horizon % net.time_divisor:
            raise ValueError(f"pred_horizon {pred_horizon} must be divisible by {net.time_divisor} for a U-Net of "
                             f"{len(kwargs.get('down_dims', (64, 128, 256)))} levels")
        return net
    if kind == "mlp":
        return MLPDenoiser(action_dim, cond_dim, pred_horizon, **kwargs)
    raise ValueError(f"denoiser must be one of {DENOISERS}, got {kind!r}")
