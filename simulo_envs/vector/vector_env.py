"""``SimuloVectorEnv``: a native Gymnasium 1.x ``VectorEnv`` over one of our batched envs.

Our envs are already batched (``BaseEnv`` steps ``num_envs`` copies together and returns torch
tensors with the env dimension first); they never reset by themselves. This wrapper adds what a
Gymnasium vector env promises on top: ``single_observation_space`` / ``single_action_space``,
``metadata["autoreset_mode"]``, and autoreset by a *partial reset* of exactly the envs that are
done (``env.reset(options={"env_idx": done_ids})``), which costs O(len(done_ids)).

Autoreset modes (Gymnasium 1.x, ``gymnasium.vector.AutoresetMode``):

- ``SAME_STEP`` (default): when env ``i`` terminates or truncates in ``step``, it is reset inside
  that same ``step``. The returned ``obs[i]`` is the *new* episode's first observation, and
  ``reward[i]``, ``terminated[i]``, ``truncated[i]`` belong to the finished episode's last step.
  ``info["final_obs"]`` is a ``(num_envs, ...)`` copy of the observations *before* the reset and
  ``info["final_info"]`` a copy of the step's info dict (same layout as ``info``); the masks
  ``info["_final_obs"]`` and ``info["_final_info"]`` (bool ``(num_envs,)``) say which rows are final.
  These keys are present only on steps where some env finished. Every tensor in them is a
  fresh copy, so later steps never change them. ``info["final_observation"]`` and its mask
  ``info["_final_observation"]`` hold the same tensors under ManiSkill's names. In ``info`` itself, the rows of the reset envs
  hold the reset's values for every key the reset reports (e.g. ``elapsed_steps`` is 0).
- ``NEXT_STEP``: ``step`` returns the finished episode's last observation; on the *next*
  ``step`` the envs that were done are reset (their actions are ignored) and that step returns
  their first observation with reward 0, ``terminated`` and ``truncated`` False.

Options (ManiSkill's ``ManiSkillVectorEnv`` has the same):

- ``ignore_terminations``: envs are reset on truncation only and ``terminated`` is returned all
  False (the task's success/fail are still in ``info``). Episodes then last exactly
  ``max_episode_steps``, the usual way to train on tasks whose success should be held.
- ``record_metrics``: ``info["episode"]`` holds per-env episode statistics after every step:
  ``return`` (float32, sum of rewards), ``length`` (int32, steps), ``success_once`` /
  ``success_at_end`` (bool; and ``fail_once`` / ``fail_at_end`` where the task reports ``fail``),
  and under ManiSkill's names ``episode_len`` (= ``length``) and ``reward`` (float32, the mean
  reward per step: ``return / length``, 0 before the first step).
  For an env that finished in this step the row is the finished episode's statistics (also in
  ``info["final_info"]["episode"]``), otherwise the running episode's. Statistics restart on
  every reset of an env, explicit or automatic.

Everything returned is a torch tensor on the env's device (``terminated``/``truncated`` are bool
``(num_envs,)`` tensors, never Python bools). Actions may be torch or numpy ``(num_envs, action_dim)``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Optional, Union

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.vector.numpy_view import NumpyView
from simulo_envs.workers.sharded import ShardedEnv, resolve_num_workers

__all__ = ["SimuloVectorEnv", "make_vector_env", "vector_entry_point"]


def _clone(value: Any) -> Any:
    """A deep copy of a (nested dict of) tensors; other leaves are returned as they are."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _merge_rows(into: dict, source: dict, mask: torch.Tensor, num_envs: int) -> None:
    """Write ``source[key][mask]`` into ``into[key]`` for every batched key both dicts hold, in place."""
    for key, value in source.items():
        if key not in into:
            continue
        target = into[key]
        if isinstance(value, dict) and isinstance(target, dict):
            _merge_rows(target, value, mask, num_envs)
        elif (isinstance(value, torch.Tensor) and isinstance(target, torch.Tensor) and value.ndim >= 1
              and value.shape == target.shape and value.shape[0] == num_envs):
            target[mask] = value[mask].to(target.dtype)


