"""The CPU fast path of ``BaseEnv.step``: the task's own step hooks, run on numpy arrays.

At small batches every torch call costs several times what the same numpy call costs (about
5-10 us against 1-2 us on this project's CPUs), and a task's ``evaluate``, reward and
observation make dozens of them per step. A task whose hooks compute with ``self.xp`` alone
(``BaseEnv.xp_hooks``) is written once; on physx_cpu in ``state`` obs mode the framework runs the
same hooks with ``xp`` = numpy on the backend's numpy state (``state_in(numpy)``, the agent's
``xp=numpy`` queries), then hands the outputs back as torch tensors on fresh memory, with the
keys, order, dtypes and shapes of the torch path. ``tests/test_numpy_step.py`` steps every task
of the suite through both paths and compares them.

``step`` takes it while ``_fast_step`` is True (decided at each (re)build by
``_numpy_step_applies``) and no hook is set on the instance (``env.evaluate = ...``: the torch
path honours it).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import torch

from simulo_envs.envs.observations import flatten_obs
from simulo_envs.tensors import all_finite


class NumpyStepMixin:
    """``BaseEnv``'s side of the fast path (module docstring)."""

    # ------------------------------------------------------------------ the state NumpyStepMixin owns
    xp: Any = torch
    """The array module the step hooks compute with: ``torch`` (tensors on ``device``), or
    ``numpy`` while the CPU fast path runs them (only for a class that sets ``xp_hooks``). Hooks
    call its functions (``xp.tanh``, ``xp.where``, ...), read state with ``state_in(xp)`` and
    return arrays of it. Read it, never set it: ``_numpy_outputs`` sets it around the hooks (a
    plain attribute, not a property: hooks read it several times a step)."""

    _numpy_views: dict
    """``id(tensor) -> (tensor, its numpy view)`` remembered by ``as_xp``."""

    # The hooks the fast path runs on numpy (class settings):
    _NUMPY_STEP_HOOKS = ("evaluate", "get_info", "get_obs", "get_reward", "compute_dense_reward",
                         "compute_normalized_dense_reward", "compute_sparse_reward", "_get_obs_state_dict",
                         "_get_obs_agent", "_get_obs_extra", "_flatten_raw_obs", "_terminated")
    _NUMPY_STEP_HOOK_SET = frozenset(_NUMPY_STEP_HOOKS)

    def _init_fast_path(self) -> None:
        """At construction: nothing remembered yet."""
        self._numpy_views = {}

    def as_xp(self, tensor: torch.Tensor):
        """A tensor of the task's own (on ``device``) as an array of ``self.xp``: the tensor itself,
        or on the CPU fast path its numpy view (the same memory, so it follows in-place writes to
        the tensor). Read it, never write it."""
        if self.xp is torch:
            return tensor
        held = self._numpy_views.get(id(tensor))
        if held is not None and held[0] is tensor:
            return held[1]
        return self._numpy_view(tensor)

    def local(self, world):
        """``world`` poses (N, 7) or positions (N, 3), world frame [m], in each env's own frame
        (minus ``env_origins``; env frames are not rotated), of ``self.xp``: a new array."""
        if self.xp is torch:
            return world - (self._origin_poses if world.shape[1] == 7 else self._env_origins)
        positions, poses = self._origins_np
        return world - (poses if world.shape[1] == 7 else positions)

    def _numpy_view(self, tensor: torch.Tensor) -> np.ndarray:
        """The numpy view of a CPU tensor (the same memory), remembered per tensor object: torch's
        ``.numpy()`` costs a few microseconds a call, a lookup a fraction of one."""
        views = self._numpy_views
        held = views.get(id(tensor))
        if held is None or held[0] is not tensor:
            if len(views) >= 64:  # tensors made anew each step: keep no more than a few
                views.clear()
            held = views[id(tensor)] = (tensor, tensor.numpy())
        return held[1]

    def _numpy_step_applies(self) -> bool:
        """True when ``step`` may run the hooks on numpy: the env runs on physx_cpu (numpy state)
        in ``state`` obs mode, the agent reads its proprioception in numpy (``xp=``), and the
        class that last sets ``xp_hooks`` sets it True with no class below it overriding a hook
        (a subclass that changes ``evaluate`` or the reward in torch gets the torch path; so does
        a step while such a hook is set on the instance itself)."""
        cls = type(self)
        owner = next((c for c in cls.__mro__ if "xp_hooks" in c.__dict__), None)
        if owner is None or not owner.__dict__["xp_hooks"]:
            return False
        if self.obs_mode != "state" or self.sim_backend != "physx_cpu":
            return False
        proprioception = getattr(self.agent, "get_proprioception", None)
        if proprioception is not None and "xp" not in inspect.signature(proprioception).parameters:
            return False
        return all(getattr(cls, name) is getattr(owner, name) for name in self._NUMPY_STEP_HOOKS)

    def _numpy_outputs(self, action) -> tuple:
        """``step``'s ``(info, obs, reward, terminated, finite)`` from the hooks run on numpy: every
        array becomes a tensor on its own memory (``torch.from_numpy``, no copy: the hooks'
        results are fresh); ``finite``: True when obs and reward are all finite (``all_finite``;
        False sends the fault check to test the rows)."""
        # get_info, _get_obs_state_dict, _get_obs_agent, get_reward and _terminated (the framework's
        # own: no class changes them on this path, _NUMPY_STEP_HOOKS) are written out here for
        # their common case, as is the conversion of info (_as_tensors): a Python call less each.
        self.xp = np
        try:
            info = self.evaluate()
            info["elapsed_steps"] = self._elapsed_np.copy()  # get_info's numpy branch
            if self.randomization.terms:
                info["privileged"] = self.randomization.privileged_array()
            proprioception = getattr(self.agent, "get_proprioception", None)
            raw_obs = {"agent": proprioception(xp=np) if proprioception is not None else self._get_obs_agent(),
                       "extra": self._get_obs_extra(info)}  # _get_obs_state_dict
            # step's own clipped action is its numpy array already (step.py's _step_action)
            numpy_action = action if type(action) is np.ndarray else self._action_as_numpy(action)
            if self.reward_mode == "normalized_dense":  # get_reward's default mode
                reward = self.compute_normalized_dense_reward(raw_obs, numpy_action, info)
            else:
                reward = self.get_reward(raw_obs, numpy_action, info)
            obs = flatten_obs(raw_obs)
            success = info.get("success")
            if type(success) is np.ndarray and "fail" not in info:  # _terminated's common case
                terminated = success.copy()
            else:
                terminated = self._terminated(info)
        finally:
            self.xp = torch  # the class's value; an instance attribute from here on (cheaper than del)
        finite = all_finite(obs) and all_finite(reward)
        from_numpy, ndarray, tensors = torch.from_numpy, np.ndarray, {}
        for key, value in info.items():  # _as_tensors, its first two levels inline
            if type(value) is ndarray:
                tensors[key] = from_numpy(value)
            elif type(value) is dict:  # e.g. the reward terms
                inner = tensors[key] = {}
                for name, term in value.items():
                    inner[name] = from_numpy(term) if type(term) is ndarray else _as_tensor(term)
            else:
                tensors[key] = _as_tensor(value)
        return tensors, from_numpy(obs), from_numpy(reward), from_numpy(terminated), finite

    def _action_as_numpy(self, action):
        """The step's clipped action as the hooks see it on the fast path: the numpy array it was
        made from, or a numpy view (a dict of them for several agents); None for None."""
        if isinstance(action, torch.Tensor):
            held = self.__dict__.get("_action_view")  # the step's own clipped action (step.py)
            return held[1] if held is not None and held[0] is action else self.as_xp(action)
        if isinstance(action, dict):
            return {key: self._action_as_numpy(value) for key, value in action.items()}
        return action


def _as_tensor(value):
    """One entry of ``info`` that is not a plain numpy array, as ``_as_tensors`` converts it."""
    if isinstance(value, dict):
        return _as_tensors(value)
    return torch.from_numpy(value) if isinstance(value, np.ndarray) else value


def _as_tensors(info: dict) -> dict:
    """``info`` with every numpy array (nested dicts too) as a tensor on the same memory."""
    out = {}
    from_numpy = torch.from_numpy
    for key, value in info.items():
        kind = type(value)
        if kind is np.ndarray:
            out[key] = from_numpy(value)
        elif kind is dict or isinstance(value, dict):
            out[key] = _as_tensors(value)
        elif isinstance(value, np.ndarray):
            out[key] = torch.from_numpy(value)
        else:
            out[key] = value
    return out
