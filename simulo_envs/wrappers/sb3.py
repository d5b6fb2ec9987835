"""``SB3VecEnv``: our batched envs as a Stable-Baselines3 ``VecEnv`` (stable-baselines3 2.x).

SB3 expects (``stable_baselines3/common/vec_env/base_vec_env.py``): ``reset()`` returning the
observations only; ``step_async(actions)`` + ``step_wait()`` returning numpy
``(obs, rewards, dones, infos)`` with done envs already reset (same-step autoreset) and, per env,
a dict in ``infos`` holding, where that env is done, ``terminal_observation`` (the finished
episode's last observation) and ``TimeLimit.truncated`` (True for a time-out, so SB3 bootstraps
from ``terminal_observation``), and ``episode = {"r": return, "l": length, "t": seconds}`` (what
``Monitor`` writes; SB3's logger reads ``ep_rew_mean`` / ``ep_len_mean`` from it) and
``is_success`` (SB3's ``success_rate``; ``success_at_end`` beside it: whether the success still
held at the episode's last step). ``metadata`` is the env's (``render_modes``,
``render_fps``), so ``VecVideoRecorder`` writes clips at the env's frame rate.

This adapter runs a ``SimuloVectorEnv`` (same-step autoreset by partial reset, ``record_metrics``)
and converts at the boundary: observations and ``terminal_observation`` float32 numpy, rewards
float32, dones bool. An explicit ``reset()`` resets every env and restarts their episode
statistics. The env may sit under other Gymnasium wrappers (e.g. a video recorder): every call
goes through the outermost wrapper.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.vec_env import VecEnv

from simulo_envs.vector.numpy_view import _float32_space, obs_to_numpy
from simulo_envs.vector.vector_env import SimuloVectorEnv

__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """Stable-Baselines3 ``VecEnv`` over a simulo_envs env.

    Args:
        env: a simulo_envs env (``gym.make(id, num_envs=N)``, optionally under Gymnasium
            wrappers) or a ``SimuloVectorEnv`` in SAME_STEP mode.
        ignore_terminations: reset only on time-outs (``SimuloVectorEnv`` option).

    Raises:
        ValueError: a ``SimuloVectorEnv`` in NEXT_STEP mode (SB3 assumes same-step autoreset).
    """

    def __init__(self, env, ignore_terminations: bool = False):
        if isinstance(env, SimuloVectorEnv):
            if env.autoreset_mode is not gym.vector.AutoresetMode.SAME_STEP:
                raise ValueError("SB3 needs same-step autoreset: use SimuloVectorEnv(env) (the default mode)")
            if ignore_terminations and not env.ignore_terminations:
                raise ValueError("pass ignore_terminations to the SimuloVectorEnv you wrap, not to SB3VecEnv")
            venv = env
        else:
            venv = SimuloVectorEnv(env, ignore_terminations=ignore_terminations)
        venv.record_metrics = True
        self.venv = venv
        self.device = venv.device
        self._actions: Optional[torch.Tensor] = None
        self._episode_start = np.full(venv.num_envs, time.perf_counter())
        super().__init__(venv.num_envs, _float32_space(venv.single_observation_space), venv.single_action_space)
        # The env's render_modes and render_fps: SB3's VecVideoRecorder reads the frame rate here
        # (and would write 30 fps clips without it).
        self.metadata = {k: v for k, v in venv.metadata.items() if k != "autoreset_mode"}

    # ------------------------------------------------------------------ reset / step
    def reset(self) -> Any:
        """Reset every env (with the seeds of ``seed()``, if any); returns float32 numpy observations."""
        seeds = None if all(s is None for s in self._seeds) else [int(s) for s in self._seeds]
        options = self._options[0] if self._options and self._options[0] else None
        obs, info = self.venv.reset(seed=seeds, options=options)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        self._episode_start[:] = time.perf_counter()
        return self.observations_to_numpy(obs)

    def observations_to_numpy(self, obs: Any) -> Any:
        """The env's observations (a tensor or nested dict of tensors, ``(N, ...)``) as SB3 gets
        them: float32 numpy copies. A subclass may give another layout (pixel SAC's Dict)."""
        return obs_to_numpy(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions ``(num_envs, action_dim)`` for ``step_wait``."""
        self._actions = torch.as_tensor(np.asarray(actions, dtype=np.float32), device=self.device)

    def step_wait(self):
        """Step every env; returns ``(obs float32, rewards float32 (N,), dones bool (N,), infos)``."""
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        dones = (terminated | truncated).cpu().numpy()
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            now = time.perf_counter()
            final_obs = self.observations_to_numpy(info["final_obs"])
            episode = {k: v.cpu().numpy() for k, v in info["final_info"]["episode"].items()}
            timeouts = (truncated & ~terminated).cpu().numpy()
            for i in np.flatnonzero(dones).tolist():
                entry = infos[i]
                entry["terminal_observation"] = _row(final_obs, i)
                entry["TimeLimit.truncated"] = bool(timeouts[i])
                entry["episode"] = {"r": float(episode["return"][i]), "l": int(episode["length"][i]),
                                    "t": round(now - self._episode_start[i], 6)}
                if "success_once" in episode:
                    entry["is_success"] = bool(episode["success_once"][i])
                    entry["success_at_end"] = bool(episode["success_at_end"][i])
                self._episode_start[i] = now
        return self.observations_to_numpy(obs), reward.to(torch.float32).cpu().numpy(), dones, infos

    def close(self) -> None:
        """Close the env."""
        self.venv.close()

    # ------------------------------------------------------------------ attribute access
    # One batched env stands for all num_envs: getters return its value once per index;
    # set_attr and env_method act on the whole batch, so they refuse a subset of indices.
    @property
    def unwrapped(self):
        """The simulo_envs env under every wrapper."""
        return self.venv.unwrapped

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """The batched env's ``attr_name``, repeated once per index."""
        value = self.venv.env.get_wrapper_attr(attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Set ``attr_name`` on the batched env. Raises ValueError for a subset of ``indices``."""
        self._require_all(indices, "set_attr")
        self.venv.env.set_wrapper_attr(attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        """Call ``method_name`` once on the batched env; the result is repeated per index.

        Raises:
            ValueError: a subset of ``indices`` (one batched env cannot call a method for some envs;
                for a partial reset use ``env.reset(options={"env_idx": ...})`` on the simulo_envs env).
        """
        self._require_all(indices, "env_method")
        result = self.venv.env.get_wrapper_attr(method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def _require_all(self, indices, what: str) -> None:
        if indices is not None and sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(f"SB3VecEnv.{what}: the {self.num_envs} envs are one batched env; "
                             f"indices must be None or all envs, got {indices!r}")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices=None) -> list[bool]:
        """Whether a ``wrapper_class`` sits anywhere under this adapter, once per index."""
        env, found = self.venv.env, False
        while isinstance(env, gym.Wrapper):
            found = found or isinstance(env, wrapper_class)
            env = env.env
        return [found for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """One uint8 (H, W, 3) image per env from the human render camera (the env made with
        ``render_mode="rgb_array"``); ``None`` per env otherwise."""
        base = self.venv.unwrapped
        if getattr(base, "render_mode", None) != "rgb_array":
            return [None for _ in range(self.num_envs)]
        return list(base.render_rgb_array().cpu().numpy())


def _row(obs: Any, i: int) -> Any:
    if isinstance(obs, dict):
        return {k: _row(v, i) for k, v in obs.items()}
    return obs[i].copy()