def _batch_info(info: dict, num_envs: int, device, path: str = "info") -> None:
    """Make every value of ``info`` per env, in place: tensors with the env dimension first stay,
    Python / numpy scalars and 0-d tensors are repeated per env, nested dicts are walked.

    Raises:
        ValueError: a value that cannot be per env (wrong leading dimension, a list, a string...),
            named by its key path.
    """
    for key, value in info.items():
        if isinstance(value, torch.Tensor):
            if value.ndim >= 1 and value.shape[0] == num_envs:
                continue
            if value.ndim == 0:
                info[key] = value.to(device).expand(num_envs).clone()
                continue
        elif isinstance(value, dict):
            _batch_info(value, num_envs, device, f"{path}[{key!r}]")
            continue
        elif isinstance(value, (bool, int, float, np.bool_, np.number)):
            info[key] = torch.full((num_envs,), value.item() if isinstance(value, np.generic) else value, device=device)
            continue
        shape = tuple(value.shape) if hasattr(value, "shape") else type(value).__name__
        raise ValueError(f"{path}[{key!r}] is not per env: every info value of a vector env has the env "
                         f"dimension first (num_envs={num_envs}), got {shape}")


def _select_rows(obs: Any, mask: torch.Tensor, source: Any) -> Any:
    """``obs`` with the rows in ``mask`` replaced by ``source``'s (tensor or nested dict); ``obs`` is modified."""
    if isinstance(obs, dict):
        for key in obs:
            obs[key] = _select_rows(obs[key], mask, source[key])
        return obs
    obs[mask] = source[mask]
    return obs


