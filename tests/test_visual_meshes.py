"""Simplified visual meshes and their on-disk cache (simulo_envs/sim/visual_meshes.py, mesh_cache.py)."""

import importlib.util
import io
import multiprocessing
import os
import warnings

import numpy as np
import pytest
import trimesh

from simulo_envs.sim import mesh_cache, visual_meshes
from simulo_envs.sim.visual_meshes import MeshDetail, check_visual_detail, visual_mesh_file

PANDA_VISUAL = os.path.join(importlib.util.find_spec("mani_skill").submodule_search_locations[0],
                            "assets/robots/panda/franka_description/meshes/visual")
LINK3 = os.path.join(PANDA_VISUAL, "link3.glb")  # a dark cover (1,807 triangles) over a white body (12,426)
SMALL = os.path.join(PANDA_VISUAL, "finger.glb")  # 624 triangles in 2 geometries: quick to rebuild


@pytest.fixture(autouse=True)
def fresh_process_state(monkeypatch):
    """Each test resolves files as a new process would (no remembered answers or warnings)."""
    monkeypatch.setattr(visual_meshes, "_resolved", {})
    monkeypatch.setattr(visual_meshes, "_warned", set())


def _geometries(path):
    scene = trimesh.load(path, force="scene", process=False)
    return {name: g for name, g in scene.geometry.items()}


def test_copy_keeps_materials_transforms_and_cuts_triangles(tmp_path):
    out = visual_mesh_file(LINK3, "fast", folder=str(tmp_path))
    assert os.path.dirname(out) == str(tmp_path) and out.endswith(".glb")
    full, fast = _geometries(LINK3), _geometries(out)
    assert sorted(full) == sorted(fast)
    for name in full:
        assert np.array_equal(full[name].visual.material.baseColorFactor, fast[name].visual.material.baseColorFactor)
        assert len(fast[name].faces) < len(full[name].faces) * 0.5
    assert sum(len(g.faces) for g in fast.values()) < 0.1 * sum(len(g.faces) for g in full.values())
    # Same place and size: the node transforms are kept and the surface stays on the original.
    full_scene, fast_scene = (trimesh.load(p, force="scene", process=False) for p in (LINK3, out))
    assert np.allclose(full_scene.bounds, fast_scene.bounds, atol=0.004)


def test_full_and_other_file_types_are_left_alone(tmp_path):
    assert visual_mesh_file(SMALL, "full", folder=str(tmp_path)) == SMALL
    dae = str(tmp_path / "part.dae")
    assert visual_mesh_file(dae, "fast", folder=str(tmp_path)) == dae
    assert os.listdir(tmp_path) == []


def test_unknown_visual_detail_names_the_allowed_values():
    with pytest.raises(ValueError, match=r"visual_detail must be one of \['fast', 'full'\], got 'low'"):
        check_visual_detail("low")
    with pytest.raises(ValueError, match="visual_detail"):
        visual_mesh_file(SMALL, "FAST")


