"""Checks of what a task's hooks return, so a mistake in a task of one's own is named where it
is made, not found later deep inside the framework or a training library.

``BaseEnv.step`` computes its reward through ``checked_reward``, which checks the hooks' outputs
on the first step after each build of the scene (construction, each reconfiguration) and only
calls ``get_reward`` on later steps. It checks, against the contract of ``docs/writing_a_task.md``,
``evaluate``'s and the observation's outputs before the reward hook reads them:

- ``evaluate()``: a dict holding ``"success"`` (bool ``(N,)``), and ``"fail"`` (bool ``(N,)``) if
  present; every other tensor has the env dimension first, ``(N, ...)``, as Gymnasium's vector
  wrappers expect of per-env info. A task that keeps ``BaseEnv.evaluate`` (no predicates) is exempt.
- the observation's ``"agent"`` and ``"extra"`` entries (``_get_obs_agent``, ``_get_obs_extra``):
  tensors with the env dimension first;
- the reward of ``reward_mode`` (``compute_dense_reward``, ``compute_normalized_dense_reward``,
  ``compute_sparse_reward``): a floating-point tensor of shape ``(N,)``;
- ``info["reward_terms"]``, where the reward hook puts it: tensors of shape ``(N,)``.

``observation_error`` names the entry behind a failed flattening of the observation (an entry
without the env dimension makes ``torch.cat`` fail before any step runs, at the reset that
construction does).

Every failure is a ``ValueError`` whose message names the task, the hook, the key, the shape it
got and the shape expected.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import torch

__all__ = ["checked_reward", "observation_error", "REWARD_HOOKS"]

REWARD_HOOKS = {"dense": "compute_dense_reward", "normalized_dense": "compute_normalized_dense_reward",
                "sparse": "compute_sparse_reward"}
"""The hook that computes the reward of each ``reward_mode``."""

OBS_HOOKS = {"agent": "_get_obs_agent", "extra": "_get_obs_extra"}
"""The hook behind each entry of the raw observation dict that a task writes."""


def checked_reward(env, info: dict, raw_obs: Any, action: Optional[torch.Tensor]) -> torch.Tensor:
    """``env.get_reward(raw_obs, action, info)``, with ``info`` and ``raw_obs`` checked before the
    reward hook reads them, and the reward after (the module docstring). ``step`` calls it on the
    first step after each build of ``env``'s scene; later steps only compute the reward.

    Raises:
        ValueError: a hook output that breaks its contract (the message names hook, key, shapes).
    """
    task, n = type(env).__name__, env.num_envs
    _check_info(env, task, n, info)
    if isinstance(raw_obs, dict):
        for key, hook in OBS_HOOKS.items():
            for path, value in _leaves(raw_obs.get(key, {}), f"obs[{key!r}]"):
                if _per_env_shape(value, n) is None:
                    raise ValueError(f"{task}.{hook}() entry {path} has shape {_shape(value)}; expected the env "
                                     f"dimension first, ({n}, ...) (one row per env)")
    reward = env.get_reward(raw_obs, action, info)
    hook = REWARD_HOOKS.get(env.reward_mode)
    if hook is not None:
        if not isinstance(reward, torch.Tensor) or tuple(reward.shape) != (n,) or not reward.is_floating_point():
            got = f"shape {_shape(reward)} {reward.dtype}" if isinstance(reward, torch.Tensor) else type(reward).__name__
            raise ValueError(f"{task}.{hook}() returned {got}; expected a float tensor of shape ({n},), "
                             f"one reward per env")
        for path, value in _leaves(info.get("reward_terms", {}), "info['reward_terms']"):
            if tuple(value.shape) != (n,):
                raise ValueError(f"{task}.{hook}() put {path} of shape {_shape(value)}; expected ({n},), "
                                 f"one value per env")
    return reward


def _check_info(env, task: str, n: int, info: dict) -> None:
    evaluate = getattr(env.evaluate, "__func__", env.evaluate)
    if getattr(evaluate, "__qualname__", None) == "BaseEnv.evaluate":   # BaseEnv's own: no predicates
        return
    if "success" not in info:
        keys = sorted(k for k in info if k not in ("elapsed_steps", "reward_terms"))
        raise ValueError(f"{task}.evaluate() returned no 'success' entry (keys: {keys}); expected "
                         f"'success': bool ({n},), the task's success test per env (and 'fail' if it can fail)")
    for key in ("success", "fail"):
        value = info.get(key)
        if key in info and (not isinstance(value, torch.Tensor) or tuple(value.shape) != (n,)
                            or value.dtype != torch.bool):
            dtype = f" {value.dtype}" if isinstance(value, torch.Tensor) else ""
            raise ValueError(f"{task}.evaluate() entry '{key}' has shape {_shape(value)}{dtype}; expected "
                             f"bool ({n},), one flag per env")
    for path, value in _leaves(info, "info"):
        if _per_env_shape(value, n) is None:
            raise ValueError(f"{task}.evaluate() entry {path} has shape {_shape(value)}; expected the env "
                             f"dimension first, ({n}, ...) (one row per env)")


def observation_error(obs: Any, num_envs: Optional[int] = None) -> Optional[ValueError]:
    """The error to raise when an observation dict cannot be flattened: it names the first entry
    whose first dimension is not ``num_envs`` (default: that of the first entry, the agent's),
    and the hook that made it. None when every entry has the same first dimension."""
    leaves = list(_leaves(obs, "obs"))
    if not leaves:
        return None
    n = num_envs if num_envs is not None else (leaves[0][1].shape[0] if leaves[0][1].ndim else None)
    for path, value in leaves:
        if n is None or _per_env_shape(value, n) is None:
            top = path[len("obs['"):].split("'", 1)[0]
            hook = OBS_HOOKS.get(top)
            where = f"{hook}() entry {path}" if hook else f"observation entry {path}"
            return ValueError(f"{where} has shape {_shape(value)}; expected the env dimension first, ({n}, ...) "
                              f"(one row per env)")
    return None


def _leaves(node: Any, path: str) -> Iterator[tuple[str, torch.Tensor]]:
    """``(path, tensor)`` for every tensor leaf of a nested dict, depth first; the path in
    Python's subscript notation (``info['reward_terms']['reach']``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{path}[{key!r}]")
    elif isinstance(node, torch.Tensor):
        yield path, node


def _per_env_shape(value: torch.Tensor, n: int) -> Optional[tuple]:
    """The shape when ``value`` has the env dimension first, else None."""
    return tuple(value.shape) if value.ndim >= 1 and value.shape[0] == n else None


def _shape(value: Any) -> str:
    return str(tuple(value.shape)) if hasattr(value, "shape") else type(value).__name__
