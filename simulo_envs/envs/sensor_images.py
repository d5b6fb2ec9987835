"""Sensor textures as viewable uint8 RGB images, and images tiled side by side.

Conversions (``texture_image``): ``rgb`` and ``albedo`` as they are; ``depth`` grey, 0 (black)
at the camera to 255 at the farthest hit pixel of each image; ``segmentation`` one colour per id
(``id * (11, 61, 127) mod 256``, ManiSkill's heuristic; background black); ``normal`` mapped
from [-1, 1] to [0, 255] per axis; ``position`` as depth (its -z).
"""

from __future__ import annotations

import torch

_SEGMENTATION_COLOURS = torch.tensor([11, 61, 127], dtype=torch.int64)


def texture_image(texture: str, data: torch.Tensor) -> torch.Tensor:
    """uint8 (N, H, W, 3) picture of one texture (N, H, W, C); see the module docstring."""
    if texture in ("rgb", "albedo"):
        return data
    if texture in ("depth", "position"):
        depth = data[..., :1] if texture == "depth" else -data[..., 2:3]
        far = depth.flatten(1).amax(dim=1).clamp_min(1e-6).view(-1, 1, 1, 1)
        grey = (depth / far * 255).clamp(0, 255).to(torch.uint8)
        return grey.expand(*grey.shape[:3], 3).contiguous()
    if texture == "segmentation":
        return (data.to(torch.int64) * _SEGMENTATION_COLOURS.to(data.device) % 256).to(torch.uint8)
    if texture == "normal":
        return ((data + 1) * 127.5).clamp(0, 255).to(torch.uint8)
    raise ValueError(f"no image conversion for texture {texture!r}")


def side_by_side(images: list[torch.Tensor]) -> torch.Tensor:
    """uint8 (N, max H, sum of W, 3): ``images`` (each (N, H_k, W_k, 3)) left to right, top-aligned,
    shorter ones padded with black below.

    Raises:
        ValueError: no images.
    """
    if not images:
        raise ValueError("side_by_side: no images")
    height = max(image.shape[1] for image in images)
    padded = [torch.nn.functional.pad(image, (0, 0, 0, 0, 0, height - image.shape[1])) for image in images]
    return torch.cat(padded, dim=2)
