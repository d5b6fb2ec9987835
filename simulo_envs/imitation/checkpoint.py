"""Checkpoints of imitation policies: layout, writing (atomic), reading (checked) and export.

A checkpoint is one ``torch.save`` dict, read back with ``weights_only=True`` (plain data and tensors):

=================  ==========================================================================
key                value
=================  ==========================================================================
``format``         ``"simulo_envs.imitation"`` (how ``scripts/evaluate.py`` tells it from PPO's)
``format_version`` 1
``spec``           ``PolicySpec.to_dict()``: env id, observation kind, control mode, widths
``config``         ``ILConfig.to_dict()``
``model``          the weights the policy acts with (EMA weights for Diffusion Policy), with the
                   normaliser's statistics
``iteration``      gradient steps trained
``wall_s``         seconds of training (gradient steps, logging and checkpoints; no evaluation)
``cpu_s``          CPU seconds this process spent on the same
``seed``           the training seed
``demos``          ``{"source", "episodes", "frames", "seeds"}``: what it learned from (``seeds``:
                   the demonstrations' reset seeds, which evaluation refuses to reuse)
``train_state``    only in training checkpoints (absent after ``export_policy``): ``weights``
                   (the trained, non-averaged weights), ``ema``, ``optimizer``, ``lr_scheduler``,
                   ``rng`` (torch's CPU generator state)
=================  ==========================================================================
"""

from __future__ import annotations

import os
from typing import Any, Optional

import torch

from simulo_envs.imitation.config import ILConfig
from simulo_envs.imitation.encoders import Normalizer
from simulo_envs.imitation.policies import build_policy
from simulo_envs.imitation.spec import PolicySpec

__all__ = ["FORMAT", "CheckpointError", "save_checkpoint", "read_checkpoint", "is_imitation_checkpoint",
           "check_resumable", "load_policy_from", "export_policy"]

FORMAT = "simulo_envs.imitation"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A file that is not a readable imitation checkpoint, or one that does not fit its use."""


def save_checkpoint(path: str, data: dict) -> None:
    """Write ``data`` (the layout above, ``format`` keys added) to ``path`` atomically: a temporary
    file beside it, then a rename, so an interrupt never leaves half a checkpoint."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        torch.save({"format": FORMAT, "format_version": FORMAT_VERSION, **data}, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _load(path: str) -> Any:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path!r} is a folder, not a checkpoint file (a LeRobot policy folder holds "
                                "config.json and model.safetensors)" if os.path.isdir(path) else
                                f"no checkpoint file {path!r}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception:   # a PPO checkpoint (pickled objects), or not a torch file at all
        return None


def is_imitation_checkpoint(path: str) -> bool:
    """Whether ``path`` is a checkpoint of this module (False for PPO's and for other files).

    Raises:
        FileNotFoundError: no such file.
    """
    raw = _load(path)
    return isinstance(raw, dict) and raw.get("format") == FORMAT


def read_checkpoint(path: str) -> dict:
    """The checkpoint's dict, its layout checked.

    Raises:
        FileNotFoundError: no such file. CheckpointError: not an imitation checkpoint, a newer
            format, or a missing key.
    """
    raw = _load(path)
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise CheckpointError(f"{path!r} is not a checkpoint of scripts/train_il.py")
    if raw.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path!r} has format version {raw.get('format_version')}, this code reads "
                              f"{FORMAT_VERSION}")
    missing = [k for k in ("spec", "config", "model", "iteration", "wall_s", "demos") if k not in raw]
    if missing:
        raise CheckpointError(f"{path!r} lacks {missing}")
    return raw


def check_resumable(raw: dict, path: str) -> None:
    """Refuse to resume from checkpoint ``raw`` (read from ``path``) when it holds acting weights
    only (``export_policy``'s file, or a run's checkpoint older than its newest), not the training
    state a run continues from.

    Raises:
        CheckpointError: naming the file and the checkpoint to resume from instead.
    """
    if "train_state" not in raw:
        raise CheckpointError(f"{path!r} holds acting weights only (exported, or a run's older checkpoint); resume "
                              "from the run's newest checkpoint (model_final.pt, or its highest model_<i>.pt)")


def empty_normalizer(spec: PolicySpec) -> Normalizer:
    """A ``Normalizer`` of ``spec``'s widths, to load saved statistics into."""
    return Normalizer(torch.zeros(2, spec.state_dim), torch.zeros(2, spec.action_dim))


def load_policy_from(raw: dict, expected_env_id: Optional[str] = None):
    """``(policy, spec, config)`` from a ``read_checkpoint`` dict, in eval mode.

    Raises:
        CheckpointError: the checkpoint was trained on another task than ``expected_env_id``, or
            its weights do not fit its own spec (a corrupt file).
    """
    spec = PolicySpec.from_dict(raw["spec"])
    if expected_env_id is not None and spec.env_id != expected_env_id:
        raise CheckpointError(f"the checkpoint was trained on {spec.env_id}, not {expected_env_id}")
    config = ILConfig.from_dict(raw["config"])
    policy = build_policy(spec, config, empty_normalizer(spec))
    try:
        policy.load_state_dict(raw["model"])
    except RuntimeError as error:
        raise CheckpointError(f"the checkpoint's weights do not fit its policy ({spec.describe()}): {error}") from None
    return policy.eval(), spec, config


def export_policy(path: str, out: str, half: bool = False) -> int:
    """Write ``path``'s acting weights alone (no ``train_state``) to ``out``; ``half`` stores
    float tensors as float16 (loaded back as float32). Returns the bytes written.

    Raises:
        as ``read_checkpoint``.
    """
    raw = read_checkpoint(path)
    raw.pop("train_state", None)
    raw.pop("format", None)
    raw.pop("format_version", None)
    if half:
        raw["model"] = {k: v.half() if v.is_floating_point() else v for k, v in raw["model"].items()}
        raw["half"] = True
    save_checkpoint(out, raw)
    return os.path.getsize(out)
