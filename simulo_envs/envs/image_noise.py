"""Image noise of the sensor cameras: per-env brightness, contrast and per-pixel Gaussian noise on
their RGB pictures, as a real camera's exposure, gain and read noise vary.

Each sensor camera has three per-env settings, written with ``SensorCamera.set_image_noise`` (a
randomization table draws them per reset: ``sensor_cameras.<name>.brightness`` & co,
``simulo_envs/envs/randomization_params.py``). With the picture's channels ``x`` in [0, 1]
(uint8 / 255), the observation gets::

    y = clip((x - 0.5) * contrast + 0.5 + brightness + noise_std * n, 0, 1),  n ~ N(0, 1) per pixel and channel

rounded to the nearest of 256 levels: ``brightness`` in [-1, 1] (0: none), ``contrast`` >= 0
(1: none), ``noise_std`` in [0, 1] (0: none), all fractions of the full range. The contrast
pivots on mid-grey, as torchvision's ``adjust_contrast`` does on the image mean (a fixed pivot
keeps one env's picture independent of what it shows).

Only the ``"rgb"`` texture of the observation changes (``obs["sensor_data"][camera]["rgb"]``):
depth, segmentation and the other textures, the state, ``render()`` and ``get_sensor_images``
stay clean (``get_sensor_images(image_noise=True)`` gives the noisy pictures, for a video of what
a policy saw). An env whose settings are all neutral is left bit for bit as rendered, and costs
nothing.

Randomness: ``n`` depends on the env's own seed and on where its episode is, nothing else: the
picture of env ``k``'s camera ``c`` (its place among the observation's cameras) at step ``t`` of
its ``e``-th episode since its seed ``s`` (``reset(seed=...)``, a reconfiguration, or a fresh
episode seed) draws ``n`` from ``numpy.random.default_rng([s, NOISE_TAG, e, t, c])`` (PCG64). So
env ``k`` seeded ``s`` gets the same pictures whatever ``num_envs``, whichever other envs reset or
take pictures meanwhile (a partial reset captures every env again), and a second picture of the
same step (``get_sensor_images(image_noise=True)``) is the one the observation had. A stream
continued from picture to picture would advance with every capture, which other envs' resets
cause.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

NOISE_TAG = 0x4E4F4953
"""Mixed into each env's seed for its image-noise stream (``SeedSequence([seed, NOISE_TAG])``)."""

SETTINGS = {"brightness": 0.0, "contrast": 1.0, "noise_std": 0.0}
"""The per-env settings and their neutral values (no change to the picture)."""


class ImageNoise:
    """Every sensor camera's per-env noise settings and each env's noise stream (module
    docstring); held by the env's ``Randomizer``, written through ``SensorCamera.set_image_noise``.

    Args:
        num_envs: number of envs; their seeds come from OS entropy until ``seed`` is called.
    """

    def __init__(self, num_envs: int):
        self.num_envs = num_envs
        self._seeds = [int(e) for e in np.random.SeedSequence().generate_state(num_envs)]
        self._episodes = np.zeros(num_envs, dtype=np.int64)  # episodes begun since each env's seed
        self._settings: dict[str, dict[str, np.ndarray]] = {}

    def seed(self, env_ids: Sequence[int], seeds: Sequence[int]) -> None:
        """Give ``env_ids`` the seeds ``seeds`` (one int >= 0 each); their episode count restarts."""
        for i, s in zip(np.asarray(env_ids).tolist(), seeds):
            self._seeds[int(i)] = int(s)
            self._episodes[int(i)] = 0

    def begin_episodes(self, env_ids: Sequence[int]) -> None:
        """Count a new episode of each env of ``env_ids`` (at every reset of those envs)."""
        self._episodes[np.asarray(env_ids, dtype=np.int64)] += 1

    def clear(self) -> None:
        """Every camera back to neutral settings (at each scene build: its cameras are new)."""
        self._settings = {}

    def settings(self, camera: str) -> dict[str, np.ndarray]:
        """``{setting: float32 (N,)}`` of ``camera``, fresh arrays (neutral where never written)."""
        current = self._settings.get(camera)
        return {name: (np.full(self.num_envs, neutral, dtype=np.float32) if current is None else current[name].copy())
                for name, neutral in SETTINGS.items()}

    def set(self, camera: str, env_ids: np.ndarray, **values: np.ndarray) -> None:
        """Write settings (each float32 (k,), validated by the caller) of ``camera`` in ``env_ids``."""
        current = self._settings.setdefault(camera, self.settings(camera))
        for name, value in values.items():
            current[name][env_ids] = value

    def apply(self, images: dict, steps: np.ndarray) -> dict:
        """``images`` (``{camera: {texture: array (N, H, W, C)}}``, as captured) with each
        camera's ``"rgb"`` (uint8 (N, H, W, 3)) replaced by its noisy picture where a setting of
        that camera is not neutral; the other entries are the same objects. ``steps``: int (N,),
        each env's steps since its last reset (``BaseEnv.elapsed_steps``)."""
        noisy = [name for name in images if "rgb" in images[name] and self._active(name)]
        if not noisy:
            return images
        out = {name: dict(textures) for name, textures in images.items()}
        for name in noisy:
            out[name]["rgb"] = out[name]["rgb"].copy()
        cameras = {name: j for j, name in enumerate(images)}
        steps = np.asarray(steps, dtype=np.int64).reshape(-1)
        for env in range(self.num_envs):
            for name in noisy:
                s = self._settings[name]
                b, c, std = float(s["brightness"][env]), float(s["contrast"][env]), float(s["noise_std"][env])
                if b == 0.0 and c == 1.0 and std == 0.0:
                    continue
                picture = out[name]["rgb"][env]
                x = picture.astype(np.float32) * (c / 255.0) + (0.5 - 0.5 * c + b)
                if std > 0.0:
                    key = [self._seeds[env], NOISE_TAG, int(self._episodes[env]), int(steps[env]), cameras[name]]
                    x += std * np.random.default_rng(key).standard_normal(picture.shape, dtype=np.float32)
                picture[...] = np.rint(np.clip(x, 0.0, 1.0) * 255.0).astype(np.uint8)
        return out

    def _active(self, camera: str) -> bool:
        s = self._settings.get(camera)
        return s is not None and bool((s["brightness"] != 0).any() or (s["contrast"] != 1).any()
                                      or (s["noise_std"] != 0).any())
