"""``Episode``: one recorded episode in memory (numpy), what the dataset writers take.

Time layout (ManiSkill's trajectory convention): an episode of ``T`` steps holds ``T + 1``
observations and env states (after the reset, then after each step) and ``T`` actions,
rewards and flags (row ``t`` belongs to the step that applied ``actions[t]``). LeRobot's layout
keeps frames ``0 .. T-1`` (observation ``t`` with the action taken from it); the observation
after the last step exists only in the HDF5 format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

Obs = Union[np.ndarray, dict]


@dataclass
class Episode:
    """One episode (see the module docstring).

    Attributes:
        seed: the seed the episode was reset with: ``env.reset(seed=seed)`` on a fresh env of the
            same kwargs gives its initial state exactly.
        obs: float32 ``(T + 1, D)`` (``obs_mode="state"``) or the env's nested observation dict of
            ``(T + 1, ...)`` arrays (images uint8 ``(T + 1, H, W, 3)``).
        actions: float32 ``(T, A)``, the actions the env applied (after its clipping); in a
            recording with action noise (``rollout.run_expert``) the policy's clean actions.
        rewards: float32 ``(T,)`` in the env's reward mode.
        terminated / truncated / success: bool ``(T,)``.
        env_states: ``{"actors": {key: (T + 1, 13)}, "articulations": {key: (T + 1, 13 + 2 dof)}}``
            float32 (``BaseEnv.get_state_dict`` rows) in the env's own frame: positions relative
            to the env origin, i.e. the world frame of a one-env batch; None when not recorded.
        provenance: what reproduces the episode (``simulo_envs.envs.provenance.provenance``:
            software versions, repository commit, the env's settings, ``"seeds": [seed]``), a
            JSON-ready dict written with the episode; None when unknown.
    """

    seed: int
    obs: Obs
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    success: np.ndarray
    env_states: Optional[dict] = None
    provenance: Optional[dict] = None

    @property
    def length(self) -> int:
        """``T``, the number of steps."""
        return int(self.actions.shape[0])

    @property
    def succeeded(self) -> bool:
        """The task's success at the last step (ManiSkill's per-episode ``success``)."""
        return bool(self.success[-1]) if self.length else False

    def state_vector(self) -> np.ndarray:
        """float32 ``(T + 1, D)``: the flat state observation (``obs`` in ``"state"`` mode,
        ``obs["state"]`` in the ``"+state"`` image modes; the ``agent`` then ``extra`` leaves
        flattened in order in the other dict modes, the same columns)."""
        if isinstance(self.obs, np.ndarray):
            return self.obs.astype(np.float32, copy=False)
        if isinstance(self.obs.get("state"), np.ndarray):
            return self.obs["state"].astype(np.float32, copy=False)
        parts = [leaf.reshape(leaf.shape[0], -1).astype(np.float32) for key in ("agent", "extra")
                 for leaf in _leaves(self.obs.get(key, {}))]
        if not parts:
            return np.zeros((self.length + 1, 0), np.float32)
        return np.concatenate(parts, axis=1)

    def rgb(self) -> dict[str, np.ndarray]:
        """Camera name -> uint8 ``(T + 1, H, W, 3)`` RGB images of the observation (empty when none)."""
        if not isinstance(self.obs, dict):
            return {}
        return {cam: tex["rgb"] for cam, tex in self.obs.get("sensor_data", {}).items() if "rgb" in tex}

    def check(self) -> None:
        """Raise ValueError when the arrays disagree on ``T`` or hold the wrong dtypes."""
        steps = self.length
        if self.actions.ndim != 2 or steps < 1:
            raise ValueError(f"episode (seed {self.seed}): actions must be (T >= 1, A), got {self.actions.shape}")
        for name in ("rewards", "terminated", "truncated", "success"):
            value = getattr(self, name)
            if value.shape != (steps,):
                raise ValueError(f"episode (seed {self.seed}): {name} must be ({steps},), got {value.shape}")
        rows = [leaf.shape[0] for leaf in _leaves(self.obs)] if isinstance(self.obs, dict) else [self.obs.shape[0]]
        if self.env_states is not None:
            rows += [leaf.shape[0] for leaf in _leaves(self.env_states)]
        if any(r != steps + 1 for r in rows):
            raise ValueError(f"episode (seed {self.seed}): observations and env states need {steps + 1} rows "
                             f"(T + 1), got {sorted(set(rows))}")


def _leaves(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _leaves(value)
    else:
        yield node
