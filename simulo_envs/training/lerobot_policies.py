"""LeRobot policy folders as checkpoints of ``scripts/evaluate.py``.

A policy folder is what LeRobot's ``PreTrainedPolicy.save_pretrained`` writes and ``lerobot-train``
saves under ``<output_dir>/checkpoints/<step>/pretrained_model``: ``config.json`` (the policy's
``type`` and features) and ``model.safetensors`` (``lerobot/policies/pretrained.py``, 0.6.1).
Evaluating one needs LeRobot, so it runs in the LeRobot venv through the ``lerobot_env_simulo``
plugin (``lerobot_env_simulo/evaluation.py``); this module, which does not import LeRobot,
recognises the folder and hands it over.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Callable, Optional

__all__ = ["is_policy_folder", "policy_folder", "policy_env", "policy_task", "by_policy_folder"]

_FILES = ("config.json", "model.safetensors")


def _holds_policy(path: str) -> bool:
    if not all(os.path.isfile(os.path.join(path, name)) for name in _FILES):
        return False
    try:
        with open(os.path.join(path, "config.json")) as handle:
            return isinstance(json.load(handle).get("type"), str)
    except (OSError, ValueError, AttributeError):
        return False


def policy_folder(path: str) -> str:
    """``path`` itself when it holds a LeRobot policy (``config.json`` naming a policy ``type``, and
    ``model.safetensors``), or its ``pretrained_model`` folder (a ``lerobot-train`` checkpoint
    folder such as ``outputs/train/run/checkpoints/last``), or the last checkpoint's (a
    ``lerobot-train`` output folder such as ``outputs/train/run``).

    Raises:
        FileNotFoundError: none holds a policy.
    """
    for folder in (path, os.path.join(path, "pretrained_model"),
                   os.path.join(path, "checkpoints", "last", "pretrained_model")):
        if os.path.isdir(folder) and _holds_policy(folder):
            return folder
    raise FileNotFoundError(f"{path!r} is not a LeRobot policy folder (config.json with a policy type, and "
                            "model.safetensors, in it, in its pretrained_model folder or in "
                            "checkpoints/last/pretrained_model)")


def is_policy_folder(path: str) -> bool:
    """True when ``policy_folder(path)`` finds a LeRobot policy."""
    try:
        policy_folder(path)
    except FileNotFoundError:
        return False
    return True


def _read_json(path: str) -> Optional[dict]:
    if not os.path.isfile(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def policy_env(path: str) -> tuple[str, dict]:
    """Where the env a policy folder is evaluated in comes from: ``("env", settings)``, the ``env``
    of the folder's ``train_config.json`` (``lerobot-train`` writes it beside the policy) when the
    policy was trained with ``--env.type=simulo`` (its ``--env.*`` settings); else ``("dataset",
    recorded)``, the ``meta/simulo_env.json`` of the dataset it was trained on, when that dataset
    was recorded by ``scripts/collect_demos.py`` (task, rate, cameras, episode limit, control mode).

    Raises:
        FileNotFoundError: not a policy folder. ValueError: neither source exists.
    """
    folder = policy_folder(path)
    train = _read_json(os.path.join(folder, "train_config.json")) or {}
    env = train.get("env") or {}
    if env.get("type") == "simulo":
        return "env", env
    root = (train.get("dataset") or {}).get("root")
    recorded = _read_json(os.path.join(root, "meta", "simulo_env.json")) if root else None
    if recorded is None:
        raise ValueError(f"{folder} names no simulo env (train_config.json: env.type is {env.get('type')!r}) and "
                         f"no dataset recorded by simulo_envs (dataset root {root!r}); train with --env.type=simulo "
                         "or on a dataset of scripts/collect_demos.py")
    return "dataset", recorded


def policy_task(path: str) -> str:
    """The task id a policy folder is evaluated in (``policy_env``).

    Raises:
        as ``policy_env``.
    """
    source, settings = policy_env(path)
    return settings["task"] if source == "env" else settings["env_id"]


def by_policy_folder(evaluate: Callable, record_policy_video: Callable) -> tuple[Callable, Callable]:
    """``(evaluate, record_policy_video)`` that run a LeRobot policy folder (their first argument)
    with ``lerobot_env_simulo.evaluation``'s functions of the same name and arguments, and any other
    checkpoint with the given ones.

    Raises:
        ImportError: a policy folder where LeRobot or the plugin is not installed (the message
            says how to run it in the LeRobot venv). Otherwise as the function called.
    """

    def pick(name: str, other: Callable) -> Callable:
        @functools.wraps(other)
        def run(checkpoint: str, *args, **kwargs):
            if not (isinstance(checkpoint, str) and os.path.isdir(checkpoint) and is_policy_folder(checkpoint)):
                return other(checkpoint, *args, **kwargs)
            try:
                from lerobot_env_simulo import evaluation
            except ImportError as error:
                raise ImportError(f"{checkpoint} is a LeRobot policy folder: evaluate it with LeRobot installed, in "
                                  "the LeRobot venv (`make lerobot-setup`, then `.venv-lerobot/bin/python "
                                  f"scripts/evaluate.py ...`); here: {error}") from None
            return getattr(evaluation, name)(checkpoint, *args, **kwargs)
        return run

    return pick("evaluate", evaluate), pick("record_policy_video", record_policy_video)
