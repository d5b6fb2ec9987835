"""Level of detail for the visual meshes that cameras render (``visual_detail``).

On a software Vulkan device the vertex work of detailed meshes dominates a camera's cost: the
Panda's visual meshes hold about 137,000 triangles, and one 128x128 picture of them costs about
ten times one of the same scene with the meshes simplified (``docs/cameras.md``). With
``visual_detail="fast"`` (the default) every visual mesh file loaded from an asset is replaced
by a simplified copy; ``"full"`` keeps the original files. Collision geometry is never touched.

How a copy is made (``simplify_mesh_file``), per geometry of the file, keeping the file's node
transforms and each geometry's material (base colour, metallic, roughness); a geometry whose look
is a texture or per-vertex colours is kept whole:

1. vertices at the same position are merged (ignoring normals and texture coordinates): the
   files store one vertex per triangle corner, and decimating that unmerged soup tears the
   surface apart;
2. quadric-error edge collapse down to ``fraction`` of the triangles (``cad_fraction`` for the
   CAD exports, STL and PLY), never below ``min_triangles``, open borders kept in place (fast-simplification, a binding of Sven
   Forstmann's Fast-Quadric-Mesh-Simplification; Garland & Heckbert, SIGGRAPH 1997);
3. normals smoothed across edges sharper than ``crease_angle`` kept sharp (trimesh);
4. every geometry but the largest of its file pushed ``shell_offset`` outwards along its normals:
   such parts are shells lying a few millimetres over the main body (the Panda's dark covers),
   and once both are simplified the body would poke through them.

Copies are built once per source file and setting and kept on disk (``simulo_envs/sim/
mesh_cache.py`` for the file layout); ``cache_dir`` says where. Where no copy can be made (the
library missing, an unwritable cache folder, a mesh that fails to simplify) the original file
is used and one warning says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from dataclasses import asdict, dataclass
from typing import Optional

from simulo_envs.sim import mesh_cache

VISUAL_DETAILS = ("fast", "full")
"""``visual_detail`` values: ``"fast"`` simplified visual meshes, ``"full"`` the asset's own."""
CACHE_ENV_VAR = "SIMULO_ENVS_CACHE_DIR"
"""Environment variable naming the cache folder (overrides the default, ``cache_dir``)."""
MESH_TYPES = ("glb", "stl", "ply")
"""Visual mesh file types that get simplified copies (self-contained files; others are used as
they are)."""
_FORMAT = 1  # bump when the way copies are made changes: every old entry becomes stale


@dataclass(frozen=True)
class MeshDetail:
    """How far visual meshes are simplified (part of every cache entry's key).

    Attributes:
        fraction: share of each geometry's triangles kept, in (0, 1] (glTF files).
        cad_fraction: the same for STL and PLY files, CAD exports: tessellated at the CAD tool's
            chord tolerance, they spend few triangles on flat faces and most on fillets, holes
            and small parts, so cutting them to ``fraction`` shreds those (the SO-100 at 8 %:
            robot IoU 0.92 at 128x128 and at 640x480; at 30 %: 0.98, ``docs/cameras.md``).
        min_triangles: no geometry is cut below this many triangles (smaller ones stay whole).
        crease_angle: edges between faces turning more than this keep sharp normals [rad].
        shell_offset: outward push of every geometry but the largest of a file [m].

    The defaults were chosen by measurement (``docs/cameras.md``): robot segmentation IoU
    against the full meshes about 0.98 at 128x128 on every task (pooled over expert episodes),
    about 13,600 triangles for the Panda instead of 135,548.
    """

    fraction: float = 0.08
    cad_fraction: float = 0.3
    min_triangles: int = 200
    crease_angle: float = 0.5236
    shell_offset: float = 0.0015

    def __post_init__(self) -> None:
        for name in ("fraction", "cad_fraction"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"MeshDetail.{name} must be in (0, 1], got {getattr(self, name)!r}")
        if self.min_triangles < 1:
            raise ValueError(f"MeshDetail.min_triangles must be >= 1, got {self.min_triangles!r}")
        if not 0.0 <= self.crease_angle <= 3.1416 or self.shell_offset < 0:
            raise ValueError(f"MeshDetail: crease_angle in [0, pi] rad and shell_offset >= 0 m, got {self}")


DEFAULT_DETAIL = MeshDetail()


def check_visual_detail(value) -> str:
    """``value`` if it is one of ``VISUAL_DETAILS``.

    Raises:
        ValueError: any other value; the message names the allowed ones.
    """
    if not isinstance(value, str) or value not in VISUAL_DETAILS:
        raise ValueError(f"visual_detail must be one of {list(VISUAL_DETAILS)}, got {value!r}")
    return value


def cache_dir() -> str:
    """The folder of simplified meshes: ``$SIMULO_ENVS_CACHE_DIR`` when set, else
    ``$XDG_CACHE_HOME/simulo_envs/visual_meshes`` (``~/.cache/...`` without XDG_CACHE_HOME)."""
    override = os.environ.get(CACHE_ENV_VAR)
    if override:
        return os.path.abspath(os.path.expanduser(override))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "simulo_envs", "visual_meshes")


_lock = threading.Lock()
_resolved: dict = {}
_warned: set = set()


