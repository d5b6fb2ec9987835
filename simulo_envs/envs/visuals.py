"""Per-env lights, floor and sensor cameras (pose, field of view, image noise): ``env.lights``,
``env.floor`` and ``env.sensor_cameras[name]``.

Both exist only where the env renders (a visual ``obs_mode`` or a ``render_mode``) with a
render scene per env (not ``parallel_in_single_scene``, where all envs share one scene and its
lights): reads and writes raise RuntimeError elsewhere. Writers take ``env_ids`` (any ``normalize_env_ids`` form;
None: every env), validate every value first (wrong shape, NaN/inf or out of range: ValueError,
nothing written) and change only the listed envs' render scenes; the next rendered frame shows
it. Reads are fresh float32 tensors on the env's device, read back from the renderer.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from simulo_envs.authoring.textures import texture, texture_indices
from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.envs.image_noise import ImageNoise
from simulo_envs.geometry import quat_mul, rotvec_to_quat
from simulo_envs.params_common import check_range, per_env_values
from simulo_envs.tensors import to_device

_NO_RENDER = ("{what} exist only when the env renders: make it with a visual obs_mode (e.g. 'rgb') or a "
              "render_mode")


def renders_per_env(env) -> bool:
    """True where ``env`` renders with one render scene per env (not ``parallel_in_single_scene``)."""
    backend = env._backend
    config = getattr(backend, "render_config", None)
    return backend is not None and backend.render and not getattr(config, "single_scene", False)


class Lights:
    """The lights of every env: one ambient light and the directional lights the task set with
    ``scene.set_lighting`` (``num_directional`` of them, in that order).

    A directional light has an RGB ``color`` (>= 0 per channel) and a scalar ``intensity``
    (>= 0); the renderer gets ``color * intensity``. ``direction`` is the unit vector the light
    travels along, world frame (``(0, 1, -1)`` shines down and towards +y).
    """

    def __init__(self, env):
        self._env = env

    @property
    def is_per_env(self) -> bool:
        """True where each env has lights of its own: the env renders, one render scene per env
        (with ``parallel_in_single_scene`` every env shares one scene and its lights)."""
        return renders_per_env(self._env)

    def _backend(self):
        backend = self._env._backend
        if backend is None or not backend.render:
            raise RuntimeError(_NO_RENDER.format(what="lights"))
        if not self.is_per_env:
            raise RuntimeError("with parallel_in_single_scene every env shares one render scene and its lights: "
                               "per-env lights need one render scene per env (the default)")
        return backend

    @property
    def num_directional(self) -> int:
        """Number of directional lights per env (the task's lighting)."""
        return len(self._env.scene.lighting[1])

    def _read(self, name: str) -> torch.Tensor:
        return to_device(self._backend().light_param(name), self._env.device)

    @property
    def ambient(self) -> torch.Tensor:
        """(num_envs, 3) ambient RGB (>= 0). Fresh."""
        return self._read("ambient")

    @property
    def color(self) -> torch.Tensor:
        """(num_envs, L, 3) RGB of each directional light (>= 0). Fresh."""
        return self._read("color")

    @property
    def intensity(self) -> torch.Tensor:
        """(num_envs, L) intensity factor of each directional light (>= 0). Fresh."""
        return self._read("intensity")

    @property
    def direction(self) -> torch.Tensor:
        """(num_envs, L, 3) unit direction each directional light travels, world frame. Fresh."""
        return self._read("direction")

    def _write(self, name: str, value, env_ids: EnvIds, light: Optional[int], trailing: tuple, unit: str) -> None:
        backend = self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        if name == "ambient":
            values = per_env_values(value, len(ids), trailing, f"ambient {name}")
        else:
            count = self.num_directional
            if light is not None and (isinstance(light, bool) or not isinstance(light, (int, np.integer))
                                      or not 0 <= light < count):
                raise IndexError(f"light must be an int in [0, {count}) (the directional lights), got {light!r}")
            rows = per_env_values(value, len(ids), trailing if light is not None else (count, *trailing),
                                  f"light {name}")
            values = rows
            if light is not None:
                values = backend.light_param(name, ids)
                values[:, light] = rows
        if name == "direction":
            norms = np.linalg.norm(values, axis=-1)
            if norms.size and norms.min() < 1e-6:
                raise ValueError("light direction must be a non-zero vector; nothing was written")
            values = values / norms[..., None]
        else:
            check_range(values, f"light {name}", unit, low=0.0)
        if len(ids):
            backend.set_light_param(name, ids, values.astype(np.float32))

    def set_ambient(self, rgb, env_ids: EnvIds = None) -> None:
        """Set the ambient light, (k, 3) RGB >= 0 (one row: every listed env).

        Raises:
            ValueError: wrong shape, NaN/inf or a negative channel. RuntimeError: no rendering."""
        self._write("ambient", rgb, env_ids, None, (3,), "")

    def set_color(self, rgb, env_ids: EnvIds = None, light: Optional[int] = None) -> None:
        """Set directional light colours: (k, 3) RGB >= 0 for light index ``light``, or (k, L, 3)
        for every light (``light=None``).

        Raises:
            ValueError: wrong shape, NaN/inf or a negative channel. IndexError: bad ``light``.
            RuntimeError: no rendering."""
        self._write("color", rgb, env_ids, light, (3,), "")

    def set_intensity(self, intensity, env_ids: EnvIds = None, light: Optional[int] = None) -> None:
        """Set directional light intensities: (k,) >= 0 for ``light``, or (k, L) for every light.

        Raises: as ``set_color``."""
        self._write("intensity", intensity, env_ids, light, (), "")

    def set_direction(self, direction, env_ids: EnvIds = None, light: Optional[int] = None) -> None:
        """Set directional light directions, world frame: (k, 3) for ``light`` or (k, L, 3); each
        vector is normalised.

        Raises:
            ValueError: wrong shape, NaN/inf or a zero vector. IndexError, RuntimeError: as
                ``set_color``."""
        self._write("direction", direction, env_ids, light, (3,), "")


class Floor:
    """The floor (the ground plane the tasks stand on, their table top) of every env, as the
    sensor cameras see it: an RGB colour in [0, 1] and a texture of the procedural set
    (``simulo_envs/authoring/textures.py``): the pattern times the colour. Physics never
    changes. Needs a ground and a render scene per env (``is_per_env``)."""

    def __init__(self, env):
        self._env = env

    @property
    def is_per_env(self) -> bool:
        """True where each env has a floor visual of its own: the env renders, one render scene
        per env, and the task has a ground."""
        return renders_per_env(self._env) and len(self._env._backend.ground_segmentation_ids()) == self._env.num_envs

    def _backend(self):
        if not self.is_per_env:
            raise RuntimeError(_NO_RENDER.format(what="the floor's colour and texture") +
                               ", with one render scene per env and a ground")
        return self._env._backend

    @property
    def color(self) -> torch.Tensor:
        """(num_envs, 3) RGB of the floor per env, read back from the renderer. Fresh."""
        return to_device(self._backend().ground_color()[:, :3], self._env.device)

    def set_color(self, rgb, env_ids: EnvIds = None) -> None:
        """Set the floor's RGB (k, 3) in [0, 1] in ``env_ids`` (one row: every listed env).

        Raises:
            ValueError: wrong shape, NaN/inf or a channel outside [0, 1]; nothing is written.
            RuntimeError: no floor visual per env."""
        backend = self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        values = per_env_values(rgb, len(ids), (3,), "floor color")
        check_range(values, "floor color", "", low=0.0, high=1.0)
        if len(ids):
            backend.set_ground_color(ids, np.concatenate([values, np.ones((len(ids), 1), np.float32)], axis=1))

    def set_texture(self, index, env_ids: EnvIds = None) -> None:
        """Put texture ``index`` (k,) or one int of ``TEXTURE_NAMES`` (0: ``"plain"``) on the floor
        of ``env_ids``: its pattern repeats about every 16 cm.

        Raises:
            ValueError: wrong shape, or not a whole index in range (the message lists the set);
                nothing is written. RuntimeError: no floor visual per env."""
        backend = self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        indices = texture_indices(per_env_values(index, len(ids), (), "floor texture"), "floor texture")
        if len(ids):
            backend.set_ground_texture(ids, [texture(i, floor=True) for i in indices])


class SensorCamera:
    """A sensor camera in every env: its pose (the configured pose plus a per-env offset), its
    vertical field of view, and the noise on its RGB pictures (``simulo_envs/envs/image_noise.py``).

    Poses are ``[x, y, z, qw, qx, qy, qz]`` in the env-local frame (relative to each env's origin),
    or, for a camera riding on a link (``mounted``: a wrist camera), in that link's frame; SAPIEN's
    camera axes (+x forward, +y left, +z up). ``get_sensor_params()`` reports the moved extrinsics
    and the intrinsics of the current field of view.
    """

    FOV_RANGE = (0.0, 3.1)
    """Valid vertical field of view [rad]: (0, 3.1]."""

    def __init__(self, env, name: str, default_local_pose, fov: float = np.pi / 2, mounted: bool = False,
                 noise: Optional[ImageNoise] = None):
        self._env = env
        self.name = name
        self.mounted = bool(mounted)
        self._default = np.asarray(default_local_pose, dtype=np.float32).reshape(7)
        self._fov = float(fov)
        self._noise = noise if noise is not None else ImageNoise(env.num_envs)

    @property
    def is_rendered(self) -> bool:
        """True where the env renders this camera (a visual ``obs_mode``)."""
        backend = self._env._backend
        return backend is not None and backend.render and self.name in getattr(self._env, "_sensor_rigs", {})

    def _backend(self):
        if not self.is_rendered:
            raise RuntimeError(_NO_RENDER.format(what=f"sensor camera {self.name!r} poses"))
        return self._env._backend

    @property
    def default_local_pose(self) -> torch.Tensor:
        """(7,) configured env-local pose of the camera. Fresh."""
        return torch.from_numpy(self._default.copy())

    @property
    def default_fov(self) -> float:
        """The configured vertical field of view [rad]."""
        return self._fov

    @property
    def local_pose(self) -> torch.Tensor:
        """(num_envs, 7) current env-local pose per env (link frame where ``mounted``), read back
        from the renderer. Fresh."""
        pose = self._backend().camera_pose(self.name)
        if not self.mounted:
            pose[:, :3] -= self._env.scene.env_origins.cpu().numpy()
        return to_device(pose, self._env.device)

    def set_local_pose(self, pose, env_ids: EnvIds = None) -> None:
        """Place the camera of ``env_ids`` at env-local ``pose`` (k, 7) (link frame where
        ``mounted``); quaternions are normalised.

        Raises:
            ValueError: wrong shape, NaN/inf or a zero quaternion; nothing is written."""
        backend = self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        values = per_env_values(pose, len(ids), (7,), "camera pose")
        norms = np.linalg.norm(values[:, 3:], axis=1)
        if len(ids) and norms.min() < 1e-6:
            raise ValueError("camera pose: zero quaternion; nothing was written")
        values[:, 3:] /= norms[:, None]
        if not self.mounted:
            values[:, :3] += self._env.scene.env_origins.cpu().numpy()[ids]
        if len(ids):
            backend.set_camera_pose(self.name, ids, values)

    def set_pose_jitter(self, jitter, env_ids: EnvIds = None) -> None:
        """Place the camera of ``env_ids`` at its configured pose moved by ``jitter`` (k, 6):
        ``[dx, dy, dz]`` [m] added to the position (env-local frame; the link's frame where
        ``mounted``), then ``[rx, ry, rz]`` [rad]
        a rotation vector in the camera's own frame (``rz`` turns it left, ``ry`` tilts it down).
        A zero row restores the configured pose.

        Raises:
            ValueError: wrong shape or NaN/inf; nothing is written. RuntimeError: no rendering."""
        self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        values = per_env_values(jitter, len(ids), (6,), "camera pose jitter").astype(np.float64)
        pose = np.repeat(self._default[None].astype(np.float64), len(ids), axis=0)
        pose[:, :3] += values[:, :3]
        pose[:, 3:] = quat_mul(pose[:, 3:], rotvec_to_quat(values[:, 3:]))
        self.set_local_pose(pose.astype(np.float32), ids)

    @property
    def fov(self) -> torch.Tensor:
        """(num_envs,) vertical field of view [rad] per env, read back from the renderer. Fresh."""
        return to_device(self._backend().camera_fovy(self.name), self._env.device)

    def set_fov(self, fov, env_ids: EnvIds = None) -> None:
        """Set the vertical field of view [rad] of ``env_ids``, (k,) or one value, each in
        ``FOV_RANGE`` (0, 3.1]; the horizontal one follows the aspect ratio, the pose stays.

        Raises:
            ValueError: wrong shape, NaN/inf or out of range; nothing is written. RuntimeError: no rendering."""
        backend = self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        values = per_env_values(fov, len(ids), (), "camera field of view")
        check_range(values, "camera field of view", "rad", low=self.FOV_RANGE[0], high=self.FOV_RANGE[1],
                    low_open=True)
        if len(ids):
            backend.set_camera_fovy(self.name, ids, values)

    @property
    def image_noise(self) -> dict[str, torch.Tensor]:
        """``{"brightness", "contrast", "noise_std"}``: float32 (num_envs,) each, the settings of
        the noise on this camera's RGB pictures (``simulo_envs/envs/image_noise.py``). Fresh."""
        return {k: to_device(v, self._env.device) for k, v in self._noise.settings(self.name).items()}

    NOISE_RANGES = {"brightness": (-1.0, 1.0), "contrast": (0.0, None), "noise_std": (0.0, 1.0)}
    """Valid range of each image-noise setting (fractions of the full range; contrast a factor)."""

    def set_image_noise(self, env_ids: EnvIds = None, *, brightness=None, contrast=None, noise_std=None) -> None:
        """Set the noise on this camera's RGB pictures in ``env_ids``: ``brightness`` in [-1, 1]
        (added), ``contrast`` >= 0 (a factor about mid-grey), ``noise_std`` in [0, 1] (the standard
        deviation of per-pixel Gaussian noise), each (k,) or one value, fractions of the full range;
        None leaves a setting as it is. Only observations change (``image_noise.py``).

        Raises:
            ValueError: wrong shape, NaN/inf or out of range; nothing is written. RuntimeError: no rendering."""
        self._backend()
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        given = {"brightness": brightness, "contrast": contrast, "noise_std": noise_std}
        values = {}
        for name, value in given.items():
            if value is None:
                continue
            low, high = self.NOISE_RANGES[name]
            values[name] = per_env_values(value, len(ids), (), f"image {name}")
            check_range(values[name], f"image {name}", "", low=low, high=high)
        if len(ids) and values:
            self._noise.set(self.name, ids, **values)
