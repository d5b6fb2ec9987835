"""``NumpyView``: a simulo vector env seen through numpy, for CPU RL libraries.

Gymnasium 1.x ships ``NumpyToTorch`` (the other direction) and a generic array-API converter
that needs ``array_api_compat`` and keeps dtypes as they are; CPU libraries want float32 numpy
observations, numpy rewards and bool arrays, which this small wrapper gives.

Conversions: observations -> float32 numpy (bool and integer leaves too, as the state
observation already does); reward -> float32 ``(N,)``; terminated/truncated -> bool ``(N,)``;
info -> the same nested dict with every tensor converted (dtype kept). Actions: numpy (or any
array) -> float32 torch on the env's device. ``render()`` -> a tuple of uint8 ``(H, W, 3)``
frames, one per env (Gymnasium's vector convention, which its ``RecordVideo`` needs). Every
array returned is a fresh copy.

``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", numpy=True)`` builds it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import VectorWrapper

__all__ = ["NumpyView", "to_numpy", "obs_to_numpy"]


def to_numpy(value: Any) -> Any:
    """Tensors (nested in dicts, lists, tuples) -> numpy copies, dtype kept; other leaves unchanged."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    return value


def obs_to_numpy(obs: Any) -> Any:
    """An observation (tensor or nested dict of tensors) -> float32 numpy copies."""
    if isinstance(obs, dict):
        return {k: obs_to_numpy(v) for k, v in obs.items()}
    return obs.detach().to(torch.float32).cpu().numpy().copy()


def _float32_space(space: spaces.Space) -> spaces.Space:
    if isinstance(space, spaces.Dict):
        return spaces.Dict({k: _float32_space(v) for k, v in space.spaces.items()})
    if isinstance(space, spaces.Box) and space.dtype != np.float32:
        return spaces.Box(space.low.astype(np.float32), space.high.astype(np.float32), space.shape, np.float32)
    return space


class NumpyView(VectorWrapper):
    """Numpy in, numpy out, over a ``SimuloVectorEnv`` (or any torch vector env of ours).

    The observation spaces are the wrapped ones with float32 Boxes. Autoreset semantics,
    ``metadata`` and info keys are the wrapped env's; ``final_obs`` is converted like ``obs``.
    """

    def __init__(self, env):
        super().__init__(env)
        self.single_observation_space = _float32_space(env.single_observation_space)
        self.observation_space = _float32_space(env.observation_space)
        self._device = getattr(env, "device", torch.device("cpu"))

    def reset(self, *, seed=None, options=None):
        """``env.reset`` with numpy results."""
        obs, info = self.env.reset(seed=seed, options=options)
        return obs_to_numpy(obs), to_numpy(info)

    def render(self):
        """One uint8 ``(H, W, 3)`` numpy frame per env, as a tuple; None without a ``render_mode``."""
        frames = self.env.render()
        if frames is None:
            return None
        return tuple(frames.detach().cpu().numpy()) if isinstance(frames, torch.Tensor) else tuple(frames)

    def step(self, actions):
        """``env.step`` with a numpy action and numpy results."""
        if not isinstance(actions, torch.Tensor):
            actions = torch.as_tensor(np.asarray(actions, dtype=np.float32), device=self._device)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        if "final_obs" in info:
            info = dict(info)
            final_obs = info.pop("final_obs")
            info.pop("final_observation", None)
            info = to_numpy(info)
            info["final_obs"] = obs_to_numpy(final_obs)
            if "_final_observation" in info:  # ManiSkill's name of the same observations
                info["final_observation"] = info["final_obs"]
        else:
            info = to_numpy(info)
        return (
            obs_to_numpy(obs),
            to_numpy(reward).astype(np.float32, copy=False),
            to_numpy(terminated).astype(bool, copy=False),
            to_numpy(truncated).astype(bool, copy=False),
            info,
        )
