"""Rendering helpers for the backends: lights, ground visuals, per-env cameras.

SAPIEN renders through Vulkan (on a machine without a GPU: Mesa's lavapipe >= 24.3, see
``scripts/setup_vulkan.sh``). Each env has its own ``sapien.Scene`` with its own render system
sharing the one physics system, so an env's camera renders only that env's entities.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

import numpy as np
import sapien

from simulo_envs.sim.brdf_lut import LUT_NAME, brdf_lut_texture

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
    A process that can render also keeps the memory it frees (``keep_freed_memory``).
    """
    system = first_render_system()
    if system is None:
        return False
    _KEEPALIVE.append(system)
    keep_freed_memory()
    return True


RENDER_DEVICE_ALIASES = ("cuda", "cpu")
"""The devices the probe render system tries, in order: ManiSkill 3's choice for its default
``render_backend`` (``mani_skill/envs/utils/system/backend.py``: ``sapien.Device("cuda")``, and
``sapien.Device("cpu")`` where no CUDA device exists)."""


def first_render_system():
    """A render system on the device ManiSkill 3 (and any other SAPIEN user in this process)
    renders with, or None where nothing can render.

    SAPIEN 3.0.3 creates one Vulkan context per process, on the device of its first render
    system, and refuses a render system on another device ("current SAPIEN version only supports
    single-GPU rendering"). Its default device is named by PCI address (``pci:0000:00:00.0``),
    which it treats as another device than ``cpu`` or ``cuda`` even where the hardware is the
    same, so a default first render system would lock ManiSkill's ``cuda``/``cpu`` out of the
    process. The probe takes ``RENDER_DEVICE_ALIASES`` in order; where a context exists already
    (another library rendered first) a render system on another device is refused, and the
    default one then joins that context.
    """
    for alias in RENDER_DEVICE_ALIASES:
        try:
            device = sapien.Device(alias)
        except RuntimeError:  # 'failed to find device "cuda"'
            continue
        try:
            return sapien.render.RenderSystem(device)
        except RuntimeError:  # a context on another device exists, or this device cannot render
            continue
    try:
        return sapien.render.RenderSystem()
    except Exception:  # SAPIEN raises RuntimeError("failed to find a rendering device") and others
        return None


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""``mallopt`` parameters (glibc's ``malloc.h``)."""
TRIM_THRESHOLD = 512 << 20
"""Freed memory at the top of the heap kept, not returned to the kernel, up to this [bytes]."""
MMAP_THRESHOLD = 32 << 20
"""Blocks served from the heap rather than a fresh ``mmap`` up to this size [bytes]: glibc's
largest dynamic threshold on 64-bit (``DEFAULT_MMAP_THRESHOLD_MAX``)."""
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")


@functools.lru_cache(maxsize=1)
def keep_freed_memory() -> bool:
    """Make glibc's malloc keep freed memory in this process (once per process; True when set).

    Software Vulkan (Mesa's lavapipe) allocates and frees its working memory for every picture
    through malloc. With glibc's defaults the freed memory is returned to the kernel (the heap
    top trimmed past 128 KiB) and faulted back in, zeroed, for the next picture: 200-700 minor
    page faults per 128x128 picture of FrankaLift-v1, 10-15 % of the picture's CPU time (measured
    on lavapipe, ``docs/cameras.md``). With ``mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)`` and
    ``mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)`` the memory is reused instead (about 20 faults
    per picture); the process keeps up to ``TRIM_THRESHOLD`` of freed heap.

    Nothing is changed (False) outside Linux, where the C library has no ``mallopt`` (not glibc),
    or when the user chose malloc settings of their own (``MALLOC_TRIM_THRESHOLD_``,
    ``MALLOC_MMAP_THRESHOLD_``, or ``glibc.malloc`` in ``GLIBC_TUNABLES``).
    """
    if not sys.platform.startswith("linux") or malloc_set_by_user(os.environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)) & bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def malloc_set_by_user(environ) -> bool:
    """True when ``environ`` sets glibc malloc's trim or mmap threshold (environment variables or
    ``GLIBC_TUNABLES``), which ``keep_freed_memory`` then leaves alone."""
    tunables = environ.get("GLIBC_TUNABLES", "")
    return any(name in environ for name in _USER_SETTINGS) or "glibc.malloc.trim_threshold" in tunables \
        or "glibc.malloc.mmap_threshold" in tunables


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


GROUND_COLOR = (0.55, 0.55, 0.5)
"""The ground's default RGB in [0, 1]: a warm grey."""


