"""Rendering helpers for the backends: lights, ground visuals, per-env cameras.

SAPIEN renders through Vulkan (on a machine without a GPU: Mesa's lavapipe >= 24.3, see
``scripts/setup_vulkan.sh``). Each env has its own ``sapien.Scene`` with its own render system
sharing the one physics system, so an env's camera renders only that env's entities.
"""

from __future__ import annotations

import functools

import numpy as np
import sapien

VULKAN_HELP = (
    "SAPIEN rendering needs a Vulkan driver and none was found. On a machine without a GPU install "
    "Mesa's software driver (lavapipe, Mesa >= 24.3): on Debian 12 `apt-get install -t bookworm-backports "
    "mesa-vulkan-drivers libvulkan1`, on Debian 13 / Ubuntu 24.10+ `apt-get install mesa-vulkan-drivers "
    "libvulkan1` (or run `bash scripts/setup_vulkan.sh` as root). State-only envs (render_mode=None, "
    "obs_mode='state') need no Vulkan."
)


_KEEPALIVE: list = []


@functools.lru_cache(maxsize=1)
def vulkan_available() -> bool:
    """True if SAPIEN can create a render system here (checked once per process).

    The probe's render system is kept for the life of the process: SAPIEN drops its Vulkan
    context, and with it the compiled shaders, when the last render system goes away, and on
    lavapipe recompiling costs about 9 s per env made after another was closed (measured).
    """
    try:
        _KEEPALIVE.append(sapien.render.RenderSystem())
    except Exception:  # SAPIEN raises RuntimeError("failed to find a rendering device") and others
        return False
    return True


def keepalive_render_system():
    """The process's probe render system (created by ``vulkan_available``)."""
    require_vulkan()
    return _KEEPALIVE[0]


def sapien_device(device) -> sapien.Device:
    """The ``sapien.Device`` matching a torch ``device``: SAPIEN's ``cuda:N`` for ``cuda:N``
    (``cuda`` alone: device 0), else its ``cpu`` device."""
    if device.type == "cuda":
        return sapien.Device("cuda:%d" % (device.index or 0))
    return sapien.Device("cpu")


def require_vulkan() -> None:
    """Raise RuntimeError with install instructions if no Vulkan device can render."""
    if not vulkan_available():
        raise RuntimeError(VULKAN_HELP)


def add_lights(scenes, ambient, directional, shadows: bool = False, centres=None, half_size: float = 5.0) -> list:
    """Ambient RGB and directional lights ``((direction, RGB), ...)`` in every scene; returns the
    directional light components, per scene a list in ``directional``'s order.

    With ``shadows`` the directional lights cast shadows over a square of ``2 * half_size`` m
    around each scene's centre (``centres``: (S, 3) world positions, default the origin)."""
    lights = []
    for k, scene in enumerate(scenes):
        scene.set_ambient_light(list(ambient))
        centre = [0.0, 0.0, 0.0] if centres is None else [float(c) for c in centres[k]]
        lights.append([scene.add_directional_light(list(direction), list(color), shadow=bool(shadows), position=centre,
                                                   shadow_scale=half_size, shadow_near=-half_size, shadow_far=half_size)
                       for direction, color in directional])
    return lights


def ground_visual_builders(scenes, half_size: float = 5.0) -> list:
    """Per scene, an actor builder holding a grey square ground visual of ``2 * half_size`` m
    (not built yet: the caller adds physics to env 0's and places each under its env origin)."""
    material = sapien.render.RenderMaterial(base_color=[0.55, 0.55, 0.5, 1.0])
    builders = []
    for scene in scenes:
        builder = scene.create_actor_builder()
        builder.add_plane_visual(sapien.Pose(q=[0.7071068, 0, -0.7071068, 0]), [1.0, half_size, half_size], material)
        builders.append(builder)
    return builders


