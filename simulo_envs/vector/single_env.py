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
- ``spec``: the task's single-env spec (``single_env_spec``), so ``env.spec.make()`` builds
  another view (``make_single_env``).

Seeding is the env's: ``reset(seed=s)`` seeds the episode and ``np_random``. The view never
resets by itself; truncation comes from the env's ``max_episode_steps``, or from Gymnasium's
``TimeLimit`` when Gymnasium built the view (``gym.make_vec(id, num_envs=N,
vectorization_mode="sync")``). Every array returned is a fresh copy.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any, Optional, Union

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec, load_env_creator

from simulo_envs.envs.viewer import human_render_available

__all__ = ["SingleEnvView", "make_single_env", "single_env_spec"]


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
        modes = [m for m in base.metadata.get("render_modes", [])
                 if (m != "sensors" or base._textures) and (m != "human" or human_render_available())]
        self.metadata = {**base.metadata, "render_modes": modes}

    @property
    def spec(self) -> Optional[gym.envs.registration.EnvSpec]:
        """The task's single-env spec (``env.spec.make(...)`` builds another ``SingleEnvView``), or None."""
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


def make_single_env(entry_point: Union[str, Any], **kwargs) -> gym.Env:
    """A ``SingleEnvView`` of a one-env batch of the task at ``entry_point`` (a class or a
    ``"module:Class"`` string); ``kwargs`` go to the task (``num_envs``, if given, must be 1).

    The task's own per-env limit is switched off: ``gym.make`` adds Gymnasium's ``TimeLimit``
    with the spec's (or the given) ``max_episode_steps`` on top of the view, which is right for
    one env. Used as the entry point of ``single_env_spec``.

    Raises:
        ValueError: ``num_envs`` other than 1.
    """
    num_envs = kwargs.pop("num_envs", 1)
    if num_envs != 1:
        raise ValueError(f"a single-env view holds one env; got num_envs={num_envs!r} "
                         "(use gym.make(id, num_envs=N) for a batched env)")
    kwargs.pop("max_episode_steps", None)
    creator = load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
    base = creator(num_envs=1, **kwargs)
    base.max_episode_steps = None
    return SingleEnvView(base)


def single_env_spec(spec: EnvSpec) -> EnvSpec:
    """The spec of ``spec``'s task seen as one Gymnasium env (``SingleEnvView``): same id and
    kwargs, entry point ``make_single_env``, no additional wrappers, and as ``max_episode_steps``
    the limit ``spec`` gives the batched env (its ``kwargs["max_episode_steps"]`` when set, which
    is where ``gym.make`` records it on a made env; -1 or None: no limit). A spec that already
    builds single-env views is returned as a plain copy."""
    entry_point = spec.entry_point
    if not (isinstance(entry_point, partial) and entry_point.func is make_single_env):
        entry_point = partial(make_single_env, entry_point)
    kwargs = copy.deepcopy(spec.kwargs)
    limit = kwargs.pop("max_episode_steps", spec.max_episode_steps)
    return EnvSpec(
        id=spec.id,
        entry_point=entry_point,
        reward_threshold=spec.reward_threshold,
        nondeterministic=spec.nondeterministic,
        max_episode_steps=None if limit == -1 else limit,
        order_enforce=spec.order_enforce,
        disable_env_checker=spec.disable_env_checker,
        kwargs=kwargs,
        additional_wrappers=(),
        vector_entry_point=spec.vector_entry_point,
    )
