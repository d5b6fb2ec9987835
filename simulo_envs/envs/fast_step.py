"""The CPU fast path of ``BaseEnv.step``: a task's optional ``_numpy_step`` replaces the torch
hooks (``evaluate``, the reward, the observation) with numpy on physx_cpu in ``state`` obs mode,
where at small batches each torch call costs several times numpy's. ``BaseEnv.step`` takes it
while ``_fast_step`` is True (decided at reconfigure by ``_numpy_step_applies``) and no hook is
set on the instance; ``tests/test_numpy_step.py`` checks both paths give the same outputs."""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.tensors import all_finite


class NumpyStepMixin:
    """``BaseEnv``'s side of the fast path (module docstring)."""

    _numpy_step = None
    """A task may define ``_numpy_step(self) -> (info, obs, reward)``: what ``evaluate`` (then
    ``compute_*_reward``, which may add ``info["reward_terms"]``), the flat ``state`` observation
    (N, D) and the reward of ``reward_mode`` give, as numpy arrays computed on the backend's
    numpy state. On physx_cpu with ``obs_mode="state"`` ``step`` then uses it instead of the torch
    hooks: at small batches each torch call costs several times numpy's (``tasks/franka_lift.py``).
    It must give the hooks' values: a test of the task compares the two paths."""

    _NUMPY_STEP_HOOKS = ("evaluate", "get_info", "get_obs", "get_reward", "compute_dense_reward",
                         "compute_normalized_dense_reward", "compute_sparse_reward", "_get_obs_state_dict",
                         "_get_obs_agent", "_get_obs_extra", "_flatten_raw_obs", "_terminated")
    _NUMPY_STEP_HOOK_SET = frozenset(_NUMPY_STEP_HOOKS)

    def _numpy_step_applies(self) -> bool:
        """True when ``step`` may take ``_numpy_step``: the env runs on physx_cpu in ``state`` obs
        mode, and no class below the one that defines ``_numpy_step`` overrides a hook it stands
        for (a subclass that changes ``evaluate`` or the reward gets the torch path; so does a
        step while such a hook is set on the instance itself)."""
        cls = type(self)
        owner = next((c for c in cls.__mro__ if c.__dict__.get("_numpy_step") is not None), None)
        if owner is None or self.obs_mode != "state" or self.device.type != "cpu":
            return False
        if getattr(self._backend, "_packed_state", None) is None:  # GPU backends hold torch state
            return False
        return all(getattr(cls, name) is getattr(owner, name) for name in self._NUMPY_STEP_HOOKS)

    def _numpy_outputs(self) -> tuple:
        """``step``'s ``(info, obs, reward, terminated, finite)`` from ``_numpy_step``: the same keys,
        order, dtypes and shapes as the torch hooks give, every tensor on fresh memory; ``finite``:
        True when obs and reward are all finite (``all_finite``; False sends the fault check to
        test the rows)."""
        info_np, obs, reward = self._numpy_step()
        finite = all_finite(obs) and all_finite(reward)
        terms = info_np.pop("reward_terms", None)
        info = {key: torch.from_numpy(value) for key, value in info_np.items()}
        info["elapsed_steps"] = self._elapsed_steps.clone()
        self._add_privileged(info)
        if terms is not None:
            info["reward_terms"] = {key: torch.from_numpy(value) for key, value in terms.items()}
        success, fail = info_np.get("success"), info_np.get("fail")
        if success is None and fail is None:
            terminated = np.zeros(self.num_envs, dtype=bool)
        else:
            terminated = success | fail if success is not None and fail is not None else (
                success if fail is None else fail).copy()
        return info, torch.from_numpy(obs), torch.from_numpy(reward), torch.from_numpy(terminated), finite
