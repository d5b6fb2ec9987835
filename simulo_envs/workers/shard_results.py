"""Joining the shards' answers into one batch, for ``ShardedEnv``: the shared-memory fields
(``worker.py`` declares their layout) read back as the observation, reward, flags and info of
all N envs, outputs that came through the pipe merged, and the per-shard results of ``call`` /
``get_attr`` combined.

Combining (``combine``): dicts key by key; arrays with each shard's env rows concatenated in env
order (as torch tensors); values equal in every shard once; otherwise a tuple, one per shard.
"""

from __future__ import annotations

import os
import pickle
import secrets
from multiprocessing import shared_memory
from typing import Any

import numpy as np
import torch

from simulo_envs.workers.shard_link import SEGMENT_PREFIX
from simulo_envs.workers.worker import Field, field_array, field_for, place

__all__ = ["ShardFieldsMixin", "combine", "leaf_items", "map_leaves", "note", "put", "rows_of"]


class ShardFieldsMixin:
    """The shared-memory fields of ``ShardedEnv`` and reading them back; expects its
    ``num_envs``, ``num_workers``, ``bounds``, ``_res``, ``_fields``, ``_info_paths`` and
    ``_exchange`` (``WorkerLinkMixin``)."""

    def _add_fields(self, fields: list[Field]) -> None:
        """A new shared-memory segment holding ``fields``, mapped here and in every worker."""
        placed, size = place(fields, self.num_envs)
        name = f"{SEGMENT_PREFIX}{os.getpid()}_{secrets.token_hex(6)}"
        segment = shared_memory.SharedMemory(name=name, create=True, size=size)
        self._res.segments.append(segment)
        for f in placed:
            array = field_array(segment.buf, f, self.num_envs)
            array[...] = 0
            self._fields[f.path] = array
            if f.path[0] == "info":
                self._info_paths.append(f.path)
        message = pickle.dumps(("attach", segment.name, placed))
        self._exchange([message] * self.num_workers, "attach")

    def _take(self, path: tuple, extras: dict) -> torch.Tensor:
        """A fresh tensor of field ``path`` (all envs), or its value from the pipe."""
        if path in extras:
            return extras[path]
        return torch.from_numpy(self._fields[path].copy())

    def _read_obs(self, extras: dict):
        paths = [p for p in self._fields if p[0] == "obs"]
        if paths == [("obs",)]:
            return self._take(("obs",), extras)
        obs: dict = {}
        for path in paths:
            put(obs, path[1:], self._take(path, extras))
        return obs

    def _present(self, replies: list) -> np.ndarray:
        """Which info fields every shard filled in this call (bitmaps of the replies)."""
        present = np.ones(len(self._info_paths), dtype=bool)
        for reply in replies:
            present &= np.unpackbits(np.frombuffer(reply[1], dtype=np.uint8), count=len(present)).astype(bool)
        return present

    def _read_info(self, present: np.ndarray, extras: dict) -> dict:
        info: dict = {}
        for path, here in zip(self._info_paths, present.tolist()):
            if here:
                put(info, path[1:], self._take(path, {}))
        for path, value in extras.items():
            if path[0] == "info":
                put(info, path[1:], value)
        return info

    def _merge_extras(self, replies: list) -> dict:
        """Outputs that went through the pipe: concatenated (and given a field for next time)
        when every shard sent env rows; otherwise combined like ``call`` results."""
        extras = [reply[2] if len(reply) > 2 else {} for reply in replies]
        paths = list(dict.fromkeys(p for e in extras for p in e))
        merged, new_fields = {}, []
        rows = [stop - start for start, stop in self.bounds]
        for path in paths:
            values = [e.get(path) for e in extras]
            fields = [field_for(path, v, n) for v, n in zip(values, rows)]
            if all(f is not None for f in fields) and len(set(fields)) == 1:
                merged[path] = torch.from_numpy(np.concatenate(values))
                if path not in self._fields:
                    new_fields.append(fields[0])
            else:
                merged[path] = combine(values, rows)
        if new_fields:
            self._add_fields(new_fields)
        return merged


def rows_of(leaf: Any, rows: np.ndarray, count: int, what: str) -> np.ndarray:
    """Rows ``rows`` of an array-like with one row per reset env (``count``), as numpy.

    Raises:
        ValueError: not an array with ``count`` rows.
    """
    array = leaf.detach().cpu().numpy() if isinstance(leaf, torch.Tensor) else np.asarray(leaf)
    if array.ndim < 1 or len(array) != count:
        raise ValueError(f"reset: every array in options['{what}'] needs one row per reset env ({count}), "
                         f"got shape {array.shape}")
    return array[rows]


def note(exc: BaseException, text: str) -> None:
    """Attach ``text`` to an exception re-raised from a worker (shown under its message; Python >= 3.11)."""
    if hasattr(exc, "add_note"):
        exc.add_note(text)


def put(tree: dict, keys: tuple, value: Any) -> None:
    """Set ``tree[keys[0]][keys[1]]...`` to ``value``, making the nested dicts on the way."""
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})
    tree[keys[-1]] = value


def leaf_items(tree: Any, prefix: tuple = ()):
    """``(key path, leaf)`` of every non-dict value of a nested dict ``tree``, depth first."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from leaf_items(value, prefix + (key,))
    else:
        yield prefix, tree


def map_leaves(tree: Any, fn) -> Any:
    """A copy of the nested dict ``tree`` with ``fn`` applied to every leaf."""
    if isinstance(tree, dict):
        return {k: map_leaves(v, fn) for k, v in tree.items()}
    return fn(tree)


def combine(values: list, rows: list[int]) -> Any:
    """One value from each shard's: dicts key by key; arrays with the shard's env rows
    concatenated (as torch tensors); values equal everywhere once; otherwise a tuple per shard."""
    if all(isinstance(v, dict) for v in values) and len({tuple(v) for v in values}) == 1:
        return {k: combine([v[k] for v in values], rows) for k in values[0]}
    if all(isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n for v, n in zip(values, rows)):
        return torch.from_numpy(np.concatenate(values))
    try:
        if all(_equal(v, values[0]) for v in values[1:]):
            return _from_wire(values[0])
    except Exception:  # noqa: BLE001 - values that cannot be compared are returned per shard
        pass
    return tuple(_from_wire(v) for v in values)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())
    return bool(a == b)


def _from_wire(value: Any) -> Any:
    return torch.from_numpy(value) if isinstance(value, np.ndarray) else value
