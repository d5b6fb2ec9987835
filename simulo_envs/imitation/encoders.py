"""Observation side of the policies: normalisation, image augmentation, the image and observation encoders.

All in torch (torchvision does not import beside the CPU torch build this project pins).

- ``Normalizer``: states to zero mean and unit variance, actions to [-1, 1] per dimension by their
  demonstrated minimum and maximum (Diffusion Policy's convention: the sampler clips to [-1, 1]).
  Statistics are buffers, so they travel in the policy's ``state_dict``.
- ``random_shift``: DrQ's augmentation (Kostrikov et al., ICLR 2021): pad by ``pad`` pixels with
  the border's values, crop back at a random offset per image.
- ``ConvEncoder``: a small stride-2 convolution stack, flattened and projected to ``feature_dim``
  (LayerNorm, tanh), as in DrQ's encoder; a few million multiply-adds per 64x64 image, cheap enough to
  train on a CPU.
- ``KeypointEncoder``: convolutions that keep a 16x16 map, then a spatial softmax turning each of
  its channels into the expected image coordinates of that channel's activation (Levine et al.,
  "End-to-End Training of Deep Visuomotor Policies", JMLR 2016; robomimic's and Diffusion Policy's
  image encoders end the same way): where things are, which a policy placing a cube needs.
- ``ObsEncoder``: the observation history (state and, for rgb, image features of every camera)
  flattened into one conditioning vector. Several cameras share one image encoder and their
  features are concatenated in camera order (LeRobot's Diffusion Policy does the same by default:
  one backbone for all cameras).
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["Normalizer", "random_shift", "ConvEncoder", "KeypointEncoder", "spatial_softmax", "IMAGE_ENCODERS",
           "check_crop", "ObsEncoder"]

STATE_STD_FLOOR = 1e-2
"""Smallest state standard deviation used for scaling (a column constant in the demonstrations is
only centred, not blown up by a tiny spread)."""
ACTION_RANGE_FLOOR = 1e-2
"""Smallest half-range used to scale an action dimension (a constant one, e.g. a gripper held
closed, maps to 0)."""


class Normalizer(nn.Module):
    """Fixed affine maps of states and actions, from the demonstrations' statistics.

    Args:
        state: float32 (F, D) every demonstrated state; actions: float32 (F, A) every action.
    """

    def __init__(self, state: torch.Tensor, actions: torch.Tensor):
        super().__init__()
        self.register_buffer("state_mean", state.mean(0))
        self.register_buffer("state_std", state.std(0, unbiased=False).clamp_min(STATE_STD_FLOOR))
        low, high = actions.min(0).values, actions.max(0).values
        self.register_buffer("action_center", (high + low) / 2)
        self.register_buffer("action_half_range", ((high - low) / 2).clamp_min(ACTION_RANGE_FLOOR))

    def state(self, state: torch.Tensor) -> torch.Tensor:
        """``state`` (..., S) standardised by the demonstrations' mean and std."""
        return (state - self.state_mean) / self.state_std

    def action(self, actions: torch.Tensor) -> torch.Tensor:
        """Demonstrated actions -> [-1, 1]."""
        return (actions - self.action_center) / self.action_half_range

    def unaction(self, normalized: torch.Tensor) -> torch.Tensor:
        """[-1, 1] -> env actions."""
        return normalized * self.action_half_range + self.action_center