def tinted_texture(texture, color) -> "sapien.render.RenderTexture2D":
    """SAPIEN's texture of grey pattern ``texture`` (``simulo_envs/authoring/textures.py``: RGBA
    uint8 ``image``, its red channel the grey level) times RGB(A) ``color`` in [0, 1], per channel,
    read as linear values (as the base colour is): the pattern's grey levels tint the colour. One
    256-entry table per channel (``np.take``), a few ms for a 512 x 512 pattern."""
    grey = texture.image[..., 0]
    levels = np.arange(256, dtype=np.float32)
    out = np.full((*grey.shape, 4), 255, dtype=np.uint8)
    for channel, value in enumerate(np.asarray(color, dtype=np.float32)[:3]):
        out[..., channel] = np.take(np.rint(levels * value).astype(np.uint8), grey)
    return sapien.render.RenderTexture2D(out, "R8G8B8A8Unorm", srgb=False)


def ground_visual_builders(scenes, half_size: float = 5.0, color=None) -> list:
    """Per scene, an actor builder holding a square ground visual of ``2 * half_size`` m in RGB
    ``color`` (None: ``GROUND_COLOR``); not built yet: the caller adds physics to env 0's and
    places each under its env origin."""
    builders = []
    for scene in scenes:  # a material per scene: each env's floor can take a colour of its own
        material = sapien.render.RenderMaterial(base_color=[*(GROUND_COLOR if color is None else color), 1.0])
        builder = scene.create_actor_builder()
        builder.add_plane_visual(sapien.Pose(q=[0.7071068, 0, -0.7071068, 0]), [1.0, half_size, half_size], material)
        builders.append(builder)
    return builders


_UINT8_COLOR_PACKS = ("default", "minimal")
"""SAPIEN's rasterising packs, whose colour target a camera reads as 8-bit RGBA."""


def sapien_pack(shader_dir: str):
    """The name of SAPIEN's own pack in ``shader_dir`` ("" is its default pack), or None for
    a shader directory of one's own."""
    sapien_dir = os.path.join(os.path.dirname(sapien.__file__), "vulkan_shader")
    directory = os.path.normpath(shader_dir) if shader_dir else os.path.join(sapien_dir, "default")
    return os.path.basename(directory) if os.path.dirname(directory) == sapien_dir else None


def uint8_color(shader_dir: str) -> bool:
    """True when a camera of ``shader_dir`` renders its colour into an 8-bit target: SAPIEN's
    rasterising packs. Ray-traced packs and shader directories of one's own keep SAPIEN's float
    target."""
    return sapien_pack(shader_dir) in _UINT8_COLOR_PACKS


def background_color(ambient) -> np.ndarray:
    """uint8 RGB of the background (no surface hit) in SAPIEN's default pack without an
    environment map: the ambient light, gamma-encoded (``pow(c, 1 / 2.2)``, clamped to [0, 1];
    ``vulkan_shader/default/deferred.frag`` and ``composite0.frag``). The minimal pack leaves
    the background black; cameras rendering with it paint this colour there instead, so both
    packs give the same picture."""
    ambient = np.clip(np.asarray(ambient, dtype=np.float64), 0.0, None)
    return np.round(255.0 * np.clip(ambient ** (1 / 2.2), 0.0, 1.0)).astype(np.uint8)