def test_cache_hit_reuses_the_entry_without_simplifying(tmp_path, monkeypatch):
    first = visual_mesh_file(SMALL, "fast", folder=str(tmp_path))
    mtime = os.stat(first).st_mtime_ns
    monkeypatch.setattr(visual_meshes, "_resolved", {})  # a new process

    def refuse(*args, **kwargs):
        raise AssertionError("simplified again on a cache hit")

    monkeypatch.setattr(visual_meshes, "simplify_mesh_file", refuse)
    assert visual_mesh_file(SMALL, "fast", folder=str(tmp_path)) == first
    assert os.stat(first).st_mtime_ns == mtime
    # Another setting is another entry.
    monkeypatch.undo()
    monkeypatch.setattr(visual_meshes, "_resolved", {})
    other = visual_mesh_file(SMALL, "fast", MeshDetail(fraction=0.2), folder=str(tmp_path))
    assert other != first and len(os.listdir(tmp_path)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip_byte", "stale_key", "garbage"])
def test_corrupt_or_stale_entry_is_rebuilt(tmp_path, monkeypatch, damage):
    path = visual_mesh_file(SMALL, "fast", folder=str(tmp_path))
    good = open(path, "rb").read()
    if damage == "truncate":
        bad = good[: len(good) // 2]
    elif damage == "flip_byte":
        bad = bytearray(good)
        bad[-100] ^= 0xFF  # inside the vertex buffer: the container is whole, the hash is not
        bad = bytes(bad)
    elif damage == "stale_key":
        bad = mesh_cache.seal(good, "0" * 64)
    else:
        bad = b"not a mesh"
    open(path, "wb").write(bad)
    key = visual_meshes.entry_key(open(SMALL, "rb").read(), MeshDetail())
    assert not mesh_cache.is_valid_entry(path, key)
    monkeypatch.setattr(visual_meshes, "_resolved", {})
    assert visual_mesh_file(SMALL, "fast", folder=str(tmp_path)) == path
    assert mesh_cache.is_valid_entry(path, key)
    rebuilt = {name: len(g.faces) for name, g in _geometries(path).items()}
    assert rebuilt == {name: len(g.faces) for name, g in trimesh.load(io.BytesIO(good), file_type="glb",
                                                                         force="scene").geometry.items()}


def _build_in_process(folder, barrier):
    barrier.wait()
    return visual_mesh_file(SMALL, "fast", folder=folder)


def _worker(folder, barrier, queue):
    queue.put(_build_in_process(folder, barrier))


def test_two_processes_building_one_entry_leave_it_whole(tmp_path):
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    paths = {queue.get(timeout=120) for _ in procs}
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(paths) == 1
    (path,) = paths
    key = visual_meshes.entry_key(open(SMALL, "rb").read(), MeshDetail())
    assert mesh_cache.is_valid_entry(path, key)
    assert os.listdir(tmp_path) == [os.path.basename(path)]  # no temporary file left behind


def test_unwritable_folder_falls_back_to_the_full_mesh_with_one_warning(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    folder = str(blocker / "cache")
    with pytest.warns(UserWarning, match="cannot write simplified visual meshes") as caught:
        assert visual_mesh_file(SMALL, "fast", folder=folder) == SMALL
        assert visual_mesh_file(os.path.join(PANDA_VISUAL, "hand.glb"), "fast", folder=folder).endswith("hand.glb")
    assert len([w for w in caught if "cannot write" in str(w.message)]) == 1


def test_missing_library_falls_back_with_one_warning(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_library(name, *args, **kwargs):
        if name == "fast_simplification":
            raise ImportError("No module named 'fast_simplification'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_library)
    with pytest.warns(UserWarning, match="needs the fast-simplification") as caught:
        assert visual_mesh_file(SMALL, "fast", folder=str(tmp_path)) == SMALL
        assert visual_mesh_file(os.path.join(PANDA_VISUAL, "hand.glb"), "fast",
                                folder=str(tmp_path)).endswith("visual/hand.glb")
    assert len(caught) == 1 and os.listdir(tmp_path) == []


def test_mesh_that_cannot_be_simplified_falls_back_with_one_warning(tmp_path):
    broken = tmp_path / "broken.glb"
    broken.write_bytes(b"glTF but not really")
    folder = tmp_path / "cache"
    with pytest.warns(UserWarning, match="could not be simplified") as caught:
        assert visual_mesh_file(str(broken), "fast", folder=str(folder)) == str(broken)
        assert visual_mesh_file(str(broken), "fast", folder=str(folder)) == str(broken)
    assert len(caught) == 1 and not folder.exists()


def test_stl_without_material_is_simplified(tmp_path):
    sphere = trimesh.creation.icosphere(subdivisions=4)  # 5,120 triangles
    soup = trimesh.Trimesh(sphere.vertices[sphere.faces].reshape(-1, 3),
                           np.arange(3 * len(sphere.faces)).reshape(-1, 3), process=False)
    path = tmp_path / "ball.stl"
    soup.export(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = visual_mesh_file(str(path), "fast", folder=str(tmp_path / "cache"))
    mesh = trimesh.load(out, force="mesh", process=False)
    assert 1300 <= len(mesh.faces) <= 1700  # cad_fraction: 30 % of 5,120
    assert np.allclose(np.linalg.norm(mesh.vertices, axis=1), 1.0, atol=0.05)


def test_seal_refuses_what_is_not_a_glb():
    with pytest.raises(ValueError, match="binary glTF"):
        mesh_cache.seal(b"\0" * 64, "key")
    glb = trimesh.creation.box().export(file_type="glb")
    sealed = mesh_cache.seal(glb, "k")
    assert trimesh.load(io.BytesIO(sealed), file_type="glb", force="mesh").faces.shape == (12, 3)


def test_cad_exports_keep_their_larger_share_of_triangles():
    """STL (a CAD export, the SO-100's base motor) keeps ``cad_fraction`` (30 %) of its triangles,
    where glTF meshes keep ``fraction`` (8 %): at 8 % the SO-100's small parts shred (robot IoU 0.92)."""
    import io
    import trimesh
    from simulo_envs.agents.base_agent import mani_skill_asset
    path = mani_skill_asset("so100/meshes/Base_Motor.stl")
    source = open(path, "rb").read()
    faces = len(trimesh.load(io.BytesIO(source), file_type="stl", process=False).faces)
    copy = trimesh.load(io.BytesIO(visual_meshes.simplify_mesh_file(source, "stl")), file_type="glb", force="scene")
    kept = sum(len(g.faces) for g in copy.geometry.values()) / faces
    assert 0.25 <= kept <= 0.31, kept
    assert MeshDetail().cad_fraction == 0.3 and MeshDetail().fraction == 0.08
    with pytest.raises(ValueError, match="cad_fraction"):
        MeshDetail(cad_fraction=0.0)