def visual_mesh_file(path: str, visual_detail: str = "fast", detail: MeshDetail = DEFAULT_DETAIL,
                     folder: Optional[str] = None) -> str:
    """The mesh file a camera should render for the asset's visual mesh ``path``.

    ``"full"``, or a file type not in ``MESH_TYPES``: ``path`` itself. ``"fast"``: a simplified
    copy in ``folder`` (default ``cache_dir()``), built on first use (a few seconds for a
    robot) and reused while the source file's content and ``detail`` stay the same; an entry
    that fails its check is rebuilt. Answers are remembered for the life of the process.
    Where no copy can be made, ``path`` is returned and one ``UserWarning`` per cause says why.

    Raises:
        ValueError: an unknown ``visual_detail``.
    """
    check_visual_detail(visual_detail)
    if visual_detail == "full" or os.path.splitext(path)[1].lower().lstrip(".") not in MESH_TYPES:
        return path
    folder = cache_dir() if folder is None else folder
    try:
        stat = os.stat(path)
    except OSError:
        return path  # a missing asset is the loader's error to report
    memo = (os.path.abspath(path), stat.st_mtime_ns, stat.st_size, detail, folder)
    with _lock:
        if memo not in _resolved:
            _resolved[memo] = _resolve(path, detail, folder)
        return _resolved[memo]


def entry_key(source: bytes, detail: MeshDetail) -> str:
    """Hex key of a cache entry: SHA-256 over the source file's bytes, ``detail`` and the
    versions of this module's format and of the libraries that make the copy."""
    import fast_simplification
    import trimesh

    stamp = json.dumps({"format": _FORMAT, "detail": asdict(detail), "trimesh": trimesh.__version__,
                        "fast_simplification": getattr(fast_simplification, "__version__", "?")}, sort_keys=True)
    return hashlib.sha256(hashlib.sha256(source).digest() + stamp.encode()).hexdigest()


def _resolve(path: str, detail: MeshDetail, folder: str) -> str:
    try:
        import fast_simplification  # noqa: F401
        import trimesh  # noqa: F401
    except ImportError as exc:
        _warn_once("library", f"visual_detail='fast' needs the fast-simplification and trimesh packages ({exc}); "
                              "cameras render the full visual meshes")
        return path
    with open(path, "rb") as f:
        source = f.read()
    key = entry_key(source, detail)
    name = os.path.splitext(os.path.basename(path))[0]
    target = os.path.join(folder, f"{name}-{key[:24]}.glb")
    if mesh_cache.is_valid_entry(target, key):
        return target
    try:
        glb = simplify_mesh_file(source, os.path.splitext(path)[1].lower().lstrip("."), detail)
    except Exception as exc:  # a mesh the library cannot take: render the original one
        _warn_once(("mesh", path), f"visual mesh {path} could not be simplified ({type(exc).__name__}: {exc}); "
                                   "cameras render it in full")
        return path
    try:
        mesh_cache.write_entry(target, glb, key)
    except OSError as exc:
        _warn_once(("folder", folder), f"cannot write simplified visual meshes to {folder} ({exc}); cameras render "
                                       f"the full meshes. Set {CACHE_ENV_VAR} to a writable folder.")
        return path
    return target


def _warn_once(cause, message: str) -> None:
    if cause not in _warned:
        _warned.add(cause)
        warnings.warn(message, UserWarning, stacklevel=4)


def _keeps_whole(mesh) -> bool:
    """True for a geometry whose look lives in per-vertex data that simplification would lose:
    a texture image mapped by UV coordinates, or per-vertex / per-face colours."""
    visual = mesh.visual
    if getattr(visual, "kind", None) in ("vertex", "face"):
        return True
    material = getattr(visual, "material", None)
    return getattr(visual, "uv", None) is not None and getattr(material, "baseColorTexture", None) is not None


def simplify_mesh_file(source: bytes, file_type: str = "glb", detail: MeshDetail = DEFAULT_DETAIL) -> bytes:
    """A simplified copy, as binary glTF, of the mesh file ``source`` (``file_type`` one of
    ``MESH_TYPES``), by the steps in the module docstring. Geometries whose look is a texture or
    per-vertex colours are kept whole.

    Raises:
        ValueError: the file holds no triangle mesh. Errors of trimesh / fast-simplification
            on a file they cannot read or simplify pass through.
    """
    import io

    import fast_simplification
    import numpy as np
    import trimesh

    scene = trimesh.load(io.BytesIO(source), file_type=file_type, force="scene", process=False)
    meshes = {name: g for name, g in scene.geometry.items() if isinstance(g, trimesh.Trimesh) and len(g.faces)}
    if not meshes:
        raise ValueError("no triangle mesh in the file")
    largest = max(meshes, key=lambda name: len(meshes[name].faces))
    fraction = detail.cad_fraction if file_type in ("stl", "ply") else detail.fraction
    for name, mesh in meshes.items():
        if _keeps_whole(mesh):
            continue
        merged = trimesh.Trimesh(mesh.vertices, mesh.faces, process=False)
        merged.merge_vertices(merge_tex=True, merge_norm=True)
        target = max(int(len(merged.faces) * fraction), min(len(merged.faces), detail.min_triangles))
        vertices, faces = merged.vertices, merged.faces
        if target < len(faces):
            vertices, faces = fast_simplification.simplify(vertices, faces, target_count=target, preserve_border=True)
        simple = trimesh.Trimesh(vertices, faces, process=False)
        simple.remove_unreferenced_vertices()
        if not len(simple.faces):
            raise ValueError(f"geometry {name!r} simplified to nothing")
        if name != largest and detail.shell_offset > 0:
            simple = trimesh.Trimesh(simple.vertices + detail.shell_offset * simple.vertex_normals, simple.faces,
                                     process=False)
        simple = trimesh.graph.smooth_shade(simple, angle=detail.crease_angle)
        if not np.isfinite(simple.vertices).all():
            raise ValueError(f"geometry {name!r}: non-finite vertices after simplification")
        material = getattr(mesh.visual, "material", None)
        if material is not None:
            simple.visual = trimesh.visual.TextureVisuals(material=material)
        scene.geometry[name] = simple
    return scene.export(file_type="glb")
