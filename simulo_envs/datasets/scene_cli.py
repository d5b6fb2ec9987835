"""The scene options every script that builds a task's env takes, spelled the same everywhere
(``scripts/collect_demos.py``, ``scripts/train.py``, ``scripts/train_il.py``, ``scripts/evaluate.py``):

- ``--camera-size W H``: every sensor camera's width and height [px] (``sensor_configs``;
  ``simulo_envs.datasets.cli.add_camera_size_option``);
- ``--randomization NAME``: the task's randomization preset (``BaseEnv(randomization=NAME)``):
  ``default`` (the task's own table), ``none``, or ``visual`` (the task's table plus its visual
  domain randomization: lights, colours, camera pose; ``simulo_envs/envs/randomization_presets.py``).

What they set is recorded where the script records its env: a dataset's provenance, a training
checkpoint's config (``train_config["env_kwargs"]``), an imitation checkpoint's policy spec, an
evaluation's provenance; a checkpoint evaluates with its own settings unless the options override them.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Optional

from simulo_envs.datasets.cli import add_camera_size_option, camera_kwargs
from simulo_envs.envs.randomization_presets import RANDOMIZATION_PRESETS

__all__ = ["add_scene_options", "add_randomization_option", "scene_kwargs", "check_policy_sees_randomization",
           "check_policy_reads_cameras", "camera_size_option"]

VISUAL_PRESETS = ("visual", "visual_v1")
"""The presets that add only what cameras see to the task's own table."""


def add_randomization_option(parser: argparse.ArgumentParser) -> None:
    """``--randomization {default,none,visual,visual_v1}`` (default: not given, the task's or the checkpoint's)."""
    parser.add_argument("--randomization", choices=RANDOMIZATION_PRESETS, default=None,
                        help="the task's randomization preset: default (its own table), none, or visual "
                             "(plus lights, colours and camera pose, drawn per env at every reset)")


def add_scene_options(parser: argparse.ArgumentParser) -> None:
    """``--camera-size W H`` and ``--randomization NAME``."""
    add_camera_size_option(parser)
    add_randomization_option(parser)


def scene_kwargs(args: argparse.Namespace) -> dict:
    """The env keywords the scene options ask for: ``sensor_configs`` and ``randomization``, each
    only when given."""
    kwargs = camera_kwargs(args) if getattr(args, "camera_size", None) is not None else {}
    if getattr(args, "randomization", None) is not None:
        kwargs["randomization"] = args.randomization
    return kwargs


def check_policy_sees_randomization(randomization, reads_images: bool, evaluating: bool = False) -> None:
    """Refuse a visual preset for a policy that reads no image: training (or evaluating) it there
    would record a setting that changes nothing the policy sees. ``evaluating``: the message
    speaks of an evaluation.

    Raises:
        ValueError: ``randomization`` is ``"visual"`` or ``"visual_v1"`` and ``reads_images`` is False.
    """
    if randomization not in VISUAL_PRESETS or reads_images:
        return
    if evaluating:
        raise ValueError(f"--randomization {randomization} changes only what the cameras see, and this checkpoint is "
                         f"a state policy that reads no image: evaluate it under --randomization default (the same "
                         f"physics), or evaluate a policy that reads images")
    raise ValueError(f"--randomization {randomization} changes only what the cameras see, and a state policy "
                     f"reads no image: train it under --randomization default (the same physics), or train a "
                     f"policy that reads images (train_il.py --obs rgb, or an image student: train.py --teacher)")


def camera_size_option(sensor_configs: Optional[Mapping]) -> Optional[str]:
    """``--camera-size W H`` as a user typed it for the env keyword it sets (``sensor_configs``
    ``{"width": W, "height": H}``); None for None or an empty mapping."""
    if not sensor_configs:
        return None
    if {"width", "height"} <= set(sensor_configs):
        return f"--camera-size {sensor_configs['width']} {sensor_configs['height']}"
    return f"--camera-size ({dict(sensor_configs)})"


def check_policy_reads_cameras(given: Mapping[str, Any], reads_images: bool, evaluating: bool = False) -> None:
    """Refuse camera options for a policy that reads no image: the cameras' size or a choice of
    cameras would be recorded with the run and change nothing the policy sees.

    Args:
        given: option as the user spelled it (``"--camera-size"``, ``"--camera"``, ``"--cameras"``)
            -> the value given (a ``(W, H)`` pair, a list of names, or a ``sensor_configs``
            mapping for ``"--camera-size"``); None or empty: not given.
        reads_images: the policy reads camera images (an image student, an ``--obs rgb`` policy).
        evaluating: the message speaks of evaluating a checkpoint, not of training.

    Raises:
        ValueError: a camera option was given and ``reads_images`` is False; the message names
            the options as given.
    """
    spelled = []
    for option, value in given.items():
        if value is None or (hasattr(value, "__len__") and not len(value)):
            continue
        if option == "--camera-size" and isinstance(value, Mapping):
            spelled.append(camera_size_option(value))
        elif option == "--camera":   # repeated once per camera, as typed
            spelled.append(" ".join(f"{option} {name}" for name in value))
        else:
            words = [value] if isinstance(value, (str, int)) else list(value)
            spelled.append(" ".join([option, *map(str, words)]))
    if reads_images or not spelled:
        return
    what, (they, them) = " and ".join(spelled), (("they", "them") if len(spelled) > 1 else ("it", "it"))
    if evaluating:
        raise ValueError(f"{what}: this checkpoint is a state policy, which reads no camera image, so {they} would "
                         f"change nothing: leave {them} out")
    raise ValueError(f"{what}: a state policy reads no camera image, so {they} would change nothing: leave {them} out, "
                     f"or train a policy that reads images (train_il.py --obs rgb, or an image student: train.py "
                     f"--teacher)")
