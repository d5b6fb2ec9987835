"""How a backend renders: the render device, shadows, shader packs, one scene or one per env.

Shader packs are SAPIEN's shader directories (``sapien/vulkan_shader/<name>``), the names
ManiSkill's ``shader_dir`` / ``CameraConfig.shader_pack`` take:

- ``"auto"`` (every camera's default): the fastest pack that renders the camera's textures,
  chosen by measurement (``docs/cameras.md``): ``"minimal"`` when it can render them all, else
  ``"default"`` (``resolve_shader_pack``).
- ``"default"``: rasterised, deferred (a geometry pass, a lighting pass, a composite pass);
  textures rgb, depth, segmentation, normal, albedo, position.
- ``"minimal"``: rasterised, forward (one pass), fastest; rgb, depth, segmentation, position (no
  normal/albedo).
- ``"rt"`` / ``"rt-fast"``: ray traced (32 / 2 samples per pixel, ManiSkill's values); the
  ``"default"`` textures. Refused on a software (CPU) Vulkan device: SAPIEN 3.0.3 renders with
  them on lavapipe but the process then crashes at exit (observed, exit code 139).
- any other string: a shader directory of your own (it must hold SAPIEN's shader files).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import sapien

from simulo_envs.sim.render import keepalive_render_system
from simulo_envs.sim.visual_meshes import check_visual_detail, visual_mesh_file

SHADER_PACKS = ("auto", "default", "minimal", "rt", "rt-fast")
_RAY_TRACED = {"rt": 32, "rt-fast": 2}  # samples per pixel (ManiSkill's shader configs)
_TEXTURES = {
    "default": frozenset({"rgb", "depth", "segmentation", "normal", "albedo", "position"}),
    "minimal": frozenset({"rgb", "depth", "segmentation", "position"}),
}
RENDER_BACKENDS = ("gpu", "sapien_cuda", "sapien_cuda:N", "cpu", "sapien_cpu", "none", None)
"""ManiSkill's ``render_backend`` values."""


@dataclass(frozen=True)
class RenderConfig:
    """Rendering settings of one backend.

    Attributes:
        shadows: directional lights cast shadows (``enable_shadow``).
        single_scene: every env in one render scene (``parallel_in_single_scene``): a camera
            sees all envs; segmentation ids then differ between envs.
        visual_detail: ``"fast"`` (simplified copies of the assets' visual meshes) or
            ``"full"`` (the assets' own), for every camera; ``simulo_envs/sim/visual_meshes.py``.

    Raises:
        ValueError: an unknown ``visual_detail`` (the message names the allowed values).
    """

    shadows: bool = False
    single_scene: bool = False
    visual_detail: str = "fast"

    def __post_init__(self) -> None:
        check_visual_detail(self.visual_detail)

    def visual_mesh(self, path: str) -> str:
        """The file cameras render for an asset's visual mesh ``path`` (``visual_mesh_file``)."""
        return visual_mesh_file(path, self.visual_detail)

    def make_render_system(self) -> sapien.render.RenderSystem:
        """A render system on the process's render device (``parse_render_backend``)."""
        return sapien.render.RenderSystem(keepalive_render_system().device)


def parse_render_backend(render_backend) -> Optional[str]:
    """ManiSkill's ``render_backend`` -> ``"off"`` (no rendering) or None (render).

    SAPIEN 3.0.3 renders with one Vulkan device per process (a second device is refused: "only
    supports single-GPU rendering"), the one its first render system picked. So:
    ``"gpu"`` / ``"sapien_cuda"``: that device (a GPU where there is one; on a machine without,
    the software Vulkan device, which ManiSkill would refuse); ``"sapien_cuda:N"``: accepted when
    that device is CUDA device N; ``"cpu"`` / ``"sapien_cpu"``: accepted when it is a software
    (CPU) device; ``"none"`` / None: no rendering.

    Raises:
        ValueError: another value, or a device this process does not render with (the message
            names the one it does).
    """
    if check_render_backend_name(render_backend) == "off":
        return "off"
    if render_backend in ("gpu", "sapien_cuda"):
        return None
    if render_backend in ("cpu", "sapien_cpu"):
        if not software_renderer():
            raise ValueError(f"render_backend={render_backend!r}: this process renders on {_device_name()}, and "
                             "SAPIEN renders with one device per process; use 'gpu' (or render in another process)")
        return None
    index = int(render_backend.partition(":")[2])  # "sapien_cuda:N", checked above
    device = _process_device()
    if not (device.is_cuda() and device.cuda_id == index):
        raise ValueError(f"render_backend={render_backend!r}: this process renders on {_device_name()}, not CUDA "
                         f"device {index} (SAPIEN renders with one device per process); use 'gpu'")
    return None