def random_shift(images: torch.Tensor, pad: int, generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """Each image of ``images`` (float (B, C, H, W)) translated by a random integer offset in
    ``[-pad, pad]`` pixels per axis, borders repeated (DrQ's augmentation). Returns a new tensor."""
    if pad <= 0:
        return images
    batch, _, height, width = images.shape
    padded = F.pad(images, (pad, pad, pad, pad), mode="replicate")
    dy = torch.randint(0, 2 * pad + 1, (batch, 1), generator=generator)
    dx = torch.randint(0, 2 * pad + 1, (batch, 1), generator=generator)
    rows = (torch.arange(height).unsqueeze(0) + dy)[:, None, :, None]     # (B, 1, H, 1)
    cols = (torch.arange(width).unsqueeze(0) + dx)[:, None, None, :]      # (B, 1, 1, W)
    channels = torch.arange(images.shape[1])[None, :, None, None]
    return padded[torch.arange(batch)[:, None, None, None], channels, rows, cols]


class ConvEncoder(nn.Module):
    """uint8 images (B, 3, H, W) -> float32 features (B, feature_dim).

    ``channels[i]``: output channels of convolution ``i`` (3x3, stride 2, ReLU); the last map is
    flattened and projected (Linear, LayerNorm, tanh). Pixels are scaled to [-0.5, 0.5].
    """

    def __init__(self, image_size: tuple[int, int], channels: tuple[int, ...] = (32, 64, 64, 64),
                 feature_dim: int = 64):
        super().__init__()
        layers, previous = [], 3
        for width in channels:
            layers += [nn.Conv2d(previous, width, 3, stride=2, padding=1), nn.ReLU()]
            previous = width
        self.convs = nn.Sequential(*layers)
        with torch.no_grad():
            flat = self.convs(torch.zeros(1, 3, *image_size)).numel()
        self.head = nn.Sequential(nn.Linear(flat, feature_dim), nn.LayerNorm(feature_dim), nn.Tanh())
        self.feature_dim = feature_dim

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Features (B, F) of ``images`` (B, C, H, W): uint8 0-255, or float already in [-0.5, 0.5]."""
        x = images.to(torch.float32) / 255.0 - 0.5 if images.dtype == torch.uint8 else images
        return self.head(self.convs(x).flatten(1))


class KeypointEncoder(nn.Module):
    """uint8 images (B, 3, H, W) -> float32 features (B, feature_dim), through keypoints.

    Two 3x3 stride-2 convolutions (``channels[0]``, ``channels[1]``), a 3x3 stride-1 one
    (``channels[1]``), a 1x1 one to ``keypoints`` maps (H/4 x W/4), a softmax over each map's
    pixels and the expected (x, y) in [-1, 1] of each map, then Linear, LayerNorm, tanh. Pixels
    are scaled to [-0.5, 0.5].
    """

    def __init__(self, image_size: tuple[int, int], channels: tuple[int, ...] = (32, 64, 64, 64),
                 feature_dim: int = 64, keypoints: int = 32):
        super().__init__()
        first, second = channels[0], channels[min(1, len(channels) - 1)]
        self.convs = nn.Sequential(nn.Conv2d(3, first, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(first, second, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(second, second, 3, stride=1, padding=1), nn.ReLU(),
                                   nn.Conv2d(second, keypoints, 1))
        self.head = nn.Sequential(nn.Linear(2 * keypoints, feature_dim), nn.LayerNorm(feature_dim), nn.Tanh())
        self.feature_dim = feature_dim

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Features (B, F) of ``images`` (B, C, H, W): uint8 0-255, or float already in [-0.5, 0.5]."""
        x = images.to(torch.float32) / 255.0 - 0.5 if images.dtype == torch.uint8 else images
        return self.head(spatial_softmax(self.convs(x)).flatten(1))


def spatial_softmax(maps: torch.Tensor) -> torch.Tensor:
    """float (B, K, H, W) maps -> float (B, K, 2): per map, the expected (x, y) under a softmax
    over its pixels; x from -1 (left column) to 1 (right), y from -1 (top row) to 1 (bottom)."""
    height, width = maps.shape[-2:]
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, height, device=maps.device),
                            torch.linspace(-1, 1, width, device=maps.device), indexing="ij")
    grid = torch.stack([xs.flatten(), ys.flatten()], dim=1).to(maps.dtype)   # (HW, 2)
    return torch.softmax(maps.flatten(2), dim=-1) @ grid


IMAGE_ENCODERS = {"plain": ConvEncoder, "keypoints": KeypointEncoder}
"""``ILConfig.image_encoder`` names -> encoder classes."""


