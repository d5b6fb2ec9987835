"""Env keywords as JSON: how a dataset or a checkpoint records the env it came from, whole.

A dataset stores the keywords its env was made with (``meta/simulo_env.json``, the HDF5
sidecar's ``env_info.env_kwargs``) and a policy trained on it stores them again in its
checkpoint, so that replay and evaluation rebuild exactly that env: moved or resized cameras,
randomization tables, physics and control frequencies, the control mode. Nothing may be dropped
on the way: ``encode_env_kwargs`` either encodes a value exactly or raises.

Encoding (``decode_env_kwargs`` inverts it):

==========================================  ============================================
value                                       JSON
==========================================  ============================================
None, bool, int, float, str                 itself (numpy scalars: the Python number)
list, tuple                                 a list (every env keyword takes either)
dict with str keys                          an object, values encoded
numpy array, torch tensor                   a (nested) list of numbers
``Pose`` (``look_at(...)``), or any object  ``{"__type__": "Pose", "position": [...],
with ``.p`` and ``.q`` (``sapien.Pose``)    "quaternion": [...]}`` (scalar-first)
a dataclass of ``DATACLASSES`` (``SimConfig``, ``{"__type__": <name>, <field>: <value>, ...}``
``CameraConfig``, ``Randomize``, ``Uniform``,   every field encoded
``LogUniform``, ``Gaussian``, ``Choice``,
``CloneCfg``)
==========================================  ============================================

Anything else (a callable clone strategy, an object of another class) raises ``TypeError``
naming the keyword's path and the value's type: such an env cannot be recorded so that it is
rebuilt, and recording it without that setting would give a dataset that lies about its env.
Decoding builds only the classes of ``DATACLASSES`` (never imports what a file names).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from simulo_envs.authoring import Pose
from simulo_envs.cloner.plan import CloneCfg
from simulo_envs.envs.distributions import Choice, Gaussian, LogUniform, Uniform
from simulo_envs.envs.randomization import Randomize
from simulo_envs.envs.sensors import CameraConfig
from simulo_envs.sim.config import SimConfig

__all__ = ["DATACLASSES", "TYPE_KEY", "encode_env_kwargs", "decode_env_kwargs", "encode_value", "decode_value"]

TYPE_KEY = "__type__"
DATACLASSES = {cls.__name__: cls for cls in (Pose, SimConfig, CameraConfig, Randomize, Uniform, LogUniform, Gaussian,
                                             Choice, CloneCfg)}
"""The classes an encoded env keyword may hold, by the name written under ``TYPE_KEY``."""


def encode_env_kwargs(kwargs: Mapping[str, Any]) -> dict:
    """``kwargs`` as JSON-ready data (module docstring).

    Raises:
        TypeError: a value that cannot be encoded exactly; the message names its path
            (``sensor_configs.base_camera.pose``) and type.
    """
    if not isinstance(kwargs, Mapping):
        raise TypeError(f"env keywords must be a dict, got {type(kwargs).__name__}")
    return {str(k): encode_value(v, str(k)) for k, v in kwargs.items()}


def decode_env_kwargs(data: Mapping[str, Any]) -> dict:
    """The env keywords ``data`` encodes (``encode_env_kwargs``'s inverse); plain JSON values
    (a dataset written before objects were encoded) come back unchanged.

    Raises:
        ValueError: an object of an unknown ``__type__`` or with fields its class refuses.
    """
    return {k: decode_value(v, k) for k, v in dict(data or {}).items()}


def encode_value(value: Any, path: str = "value") -> Any:
    """One value encoded (module docstring). Raises TypeError naming ``path`` when it cannot be."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray) or _is_tensor(value):
        return np.asarray(_to_numpy(value)).tolist()
    if isinstance(value, Mapping):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise TypeError(f"env keyword {path}: keys must be strings to be recorded, got {bad[0]!r}")
        return {k: encode_value(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, Pose) and hasattr(value, "p") and hasattr(value, "q"):
        value = Pose.coerce(value)  # a sapien.Pose
    cls = type(value)
    if dataclasses.is_dataclass(value) and DATACLASSES.get(cls.__name__) is cls:
        out = {TYPE_KEY: cls.__name__}
        for f in dataclasses.fields(value):
            out[f.name] = encode_value(getattr(value, f.name), f"{path}.{f.name}")
        return out
    raise TypeError(f"env keyword {path}: a {cls.__module__}.{cls.__qualname__} cannot be recorded with the data "
                    f"(recordable: JSON values, numpy arrays, tensors, {', '.join(sorted(DATACLASSES))}); the env "
                    f"could not be rebuilt from the record")


def decode_value(value: Any, path: str = "value") -> Any:
    """One encoded value back (``encode_value``'s inverse)."""
    if isinstance(value, list):
        return [decode_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    if TYPE_KEY not in value:
        return {k: decode_value(v, f"{path}.{k}") for k, v in value.items()}
    name = value[TYPE_KEY]
    cls = DATACLASSES.get(name)
    if cls is None:
        raise ValueError(f"env keyword {path}: unknown recorded type {name!r} (known: {sorted(DATACLASSES)})")
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(value) - fields - {TYPE_KEY})
    if unknown:
        raise ValueError(f"env keyword {path}: {name} has no fields {unknown}")
    values = {k: decode_value(v, f"{path}.{k}") for k, v in value.items() if k != TYPE_KEY}
    for key in ("position", "quaternion", "gravity", "fault_box_low", "fault_box_high", "joints"):
        if isinstance(values.get(key), list):  # tuple fields
            values[key] = tuple(values[key])
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:
        raise ValueError(f"env keyword {path}: cannot rebuild {name}: {error}") from None


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def _to_numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if _is_tensor(value) else value
