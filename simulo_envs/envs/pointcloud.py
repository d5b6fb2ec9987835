"""The ``"pointcloud"`` observation: every sensor camera's pixels fused into one world-frame point
cloud per env, in the maniskill-baseenv seed's layout (``mani_skill/envs/utils/observations``).

``obs["pointcloud"]`` holds, for P = the sum over cameras of H * W pixels (cameras in
``sensor_data`` order, pixels row-major):

- ``"xyzw"`` float32 (N, P, 4): ``[x, y, z, w]``; ``w = 1`` where the pixel hit something
  (segmentation id != 0) and then ``xyz`` is the point in the world frame [m] (env ``i``'s
  points lie around ``scene.env_origins[i]``, as do the cameras of ``sensor_param``);
  ``w = 0`` on background pixels, whose ``xyz`` is meaningless (transformed as a direction, the
  seed's convention);
- ``"rgb"`` uint8 (N, P, 3): the pixel's colour;
- ``"segmentation"`` int32 (N, P, 1): the pixel's id in ``segmentation_id_map`` (0 = background).

``obs["sensor_data"]`` is then empty (the images were consumed) and ``obs["sensor_param"]`` keeps
each camera's matrices.
"""

from __future__ import annotations

import torch


def fuse_pointcloud(sensor_data: dict, sensor_param: dict) -> dict:
    """``{"xyzw", "rgb", "segmentation"}`` (layout in the module docstring) from per-camera
    ``{"position" (N, H, W, 3) camera OpenGL frame [m], "rgb", "segmentation"}`` images and
    ``{"cam2world_gl" (N, 4, 4)}`` matrices."""
    xyzw, rgb, segmentation = [], [], []
    for name, images in sensor_data.items():
        position, seg = images["position"], images["segmentation"]
        n = position.shape[0]
        homogeneous = torch.cat([position, (seg != 0).to(position.dtype)], dim=-1).reshape(n, -1, 4)
        cam2world = sensor_param[name]["cam2world_gl"].to(device=position.device, dtype=position.dtype)
        xyzw.append(homogeneous @ cam2world.transpose(1, 2))
        rgb.append(images["rgb"].reshape(n, -1, 3))
        segmentation.append(seg.reshape(n, -1, 1))
    return {"xyzw": torch.cat(xyzw, dim=1), "rgb": torch.cat(rgb, dim=1), "segmentation": torch.cat(segmentation, dim=1)}