def check_crop(crop: tuple[int, ...], image_size: tuple[int, int]) -> None:
    """Raise ValueError unless ``crop`` (top, left, height, width) [px] lies inside ``image_size``
    (height, width)."""
    top, left, height, width = crop
    if top + height > image_size[0] or left + width > image_size[1]:
        raise ValueError(f"image_crop {tuple(crop)} (top, left, height, width) does not fit in the "
                         f"{image_size[0]}x{image_size[1]} camera image")


class ObsEncoder(nn.Module):
    """An observation history -> one conditioning vector (B, cond_dim).

    ``state`` float32 (B, To, D) is normalised; for rgb, ``image`` uint8 (B, To, 3 * K, H, W)
    holds ``cameras`` = K images per step (stacked on the channel axis); each is cut to ``crop``
    (top, left, height, width) [px] when one is given, and goes through one image encoder
    (``image_encoder``: a name of ``IMAGE_ENCODERS``) shared by the steps and the cameras
    (randomly shifted by ``shift_pad`` pixels while training, each image by its own offset).
    ``cond_dim = To * (D + K * feature_dim)`` (``feature_dim`` 0 for state).

    Raises:
        ValueError: a ``crop`` that does not lie inside ``image_size``.
    """

    def __init__(self, normalizer: Normalizer, obs_horizon: int, state_dim: int,
                 image_size: Optional[tuple[int, int]] = None, channels: tuple[int, ...] = (32, 64, 64, 64),
                 feature_dim: int = 64, shift_pad: int = 4, image_encoder: str = "plain",
                 crop: tuple[int, ...] = (), cameras: int = 1):
        super().__init__()
        self.normalizer = normalizer
        if crop and image_size is not None:
            check_crop(crop, image_size)
            image_size = tuple(crop[2:])
        self.crop = tuple(crop)
        self.image = (IMAGE_ENCODERS[image_encoder](image_size, channels, feature_dim)
                      if image_size is not None else None)
        self.shift_pad = shift_pad
        self.cameras = int(cameras)
        self.cond_dim = obs_horizon * (state_dim + (self.cameras * feature_dim if self.image is not None else 0))

    def image_features(self, images: torch.Tensor, shift: bool) -> torch.Tensor:
        """uint8 images (N, 3 * K, H, W) of the K cameras -> float32 (N, K * feature_dim): each
        camera's image cropped, randomly shifted when ``shift``, encoded; features in camera order."""
        count = len(images)
        if images.shape[1] != 3 * self.cameras:
            raise ValueError(f"this policy reads {self.cameras} camera(s), {3 * self.cameras} channels; the images "
                             f"have {images.shape[1]}")
        images = images.reshape(count * self.cameras, 3, *images.shape[2:])
        if self.crop:
            top, left, height, width = self.crop
            images = images[..., top:top + height, left:left + width]
        flat = images.to(torch.float32) / 255.0 - 0.5
        return self.image(random_shift(flat, self.shift_pad) if shift else flat).reshape(count, -1)

    def condition(self, state: torch.Tensor, features: Optional[torch.Tensor] = None) -> torch.Tensor:
        """The conditioning vector (B, cond_dim) from ``state`` (B, To, D) and image ``features``
        (B, To, feature_dim) already computed (None for a state policy)."""
        parts = [self.normalizer.state(state)] + ([features] if features is not None else [])
        return torch.cat(parts, dim=-1).flatten(1)

    def forward(self, state: torch.Tensor, image: Optional[torch.Tensor] = None) -> torch.Tensor:
        """The condition (B, C) of ``state`` (B, To, S) and, for an image policy, ``image`` (B, To, 3K, H, W) uint8.

        Raises:
            ValueError: an image policy called without ``image``."""
        features = None
        if self.image is not None:
            if image is None:
                raise ValueError("this policy reads images; none were given")
            batch, steps = image.shape[:2]
            features = self.image_features(image.reshape(batch * steps, *image.shape[2:]), self.training)
            features = features.reshape(batch, steps, -1)
        return self.condition(state, features)
