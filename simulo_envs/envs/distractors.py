"""Distractor objects for visual domain randomization: small primitives of random shape, colour,
place and heading on the floor, which the cameras see and nothing else touches.

A distractor slot (``env.visual_distractors["0"]``) is built in every env when a randomization
table names it (``"visual_distractors.<i>.<parameter>"``, ``Randomizer.build``): one body per
shape of ``KINDS``, each kinematic and without collision shapes, so no robot, object or contact
ever meets them: the task's physics, success and reward are those of the scene without them (a
test runs the scripted expert over both). In each env one shape of a slot stands on the floor
where its ``position`` says; the others wait ``PARK_DEPTH`` below the floor, out of every camera
above it. A slot shows nothing until a position is written.

Sizes: every shape spans ``size`` [m] (``BaseEnv.visual_distractor_size``): a cube of edge
``size``, a sphere of diameter ``size``, an upright cylinder ``size`` across and tall.
"""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.authoring import Cuboid, Cylinder, Material, Physics, Pose, Sphere
from simulo_envs.env_ids import EnvIds, normalize_env_ids
from simulo_envs.params_common import check_range, per_env_values
from simulo_envs.prop import Prop

KINDS = ("box", "sphere", "cylinder")
"""The shapes a slot takes, by index (a table draws ``kind`` from ``Choice([0, 1, 2])``)."""
PARK_DEPTH = 1.0
"""How far below the floor [m] the shapes a slot does not show wait (hidden by the floor)."""
DEFAULT_COLOR = (0.5, 0.5, 0.5)
"""RGB of a slot before a colour is written."""


class Distractor:
    """One distractor slot in every env (module docstring); writers take ``env_ids`` (any
    ``normalize_env_ids`` form), validate everything first, then move or paint those envs' bodies only.

    Args:
        env: the ``BaseEnv``, in its scene build (before the scene is attached).
        index: the slot's number (its bodies are ``/World/Distractor<index>/<Kind>``).
        size: the shapes' extent [m] (> 0).
    """

    def __init__(self, env, index: int, size: float):
        self._env = env
        self.index = int(index)
        self.size = float(size)
        park = Pose([0.0, 0.0, -PARK_DEPTH])
        material = Material(color=DEFAULT_COLOR)
        shapes = (Cuboid(f"Distractor{index}Box", (size,) * 3, park, Physics.kinematic(), material, collision=False),
                  Sphere(f"Distractor{index}Sphere", size / 2, park, Physics.kinematic(), material, collision=False),
                  Cylinder(f"Distractor{index}Cylinder", size / 2, size, park, Physics.kinematic(), material,
                           collision=False))
        self.props = tuple(env.scene.add(Prop(shape), at=f"/World/Distractor{index}/{kind.capitalize()}")
                           for shape, kind in zip(shapes, KINDS))
        n = env.num_envs
        self._kind = np.zeros(n, dtype=np.int64)
        self._xy = np.zeros((n, 2))
        self._yaw = np.zeros(n)
        self._placed = np.zeros(n, dtype=bool)

    @property
    def kind(self) -> torch.Tensor:
        """(num_envs,) int64 index into ``KINDS`` of the shape each env shows. Fresh."""
        return torch.from_numpy(self._kind.copy())

    @property
    def position(self) -> torch.Tensor:
        """(num_envs, 2) env-local ``[x, y]`` [m] of the shown shape's centre on the floor. Fresh."""
        return torch.from_numpy(self._xy.astype(np.float32))

    def set_kind(self, kind, env_ids: EnvIds = None) -> None:
        """Show shape ``kind`` (k,) or one int, an index into ``KINDS``, in ``env_ids``.

        Raises:
            ValueError: not a whole index in [0, len(KINDS)) (the message names the shapes);
                nothing is written."""
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        values = per_env_values(kind, len(ids), (), "distractor kind")
        if ((values != np.round(values)) | (values < 0) | (values >= len(KINDS))).any():
            raise ValueError(f"distractor kind must be an index in [0, {len(KINDS)}) "
                             f"({', '.join(f'{i} {k}' for i, k in enumerate(KINDS))}), got {values.tolist()}; "
                             "nothing was written")
        self._kind[ids] = values.astype(np.int64)
        self._place(ids)

    def set_color(self, rgb, env_ids: EnvIds = None) -> None:
        """Paint the slot's shapes RGB (k, 3) in [0, 1] in ``env_ids`` (one row: every listed env).

        Raises:
            ValueError: wrong shape, NaN/inf or a channel outside [0, 1]; nothing is written."""
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        values = per_env_values(rgb, len(ids), (3,), "distractor color")
        check_range(values, "distractor color", "", low=0.0, high=1.0)
        for prop in self.props:
            prop.set_color(values, ids)

    def set_position(self, xy, env_ids: EnvIds = None) -> None:
        """Stand the shown shape on the floor at env-local ``[x, y]`` [m] (k, 2) in ``env_ids``.

        Raises:
            ValueError: wrong shape or NaN/inf; nothing is written."""
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        self._xy[ids] = per_env_values(xy, len(ids), (2,), "distractor position")
        self._placed[ids] = True
        self._place(ids)

    def set_yaw(self, yaw, env_ids: EnvIds = None) -> None:
        """Turn the shown shape by ``yaw`` [rad] (k,) about the vertical in ``env_ids``.

        Raises:
            ValueError: wrong shape or NaN/inf; nothing is written."""
        ids = normalize_env_ids(env_ids, self._env.num_envs)
        self._yaw[ids] = per_env_values(yaw, len(ids), (), "distractor yaw")
        self._place(ids)

    def _place(self, ids: np.ndarray) -> None:
        """Move each shape of ``ids``: the shown one (once placed) onto the floor, the others below it."""
        if not len(ids):
            return
        origins = self._env.scene.env_origins.cpu().numpy()[ids].astype(np.float64)
        shown = np.zeros((len(ids), 7))
        shown[:, :2] = origins[:, :2] + self._xy[ids]
        shown[:, 2] = origins[:, 2] + self.size / 2
        shown[:, 3], shown[:, 6] = np.cos(self._yaw[ids] / 2), np.sin(self._yaw[ids] / 2)
        parked = np.zeros((len(ids), 7))
        parked[:, :3] = origins
        parked[:, 2] -= PARK_DEPTH
        parked[:, 3] = 1.0
        for k, prop in enumerate(self.props):
            show = (self._kind[ids] == k) & self._placed[ids]
            pose = np.where(show[:, None], shown, parked).astype(np.float32)
            prop.set_pose(pose, ids)