class CameraRig:
    """One camera per env (per given scene), fixed in the env frame.

    ``shader_dir``: SAPIEN shader directory ("" = SAPIEN's default pack)."""

    def __init__(self, scenes, origins: np.ndarray, name: str, width: int, height: int, fovy: float,
                 near: float, far: float, local_pose: np.ndarray, shader_dir: str = ""):
        self.name, self.width, self.height = name, int(width), int(height)
        self.cameras = []
        local_pose = np.asarray(local_pose, dtype=np.float64)
        for scene, origin in zip(scenes, origins):
            entity = sapien.Entity()
            entity.name = f"camera_{name}"
            camera = sapien.render.RenderCameraComponent(self.width, self.height, shader_dir)
            camera.set_fovy(float(fovy), compute_x=True)
            camera.near, camera.far = float(near), float(far)
            entity.add_component(camera)
            entity.set_pose(sapien.Pose(p=local_pose[:3] + origin, q=local_pose[3:7]))
            scene.add_entity(entity)
            self.cameras.append(camera)

    def capture(self, textures: set) -> dict:
        """Take a picture in every env (call the backend's ``update_render`` first).

        Returns numpy arrays with the env dimension first: ``"rgb"`` uint8 (N, H, W, 3),
        ``"depth"`` float32 (N, H, W, 1) metres along the optical axis, ``"segmentation"`` int32
        (N, H, W, 1) entity ids (0 = background), ``"normal"`` float32 (N, H, W, 3) unit surface
        normals in the camera's OpenGL frame (x right, y up, z backwards; 0 on background),
        ``"albedo"`` uint8 (N, H, W, 3) surface colour without lighting, ``"position"`` float32
        (N, H, W, 3) points in the camera's OpenGL frame [m] (the scene lies at z < 0). Keys come
        in that order.
        """
        out = {}
        n, shape = len(self.cameras), (len(self.cameras), self.height, self.width)
        layouts = {"rgb": (3, np.uint8), "depth": (1, np.float32), "segmentation": (1, np.int32),
                   "normal": (3, np.float32), "albedo": (3, np.uint8), "position": (3, np.float32)}
        for texture, (channels, dtype) in layouts.items():  # always in this order
            if texture in textures:
                out[texture] = np.empty((*shape, channels), dtype=dtype)
        for i, camera in enumerate(self.cameras):
            camera.take_picture()
            names = set(camera.get_picture_names())
            if "rgb" in out:
                color = camera.get_picture("Color")[..., :3]
                out["rgb"][i] = np.clip(color * 255.0 + 0.5, 0, 255).astype(np.uint8)
            if {"depth", "position", "segmentation"} & set(out):
                xyz, seg = _position_and_segmentation(camera, names, "segmentation" in out)
                if "depth" in out:
                    out["depth"][i, ..., 0] = -xyz[..., 2]
                if "position" in out:
                    out["position"][i] = xyz
                if "segmentation" in out:
                    out["segmentation"][i, ..., 0] = seg
            if "normal" in out:
                out["normal"][i] = camera.get_picture("Normal")[..., :3]
            if "albedo" in out:
                albedo = camera.get_picture("Albedo")[..., :3]
                out["albedo"][i] = np.clip(albedo * 255.0 + 0.5, 0, 255).astype(np.uint8)
        return out

    def params(self) -> dict:
        """Per-env camera parameters: ``intrinsic_cv`` (N, 3, 3), ``extrinsic_cv`` (N, 3, 4)
        world-to-camera in OpenCV axes, ``cam2world_gl`` (N, 4, 4); float32."""
        return {
            "intrinsic_cv": np.stack([c.get_intrinsic_matrix() for c in self.cameras]).astype(np.float32),
            "extrinsic_cv": np.stack([c.get_extrinsic_matrix() for c in self.cameras]).astype(np.float32),
            "cam2world_gl": np.stack([c.get_model_matrix() for c in self.cameras]).astype(np.float32),
        }


def _position_and_segmentation(camera, names: set, segmentation: bool):
    """Camera-frame (OpenGL) points (H, W, 3) [m] and entity ids (H, W) of one picture, from the
    default pack's float ``Position`` + ``Segmentation`` or the minimal pack's int32 millimetre
    ``PositionSegmentation``."""
    if "Position" in names:
        xyz = camera.get_picture("Position")[..., :3]
        seg = camera.get_picture("Segmentation")[..., 1].astype(np.int32) if segmentation else None
        return xyz, seg
    packed = camera.get_picture("PositionSegmentation")
    return packed[..., :3].astype(np.float32) / 1000.0, packed[..., 3].astype(np.int32)