def check_render_backend_name(render_backend) -> Optional[str]:
    """Validate a ``render_backend`` value without touching any device: ``"off"`` for
    ``"none"``/None, else None.

    Raises:
        ValueError: not one of ``RENDER_BACKENDS`` (``"sapien_cuda:N"`` with a number N).
    """
    if render_backend is None or render_backend == "none":
        return "off"
    if render_backend in ("gpu", "sapien_cuda", "cpu", "sapien_cpu"):
        return None
    if isinstance(render_backend, str) and render_backend.startswith("sapien_cuda:"):
        if not render_backend.partition(":")[2].isdigit():
            raise ValueError(f"render_backend {render_backend!r}: the device must be a number, as in 'sapien_cuda:0'")
        return None
    raise ValueError(f"unknown render_backend {render_backend!r}; choose from {list(RENDER_BACKENDS)}")


def _process_device():
    return keepalive_render_system().device


def _device_name() -> str:
    return str(getattr(_process_device(), "name", "an unnamed device"))


def software_renderer() -> bool:
    """True when the Vulkan device this process renders with is a software one (lavapipe)."""
    if _process_device().is_cpu():
        return True
    name = _device_name().lower()
    return "llvmpipe" in name or "lavapipe" in name or "swiftshader" in name


def shader_textures(pack: str) -> frozenset:
    """Textures a shader pack renders (``"auto"`` picks a pack that renders them; a custom
    directory is assumed to render the default ones)."""
    return _TEXTURES["minimal"] if pack == "minimal" else _TEXTURES["default"]


def resolve_shader_pack(pack: str, textures) -> str:
    """The pack a camera renders with: ``pack`` itself, or for ``"auto"`` the fastest one that
    renders ``textures``: ``"minimal"`` (one forward pass) when it can render them all, else
    ``"default"``. Measured on lavapipe, FrankaLift-v1 with ``visual_detail="fast"``: ``minimal``
    costs about 30 % less CPU per picture at 128x128 and less than half at 512x512
    (``docs/cameras.md``)."""
    if pack != "auto":
        return pack
    return "minimal" if set(textures) <= _TEXTURES["minimal"] else "default"


def check_shader_pack(pack: str, textures) -> None:
    """Validate a shader pack for the textures it must render.

    Raises:
        ValueError: an unknown pack that is not a directory, a ray-traced pack on a software
            Vulkan device, or a texture the pack cannot render.
    """
    if not isinstance(pack, str):
        raise ValueError(f"shader pack must be a string, got {pack!r}")
    if pack not in SHADER_PACKS and not os.path.isdir(pack):
        raise ValueError(f"unknown shader pack {pack!r}: use one of {list(SHADER_PACKS)} or a shader directory")
    if pack in _RAY_TRACED and software_renderer():
        raise ValueError(f"shader pack {pack!r} (ray tracing) is not available on this machine's software Vulkan "
                         "device: SAPIEN crashes the process at exit there. Use 'default' or 'minimal'.")
    missing = set(textures) - shader_textures(pack)
    if missing:
        raise ValueError(f"shader pack {pack!r} cannot render {sorted(missing)}; use 'default'")


def shader_directory(pack: str) -> str:
    """SAPIEN's directory of a pack name (a directory is returned as it is; ``"auto"``: resolve
    it first with ``resolve_shader_pack``); for a ray-traced pack, also sets SAPIEN's samples
    per pixel (a process-wide setting).

    Raises:
        ValueError: ``"auto"`` (it names no directory until resolved)."""
    if pack == "auto":
        raise ValueError("shader pack 'auto' names no directory: resolve it with resolve_shader_pack first")
    if pack in _RAY_TRACED:
        sapien.render.set_ray_tracing_samples_per_pixel(_RAY_TRACED[pack])
        pack = "rt"
    if pack in SHADER_PACKS:
        return os.path.join(os.path.dirname(sapien.__file__), "vulkan_shader", pack)
    return pack
