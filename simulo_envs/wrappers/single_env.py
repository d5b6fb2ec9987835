"""``SingleEnvView``: a one-env batch seen as a plain Gymnasium env (numpy, unbatched).

Our envs are batched: even with ``num_envs=1`` they return torch tensors with a leading env
dimension, which Gymnasium's ``check_env``, Stable-Baselines3's ``check_env`` and ``DummyVecEnv``,
``gym.make_vec``'s sync/async modes and every single-env wrapper do not expect. The view
(ManiSkill's ``CPUGymWrapper`` plays this part there) converts at the boundary:

- observations: numpy without the env dimension, each leaf in its space's dtype (float32 state,
  uint8 RGB, float32 depth, int32 segmentation); ``observation_space`` is the env's
  ``single_observation_space``;
- ``reward``: a Python float; ``terminated`` / ``truncated``: Python bools;
- ``info``: the same keys, tensors as numpy without the env dimension (0-d become numpy scalars);
- actions: ``(action_dim,)`` numpy (or anything array-like), ``action_space`` is the env's
  ``single_action_space``;
- ``render()``: uint8 ``(H, W, 3)``;
- ``metadata``: the env's, ``render_fps`` included, with ``render_modes`` limited to the modes
  this env can use (``"sensors"`` needs a visual ``obs_mode``, ``"human"`` a display);
- ``spec``: the task's single-env spec, so ``env.spec.make()`` builds another view.

Seeding is the env's: ``reset(seed=s)`` seeds the episode and ``np_random``. The view never
resets by itself; truncation comes from the env's ``max_episode_steps``, or from Gymnasium's
``TimeLimit`` when Gymnasium built the view (``gym.make_vec(id, num_envs=N,
vectorization_mode="sync")``). Every array returned is a fresh copy.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

__all__ = ["SingleEnvView"]


def _unbatch_obs(value: Any, space: spaces.Space) -> Any:
    """Row 0 of a batched observation as numpy in ``space``'s dtype (nested dicts follow the space)."""
    if isinstance(space, spaces.Dict):
        return {key: _unbatch_obs(value[key], sub) for key, sub in space.spaces.items()}
    return value[0].detach().cpu().numpy().astype(space.dtype, copy=True)


def _unbatch_info(value: Any) -> Any:
    """Tensors -> numpy without the env dimension (0-d: numpy scalars); dicts recursed; others kept."""
    if isinstance(value, torch.Tensor):
        array = value.detach().cpu().numpy()
        if array.ndim >= 1 and array.shape[0] == 1:
            array = array[0]
        return array[()] if array.ndim == 0 else array.copy()
    if isinstance(value, dict):
        return {key: _unbatch_info(sub) for key, sub in value.items()}
    return value


class SingleEnvView(gym.Wrapper):
    """A simulo_envs env with ``num_envs == 1`` as a standard Gymnasium env (see the module docstring).

    Args:
        env: a simulo_envs env (``gym.make(id, num_envs=1, ...)``), possibly under Gymnasium
            wrappers that keep it batched.

    Raises:
        ValueError: the env holds more than one env.

    Example::

        env = SingleEnvView(gym.make("FrankaLift-v1", num_envs=1, obs_mode="rgb"))
        gymnasium.utils.env_checker.check_env(env)        # passes; so does SB3's check_env
        obs, info = env.reset(seed=0)                      # obs["sensor_data"]["base_camera"]["rgb"]: uint8 (128, 128, 3)
    """

    def __init__(self, env: gym.Env):
        base = env.unwrapped
        if getattr(base, "num_envs", None) != 1:
            raise ValueError(f"SingleEnvView needs an env made with num_envs=1, got num_envs={getattr(base, 'num_envs', None)!r}")
        super().__init__(env)
        self.observation_space = base.single_observation_space
        self.action_space = base.single_action_space
        from simulo_envs.envs.viewer import human_render_available

        modes = [m for m in base.metadata.get("render_modes", [])
                 if (m != "sensors" or base._textures) and (m != "human" or human_render_available())]
        self.metadata = {**base.metadata, "render_modes": modes}

    @property
    def spec(self) -> Optional[gym.envs.registration.EnvSpec]:
        """The task's single-env spec (``env.spec.make(...)`` builds another ``SingleEnvView``), or None."""
        from simulo_envs.envs.gym_spec import single_env_spec

        base_spec = self.env.spec
        return None if base_spec is None else single_env_spec(base_spec)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Reset the env (``BaseEnv.reset``: ``seed`` also seeds ``np_random``); numpy ``(obs, info)``."""
        obs, info = self.env.reset(seed=seed, options=options)
        return _unbatch_obs(obs, self.observation_space), _unbatch_info(info)

    def step(self, action):
        """Step with an ``(action_dim,)`` action; returns numpy obs, float reward, bool flags, info.

        Raises:
            ValueError: wrong action shape or a NaN/inf entry (the env's check; nothing is simulated).
        """
        if action is not None and not isinstance(action, torch.Tensor):
            action = np.asarray(action)
        obs, reward, terminated, truncated, info = self.env.step(action)
        return (
            _unbatch_obs(obs, self.observation_space),
            float(reward[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            _unbatch_info(info),
        )

    def render(self):
        """The env's frame without the env dimension: uint8 ``(H, W, 3)``; None without a ``render_mode``."""
        frame = self.env.render()
        if isinstance(frame, torch.Tensor):
            return frame[0].cpu().numpy().copy()
        return frame
