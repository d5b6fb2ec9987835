"""Randomization presets: the names ``BaseEnv(randomization=...)`` takes besides a table, so a
command line, a config file or a checkpoint can name a task's randomization by one word."""

from __future__ import annotations

import math
from typing import Optional

from simulo_envs.authoring.textures import TEXTURE_NAMES
from simulo_envs.envs.distractors import KINDS

__all__ = ["RANDOMIZATION_PRESETS", "randomization_table", "visual_table"]


RANDOMIZATION_PRESETS = ("default", "none", "visual", "visual_v1")
"""The names ``randomization=`` takes besides a table (``randomization_table``). A preset's name
keeps its meaning once a checkpoint has recorded it: ``"visual_v1"`` is the first visual preset
(lights, an object's colour, the front camera's pose), as the image students under ``tasks/``
trained with ``--randomization visual`` were trained; ``"visual"`` is the full one."""


def randomization_table(env_cls, randomization) -> tuple:
    """The table an env of ``env_cls`` uses for its ``randomization`` keyword: None or
    ``"default"``: the task's ``default_randomization``; ``"none"``: no entry; ``"visual"``: the
    task's table plus its ``visual_randomization``; ``"visual_v1"``: plus its
    ``visual_randomization_v1``; a sequence of ``Randomize``: itself.

    Raises:
        ValueError: an unknown preset name, or a visual preset for a task without its table.
    """
    if randomization is None:
        return tuple(env_cls.default_randomization)
    if not isinstance(randomization, str):
        return tuple(randomization)
    if randomization not in RANDOMIZATION_PRESETS:
        raise ValueError(f"randomization {randomization!r}: a table of Randomize entries or one of "
                         f"{', '.join(RANDOMIZATION_PRESETS)}")
    if randomization == "none":
        return ()
    if randomization in ("visual", "visual_v1"):
        attribute = "visual_randomization" + randomization.removeprefix("visual")
        table = getattr(env_cls, attribute, ())
        if not table:
            raise ValueError(f"randomization {randomization!r}: {env_cls.__name__} has no visual domain randomization "
                             f"(lights, colours, camera poses) to add; choose 'default' (the task's own table) or "
                             f"'none'")
        return tuple(env_cls.default_randomization) + tuple(table)
    return tuple(env_cls.default_randomization)


FOV_JITTER = 0.05
"""A sensor camera's vertical field of view is drawn from nominal + U(-FOV_JITTER, FOV_JITTER) [rad] (about 3 deg)."""
IMAGE_NOISE = {"brightness": (-0.08, 0.08), "contrast": (0.8, 1.2), "noise_std": (0.0, 0.03)}
"""Each sensor camera's image noise per reset: U(low, high) of each setting (``image_noise.py``)."""


FLOOR_COLOR = (0.15, 0.85)
"""The floor's RGB is drawn U(low, high) per channel."""


def visual_table(colored: tuple = (), cameras: Optional[dict] = None, fov: float = 0.0,
                 image_noise: Optional[dict] = None, textured: tuple = (), floor: bool = False,
                 distractors: tuple = ()) -> tuple:
    """A visual randomization table (a task's ``visual_randomization``), drawn at every reset:

    - lights: directional intensity x U(0.5, 1.5), colour U(0.7, 1.0) per channel, direction
      default + U(-0.3, 0.3) per component (renormalised), ambient U(0.15, 0.45) per channel;
    - ``colored`` props (attribute names, e.g. ``"block"``): RGB colour U(0.1, 1.0) per channel;
    - ``cameras``: ``{name: (metres, radians)}``: the sensor camera's pose jitter, position
      U(-m, m) and rotation U(-rad, rad) per axis of the camera frame, around its nominal mount
      (a camera on a link: around its pose on the link); with ``fov`` > 0 its vertical field of
      view nominal + U(-fov, fov) [rad];
    - ``image_noise`` (``{setting: (low, high)}``, e.g. ``IMAGE_NOISE``): each camera of
      ``cameras`` gets brightness, contrast and per-pixel noise drawn U(low, high) per setting
      (``simulo_envs/envs/image_noise.py``: observations only);
    - ``textured`` props: a texture of the procedural set, uniformly one of ``TEXTURE_NAMES``
      (``"plain"`` included; ``simulo_envs/authoring/textures.py``), tinted by the prop's colour;
    - ``floor``: the floor's RGB U(``FLOOR_COLOR``) per channel and a texture as above;
    - ``distractors``: one slot per ``((x_low, y_low), (x_high, y_high))`` box (env-local [m], on
      the floor, where nothing of the task goes): a shape of ``KINDS`` (box, sphere, cylinder),
      RGB U(0.1, 1.0), its centre U(box), heading U(-pi, pi) (``simulo_envs/envs/distractors.py``:
      seen by the cameras, touched by nothing).

    The light and colour ranges follow FrankaLiftRandomized-v1's (``tasks/franka_lift_randomized.py``).
    """
    from simulo_envs.envs.randomization import Choice, Randomize, Uniform

    table = [
        Randomize("lights.intensity", Uniform(0.5, 1.5)),                     # x colour
        Randomize("lights.color", Uniform(0.7, 1.0)),                         # RGB
        Randomize("lights.direction", Uniform(-0.3, 0.3), operation="add"),   # world frame, renormalised
        Randomize("lights.ambient", Uniform(0.15, 0.45)),                     # RGB
    ]
    table += [Randomize(f"{name}.color", Uniform(0.1, 1.0)) for name in colored]
    table += [Randomize(f"{name}.texture", Choice(range(len(TEXTURE_NAMES)))) for name in textured]
    if floor:
        table += [Randomize("floor.color", Uniform(*FLOOR_COLOR)), Randomize("floor.texture", Choice(range(len(TEXTURE_NAMES))))]
    for slot, (low, high) in enumerate(distractors):
        table += [Randomize(f"visual_distractors.{slot}.kind", Choice(range(len(KINDS)))),
                  Randomize(f"visual_distractors.{slot}.color", Uniform(0.1, 1.0)),
                  Randomize(f"visual_distractors.{slot}.position", Uniform(low, high)),
                  Randomize(f"visual_distractors.{slot}.yaw", Uniform(-math.pi, math.pi))]
    for name, (metres, radians) in (cameras or {}).items():
        table.append(Randomize(f"sensor_cameras.{name}.pose_jitter",
                               Uniform([-metres] * 3 + [-radians] * 3, [metres] * 3 + [radians] * 3)))
        if fov > 0:
            table.append(Randomize(f"sensor_cameras.{name}.fov", Uniform(-fov, fov), operation="add"))
        for setting, (low, high) in (image_noise or {}).items():
            table.append(Randomize(f"sensor_cameras.{name}.{setting}", Uniform(low, high)))
    return tuple(table)