class SimuloVectorEnv(VectorEnv):
    """Gymnasium ``VectorEnv`` over a simulo_envs env (see the module docstring for the semantics).

    Args:
        env: a simulo_envs env (a ``BaseEnv``), possibly under Gymnasium wrappers; it must not
            autoreset by itself. Its ``num_envs`` is this vector env's ``num_envs``.
        autoreset_mode: ``AutoresetMode.SAME_STEP`` (default), ``AutoresetMode.NEXT_STEP``, or
            their string values ``"SameStep"`` / ``"NextStep"``.
        ignore_terminations: reset only on truncation; ``terminated`` is returned all False.
        record_metrics: add ``info["episode"]`` (return, length, success_once, success_at_end).

    Raises:
        ValueError: an unknown ``autoreset_mode`` (``AutoresetMode.DISABLED`` is not offered: use
            the env itself, which never resets on its own).
    """

    def __init__(
        self,
        env: gym.Env,
        autoreset_mode: Union[str, AutoresetMode] = AutoresetMode.SAME_STEP,
        ignore_terminations: bool = False,
        record_metrics: bool = False,
    ):
        mode = AutoresetMode(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(f"autoreset_mode must be SAME_STEP or NEXT_STEP, got {autoreset_mode!r}")
        self.env = env
        base = env.unwrapped
        self.base_env = base
        self._sharded = isinstance(base, ShardedEnv)
        self.num_envs = base.num_envs
        self.device = base.device
        self.single_observation_space = base.single_observation_space
        self.single_action_space = base.single_action_space
        self.observation_space = base.observation_space
        self.action_space = base.action_space
        self.render_mode = getattr(env, "render_mode", None)
        self.spec = getattr(base, "spec", None)
        self.metadata = {**getattr(env, "metadata", {}), "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.ignore_terminations = bool(ignore_terminations)
        self.record_metrics = bool(record_metrics)
        self.max_episode_steps = base.max_episode_steps
        n, dev = self.num_envs, self.device
        self._autoreset_envs = torch.zeros(n, dtype=torch.bool, device=dev)  # NEXT_STEP: reset on next step
        self._returns = torch.zeros(n, dtype=torch.float32, device=dev)
        self._lengths = torch.zeros(n, dtype=torch.int32, device=dev)
        self._success_once = torch.zeros(n, dtype=torch.bool, device=dev)
        self._fail_once = torch.zeros(n, dtype=torch.bool, device=dev)

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: Optional[Union[int, list[int]]] = None, options: Optional[dict] = None):
        """Reset all envs, or some: ``options["env_idx"]`` (any ``env_ids`` form) or Gymnasium's
        ``options["reset_mask"]`` (bool ``(num_envs,)``), as ``BaseEnv.reset``.

        Returns ``(obs, info)`` for all envs; every info value is per env, and
        ``info["reconfigure"]`` (bool ``(num_envs,)``) comes with its mask ``info["_reconfigure"]``
        (the envs reset). The episode statistics and pending NEXT_STEP autoresets of the reset
        envs are cleared.

        Raises:
            ValueError: both ``env_idx`` and ``reset_mask``; otherwise as ``BaseEnv.reset``.
        """
        if options is not None and "reset_mask" in options:
            if "env_idx" in options:
                raise ValueError("reset: give options['env_idx'] or options['reset_mask'], not both")
            options = {("env_idx" if k == "reset_mask" else k): v for k, v in options.items()}
        obs, info = self.env.reset(seed=seed, options=options)
        ids = (options or {}).get("env_idx")
        mask = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        if ids is not None:
            mask = torch.zeros_like(mask)
            mask[self._ids_tensor(ids)] = True
        info["reconfigure"] = mask & bool(info.get("reconfigure", False))
        info["_reconfigure"] = mask
        _batch_info(info, self.num_envs, self.device)
        self._clear_metrics(mask)
        self._autoreset_envs &= ~mask
        return obs, info

    def _ids_tensor(self, ids) -> torch.Tensor:
        return torch.from_numpy(normalize_env_ids(ids, self.num_envs, "options['env_idx']")).to(self.device)

    # ------------------------------------------------------------------ step
    def step(self, actions):
        """Step every env; autoreset the done ones as ``metadata["autoreset_mode"]`` says.

        Returns:
            ``obs``, ``reward`` float32 (N,), ``terminated`` bool (N,), ``truncated`` bool (N,), ``info``.
        """
        obs, reward, terminated, truncated, info = self.env.step(actions)
        if not isinstance(terminated, torch.Tensor) or not isinstance(truncated, torch.Tensor):
            raise TypeError(
                "the wrapped env returned a Python bool for terminated/truncated: a gymnasium wrapper such as "
                "TimeLimit counts one step counter for all envs. Do not wrap a batched env in TimeLimit; "
                "set the per-env limit with gym.make(id, num_envs=N, max_episode_steps=k) or "
                "gym.make_vec(id, num_envs=N, vectorization_mode='vector_entry_point', max_episode_steps=k)")
        terminated = torch.as_tensor(terminated, device=self.device).to(torch.bool).reshape(self.num_envs)
        truncated = torch.as_tensor(truncated, device=self.device).to(torch.bool).reshape(self.num_envs)
        _batch_info(info, self.num_envs, self.device)
        if self.ignore_terminations:
            terminated = torch.zeros_like(terminated)
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            return self._finish_next_step(obs, reward, terminated, truncated, info)
        return self._finish_same_step(obs, reward, terminated, truncated, info)

    def _finish_same_step(self, obs, reward, terminated, truncated, info):
        self._update_metrics(reward, info, None)
        done = terminated | truncated
        if bool(done.any()):
            info["final_obs"] = info["final_observation"] = _clone(obs)  # Gymnasium's and ManiSkill's names
            info["_final_obs"] = info["_final_observation"] = done.clone()
            info["final_info"] = _clone(info_without_finals(info))
            info["_final_info"] = done.clone()
            reset_obs, reset_info = self.env.reset(options={"env_idx": done})
            obs = _select_rows(obs, done, reset_obs)
            _merge_rows(info, reset_info, done, self.num_envs)
            self._clear_metrics(done)
        return obs, reward, terminated, truncated, info

    def _finish_next_step(self, obs, reward, terminated, truncated, info):
        pending = self._autoreset_envs
        if bool(pending.any()):
            # These envs finished last step: the step just taken is discarded by the reset.
            reset_obs, reset_info = self.env.reset(options={"env_idx": pending})
            obs = _select_rows(obs, pending, reset_obs)
            _merge_rows(info, reset_info, pending, self.num_envs)
            reward = reward.masked_fill(pending, 0.0)
            terminated = terminated & ~pending
            truncated = truncated & ~pending
            self._clear_metrics(pending)
        self._update_metrics(reward, info, pending)
        self._autoreset_envs = terminated | truncated
        return obs, reward, terminated, truncated, info

    # ------------------------------------------------------------------ metrics
    def _update_metrics(self, reward: torch.Tensor, info: dict, skip: Optional[torch.Tensor]) -> None:
        if not self.record_metrics:
            return
        live = torch.ones_like(self._success_once) if skip is None else ~skip
        self._returns += torch.as_tensor(reward, device=self.device).to(torch.float32) * live
        self._lengths += live.to(torch.int32)
        episode = {"return": self._returns.clone(), "length": self._lengths.clone()}
        episode["episode_len"] = episode["length"].clone()  # ManiSkill's names
        episode["reward"] = episode["return"] / episode["length"].clamp_min(1)
        if "success" in info:
            self._success_once |= info["success"] & live
            episode["success_once"] = self._success_once.clone()
            episode["success_at_end"] = info["success"].clone()
        if "fail" in info:
            self._fail_once |= info["fail"] & live
            episode["fail_once"] = self._fail_once.clone()
            episode["fail_at_end"] = info["fail"].clone()
        info["episode"] = episode

    def _clear_metrics(self, mask: torch.Tensor) -> None:
        self._returns[mask] = 0.0
        self._lengths[mask] = 0
        self._success_once[mask] = False
        self._fail_once[mask] = False

    # ------------------------------------------------------------------ the rest of the API
    def render(self):
        """The wrapped env's ``render()``."""
        return self.env.render()

    def close_extras(self, **kwargs) -> None:
        """Close the wrapped env."""
        self.env.close()

    # One batched env stands for all num_envs, in this process or in worker shards (``ShardedEnv``,
    # which runs these on every shard and joins the results: per-env tensors concatenated in env
    # order, values equal in every shard once, others as a tuple per shard).
    def call(self, name: str, *args, **kwargs) -> Any:
        """Call method ``name`` of the env with these arguments (or read attribute ``name``)."""
        if self._sharded:
            return self.base_env.call(name, *args, **kwargs)
        value = self.env.get_wrapper_attr(name)
        return value(*args, **kwargs) if callable(value) else value

    def get_attr(self, name: str) -> Any:
        """Attribute ``name`` of the env."""
        if self._sharded:
            return self.base_env.get_attr(name)
        return self.env.get_wrapper_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` of the env (of every shard's env) to ``value``."""
        if self._sharded:
            self.base_env.set_attr(name, value)
        else:
            self.env.set_wrapper_attr(name, value)

    @property
    def _env(self) -> gym.Env:
        """The wrapped env (ManiSkill's ``ManiSkillVectorEnv._env``; ours is ``env``)."""
        return self.env

    def __getattr__(self, name: str):
        # Reach task attributes (``agent``, ``elapsed_steps``, ...) of the wrapped env.
        if name.startswith("_") or name in ("env",):
            raise AttributeError(name)
        return self.env.get_wrapper_attr(name)


def info_without_finals(info: dict) -> dict:
    """``info`` without the ``final_*`` keys this wrapper adds (so final_info does not nest itself)."""
    finals = ("final_obs", "_final_obs", "final_observation", "_final_observation", "final_info", "_final_info")
    return {k: v for k, v in info.items() if k not in finals}


_VECTOR_OPTIONS = ("autoreset_mode", "ignore_terminations", "record_metrics")


def make_vector_env(env_id_or_cls, num_envs: int = 1, numpy: bool = False, env_wrapper=None, **kwargs) -> VectorEnv:
    """Build a ``SimuloVectorEnv`` over a registered env: the ``vector_entry_point`` of our ids.

    ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", **kwargs)`` calls it
    with ``num_envs`` and every keyword (Gymnasium forwards only plain keywords to a vector entry
    point). ``autoreset_mode``, ``ignore_terminations`` and ``record_metrics`` go to the wrapper;
    ``num_workers`` (default 1: the env in this process; ``P > 1`` or ``"auto"``, the usable cores:
    a ``ShardedEnv`` stepping N / P envs per worker process) and ``worker_timeout`` (seconds, see
    ``ShardedEnv``) choose where the envs run; everything else (``obs_mode``,
    ``max_episode_steps``, ...) goes to the env.

    Args:
        env_id_or_cls: a registered id (``"FrankaLift-v1"``) or an env class.
        numpy: True returns the vector env under ``NumpyView``: numpy in and out, as Gymnasium's
            own vector wrappers (``gymnasium.wrappers.vector``) expect.
        env_wrapper: a callable taking the batched env and returning it wrapped (a Gymnasium
            wrapper that must not autoreset), applied below the vector env; envs in this process only.

    Raises:
        KeyError: an unknown id. ValueError: a bad ``num_workers``, or ``env_wrapper`` with worker
        processes.
    """
    if isinstance(env_id_or_cls, str):
        if env_id_or_cls not in REGISTERED:
            raise KeyError(f"unknown env id {env_id_or_cls!r}; registered: {sorted(REGISTERED)}")
        cls = REGISTERED[env_id_or_cls]
    else:
        cls = env_id_or_cls
    wrapper_kwargs = {k: kwargs.pop(k) for k in _VECTOR_OPTIONS if k in kwargs}
    num_workers = kwargs.pop("num_workers", 1)
    timeout = kwargs.pop("worker_timeout", None)
    if resolve_num_workers(num_workers, num_envs) == 1:
        env = cls(num_envs=num_envs, **kwargs)
        try:
            venv = SimuloVectorEnv(env if env_wrapper is None else env_wrapper(env), **wrapper_kwargs)
        except BaseException:
            env.close()
            raise
    elif env_wrapper is not None:
        raise ValueError("env_wrapper wraps envs in this process: use num_workers=1")
    else:
        extra = {} if timeout is None else {"timeout": timeout}
        venv = SimuloVectorEnv(ShardedEnv(cls, num_envs, num_workers, kwargs, **extra), **wrapper_kwargs)
    if numpy:
        return NumpyView(venv)
    return venv


def vector_entry_point(env_id: str):
    """The callable to register as ``vector_entry_point`` of ``env_id``."""
    return partial(make_vector_env, env_id)
