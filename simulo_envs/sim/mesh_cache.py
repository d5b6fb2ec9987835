"""On-disk cache entries of simplified visual meshes: one self-checking binary glTF file each.

Layout of an entry (binary glTF 2.0, the Khronos "GLB" container, glTF 2.0 specification
section 4.4; all integers little-endian uint32)::

    offset  field           value
    0       magic           0x46546C67 ("glTF")
    4       version         2
    8       length          total file size [bytes]
    12      chunk 0 length  L0, a multiple of 4
    16      chunk 0 type    0x4E4F534A ("JSON")
    20      chunk 0 data    the glTF JSON (UTF-8, space-padded); its ``asset.extras`` holds
                            ``ENTRY_KEY``: {"key": <the entry key>, "bin_sha256": <hex digest
                            of chunk 1's data>}
    20+L0   chunk 1 length  L1, a multiple of 4
    24+L0   chunk 1 type    0x004E4942 ("BIN\\0")
    28+L0   chunk 1 data    the buffer (vertices, normals, indices)

``extras`` is the specification's slot for application data, which renderers ignore (SAPIEN
loads the file as any glb). An entry is trusted only when the container is whole (magic,
version, length equal to the file size, both chunks present), its key equals the one asked for
(the source mesh's content hash and the simplification setting) and the buffer's hash matches:
anything else, a truncated or corrupt file, a stale key, is a miss and gets rebuilt.

Writes are atomic: a temporary file in the same folder, fsync, ``os.replace`` onto the entry's
name, fsync of the folder. Two processes writing one entry at once each replace the whole file;
a reader sees one complete entry or none, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from typing import Optional

ENTRY_KEY = "simulo_envs_visual_mesh"
_MAGIC, _VERSION = 0x46546C67, 2
_JSON, _BIN = 0x4E4F534A, 0x004E4942


def _chunks(data: bytes) -> Optional[tuple[dict, bytes]]:
    """(JSON tree, BIN data) of a whole GLB file, or None when the container is not whole."""
    if len(data) < 28:
        return None
    magic, version, length = struct.unpack_from("<III", data, 0)
    if magic != _MAGIC or version != _VERSION or length != len(data):
        return None
    json_len, json_type = struct.unpack_from("<II", data, 12)
    bin_at = 20 + json_len
    if json_type != _JSON or bin_at + 8 > len(data):
        return None
    bin_len, bin_type = struct.unpack_from("<II", data, bin_at)
    if bin_type != _BIN or bin_at + 8 + bin_len != len(data):
        return None
    try:
        tree = json.loads(data[20:bin_at].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return (tree, data[bin_at + 8:]) if isinstance(tree, dict) else None


def _pack(tree: dict, binary: bytes) -> bytes:
    text = json.dumps(tree, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    length = 12 + 8 + len(text) + 8 + len(binary)
    return (struct.pack("<III", _MAGIC, _VERSION, length) + struct.pack("<II", len(text), _JSON) + text
            + struct.pack("<II", len(binary), _BIN) + binary)


def seal(glb: bytes, key: str) -> bytes:
    """The GLB file ``glb`` with ``key`` and its buffer's hash stored in ``asset.extras``.

    Raises:
        ValueError: ``glb`` is not a whole binary glTF file with a JSON and a BIN chunk.
    """
    parts = _chunks(glb)
    if parts is None:
        raise ValueError("seal: not a binary glTF file with a JSON and a BIN chunk")
    tree, binary = parts
    binary += b"\0" * (-len(binary) % 4)
    asset = tree.setdefault("asset", {"version": "2.0"})
    asset.setdefault("extras", {})[ENTRY_KEY] = {"key": key, "bin_sha256": hashlib.sha256(binary).hexdigest()}
    return _pack(tree, binary)


def is_valid_entry(path: str, key: str) -> bool:
    """True when the file at ``path`` is a whole entry for ``key`` whose buffer matches its hash
    (see the module docstring); False for a missing, truncated, corrupt or stale file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    parts = _chunks(data)
    if parts is None:
        return False
    tree, binary = parts
    extras = tree.get("asset", {}).get("extras", {})
    stamp = extras.get(ENTRY_KEY) if isinstance(extras, dict) else None
    return (isinstance(stamp, dict) and stamp.get("key") == key
            and stamp.get("bin_sha256") == hashlib.sha256(binary).hexdigest())


def write_entry(path: str, glb: bytes, key: str) -> None:
    """Write ``glb`` sealed with ``key`` to ``path`` atomically (temporary file in the same
    folder, fsync, rename, fsync of the folder); the folder is created if missing.

    Raises:
        OSError: the folder cannot be created or written (nothing is left behind).
        ValueError: ``glb`` is not a binary glTF file.
    """
    data = seal(glb, key)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".glb", dir=folder)
    try:
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a cache is shared like any other file
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