class CameraRig:
    """One camera per env (per given scene), fixed in the env frame, or riding on one entity per
    env (``mounts``: a robot link's entity; ``local_pose`` is then in that entity's frame).

    ``shader_dir``: SAPIEN shader directory ("" = SAPIEN's default pack). With SAPIEN's
    rasterising packs the colour target is 8-bit RGBA (``uint8_color``): the picture is read
    back as uint8, a quarter of the float target's bytes and no float-to-uint8 conversion; the
    values are those of the float target rounded to the nearest level (identical in our tests).
    SAPIEN fixes a camera's picture formats when the camera is made, from a process-wide
    setting, so it is set right before each camera is made.

    With SAPIEN's minimal pack the background (pixels where no surface was hit) is painted with
    the default pack's colour for the scene's ambient light at capture time
    (``background_color``), so both packs give the same picture there.

    Cameras of SAPIEN's rasterising packs get our BRDF lookup table (``sim/brdf_lut.py``), so
    SAPIEN does not compute its own before the process's first picture (about 10 s of CPU on a
    software Vulkan device); the pictures are the same."""

    def __init__(self, scenes, origins: np.ndarray, name: str, width: int, height: int, fovy: float,
                 near: float, far: float, local_pose: np.ndarray, shader_dir: str = "", mounts=None):
        self.name, self.width, self.height = name, int(width), int(height)
        self.cameras, self._scenes = [], list(scenes)[:len(origins)]
        self._paint_background = sapien_pack(shader_dir) == "minimal"
        self.mounted = mounts is not None
        """True when each camera rides on a link (its local pose is in the link's frame)."""
        self._names = None
        local_pose = np.asarray(local_pose, dtype=np.float64)
        color_format = "r8g8b8a8unorm" if uint8_color(shader_dir) else "r32g32b32a32sfloat"
        lut = brdf_lut_texture() if uint8_color(shader_dir) else None
        for scene, origin in zip(scenes, origins):
            sapien.render.set_picture_format("Color", color_format)
            camera = sapien.render.RenderCameraComponent(self.width, self.height, shader_dir)
            camera.set_fovy(float(fovy), compute_x=True)
            camera.near, camera.far = float(near), float(far)
            if mounts is not None:  # rides on the link: its pose follows the link's every frame
                camera.set_local_pose(sapien.Pose(p=local_pose[:3], q=local_pose[3:7]))
                mounts[len(self.cameras)].add_component(camera)
            else:
                entity = sapien.Entity()
                entity.name = f"camera_{name}"
                entity.add_component(camera)
                entity.set_pose(sapien.Pose(p=local_pose[:3] + origin, q=local_pose[3:7]))
                scene.add_entity(entity)
            if lut is not None:  # SAPIEN takes a camera's textures once it is in a scene
                camera.set_texture(LUT_NAME, lut)
            self.cameras.append(camera)

    def take_pictures(self) -> None:
        """Start drawing every env's picture (call the backend's ``update_render`` first); the
        render device draws them while the caller goes on, ``capture(..., taken=True)`` reads them."""
        for camera in self.cameras:
            camera.take_picture()

    def capture(self, textures: set, taken: bool = False) -> dict:
        """Take a picture in every env (call the backend's ``update_render`` first), or with
        ``taken`` read the pictures ``take_pictures`` started.

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
            if not taken:
                camera.take_picture()
            names = self._picture_names()
            if "rgb" in out:
                color = camera.get_picture("Color")
                if self._paint_background:
                    _paint(color, background_color(self._scenes[i].ambient_light))
                out["rgb"][i] = _uint8(color)
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
                out["albedo"][i] = _uint8(camera.get_picture("Albedo"))
        return out

    def _picture_names(self) -> set:
        """The names of the pictures the rig's cameras render (one shader pack for all of them;
        asked once, after a camera's first picture: SAPIEN crashes when asked before)."""
        if self._names is None:
            self._names = set(self.cameras[0].get_picture_names())
        return self._names

    def params(self) -> dict:
        """Per-env camera parameters: ``intrinsic_cv`` (N, 3, 3), ``extrinsic_cv`` (N, 3, 4)
        world-to-camera in OpenCV axes, ``cam2world_gl`` (N, 4, 4); float32."""
        return {
            "intrinsic_cv": np.stack([c.get_intrinsic_matrix() for c in self.cameras]).astype(np.float32),
            "extrinsic_cv": np.stack([c.get_extrinsic_matrix() for c in self.cameras]).astype(np.float32),
            "cam2world_gl": np.stack([c.get_model_matrix() for c in self.cameras]).astype(np.float32),
        }


def _uint8(picture: np.ndarray) -> np.ndarray:
    """RGB uint8 (H, W, 3) of an RGBA picture: an 8-bit one as it is, a float one (0-1) rounded
    to the nearest of 256 levels."""
    if picture.dtype == np.uint8:
        return picture[..., :3]
    return np.clip(picture[..., :3] * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _paint(color: np.ndarray, rgb: np.ndarray) -> None:
    """Paint uint8 ``rgb`` (3,) into the pixels of an RGBA picture (H, W, 4) whose alpha is 0 (no
    surface hit), in place; alpha stays 0. An 8-bit picture is painted one whole pixel (a 32-bit
    word) at a time, several times faster than a boolean-indexed assignment of 3 channels."""
    background = color[..., 3] == 0
    if color.dtype == np.uint8:
        pixel = np.zeros(4, dtype=np.uint8)
        pixel[:3] = rgb
        np.copyto(color.view(np.uint32)[..., 0], pixel.view(np.uint32)[0], where=background)
    else:
        color[..., :3][background] = np.asarray(rgb, dtype=np.float32) / 255.0


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
