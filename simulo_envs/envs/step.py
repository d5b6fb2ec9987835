"""``BaseEnv.step`` (a mixin): one env step and what it returns.

``step`` validates and clips the action, applies it through the agent's controller, advances the
physics ``sim_steps_per_control`` substeps (with the task's control- and simulation-step hooks),
then assembles the outputs from the task's hooks: ``info`` (``get_info``: ``evaluate`` plus the
framework's entries), the observation (``observations.py``), the reward of ``reward_mode``
(``get_reward``), ``terminated`` (success or fail) and ``truncated`` (the per-env time limit).
The per-env step counter that limit reads (``elapsed_steps``) is here too, with its writer.
On physx_cpu in ``state`` obs mode a task's CPU fast path may stand in for the hooks
(``fast_step.py``). Quarantined envs' rows are replaced last (``faults.py``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.envs.actions import clip_action, clip_dict_action
from simulo_envs.envs.hook_checks import checked_reward
from simulo_envs.tensors import as_step_counts


class StepMixin:
    """``step`` and its outputs for ``BaseEnv``, and the per-env step counter with its time limit."""

    # ------------------------------------------------------------------ the state StepMixin owns
    _elapsed_steps: torch.Tensor
    """int32 (N,) on ``device``: steps since each env's last reset (``elapsed_steps``)."""
    _elapsed_np: Optional[np.ndarray]
    """On the CPU, ``_elapsed_steps``'s numpy view (the same memory); None elsewhere."""
    _one: torch.Tensor
    """int32 scalar 1 on ``device`` (the counter's increment off the CPU)."""
    _ones_np: Optional[np.ndarray]
    """On the CPU, int32 (N,) ones: the counter's increment (numpy adds an array of its own dtype
    at about half the cost of a Python int, which it first has to convert); None elsewhere."""
    _on_cpu: bool
    """``device`` is the CPU (read on every step: a bool costs less than ``device.type``)."""
    _limit: torch.Tensor
    """int32 scalar on ``device``: ``max_episode_steps`` (0 for none), compared on the device."""
    _max_episode_steps: Optional[int]
    _action_view: tuple = None
    """``(clipped action tensor, its numpy array)`` of the last CPU step, for the fast path."""
    _hooks_checked_build: int = -1
    """The build (``_reconfig_count``) whose first step checked the task's hooks' outputs."""

    def _init_step_counter(self, max_episode_steps: Optional[int]) -> None:
        """Make the step counter (all zero) and set the time limit (validated as the property's setter)."""
        self._elapsed_steps = torch.zeros(self.num_envs, dtype=torch.int32, device=self.device)
        # Its numpy view (the same memory) on CPU, for step's counting and the fast path's info.
        self._on_cpu = self.device.type == "cpu"
        self._elapsed_np = self._elapsed_steps.numpy() if self._on_cpu else None
        self._ones_np = np.ones(self.num_envs, dtype=np.int32) if self._on_cpu else None
        self._one = torch.tensor(1, dtype=torch.int32, device=self.device)
        self._limit = torch.zeros((), dtype=torch.int32, device=self.device)
        self.max_episode_steps = max_episode_steps

    @property
    def max_episode_steps(self) -> Optional[int]:
        """Per-env time limit [env steps]: env ``i`` is truncated once ``elapsed_steps[i] >=
        max_episode_steps``; None: never. Settable (an int >= 1; None or -1: no limit), counted
        from each env's last reset. Raises ValueError for anything else (nothing changes)."""
        return self._max_episode_steps

    @max_episode_steps.setter
    def max_episode_steps(self, value: Optional[int]) -> None:
        if value is not None and value != -1 and (not _is_int(value) or value < 1):
            raise ValueError(f"max_episode_steps must be an int >= 1, -1 (no limit) or None, got {value!r}")
        self._max_episode_steps = None if value is None or value == -1 else int(value)
        self._limit.fill_(self._max_episode_steps or 0)

    def _restart_step_counts(self, idx: torch.Tensor) -> None:
        """Zero the step counts of the envs ``idx`` (int64 (k,) on ``device``): their reset."""
        self._elapsed_steps[idx] = 0

    def step(self, action):
        """Apply ``action`` to every env and advance ``sim_steps_per_control`` physics steps.

        Args:
            action: ``(N, action_dim)`` (or ``(action_dim,)`` when ``num_envs == 1``), torch or
                numpy; clipped to ``action_space``. None steps physics with the previous targets.

        Returns:
            ``obs``, ``reward`` float32 (N,), ``terminated`` bool (N,), ``truncated`` bool (N,), ``info``.

        Raises:
            ValueError: wrong action shape or a NaN/inf entry; nothing is simulated.
        """
        if self._closed:
            self._require_open()  # raises
        action = self._step_action(action)  # on the CPU: the clipped numpy array itself
        elapsed = self._elapsed_np  # the counter's numpy view on CPU (None elsewhere)
        on_cpu = elapsed is not None
        if on_cpu:  # numpy's in-place add on the same memory costs a fraction of torch's
            elapsed += self._ones_np
        else:
            self._elapsed_steps.add_(self._one)
        randomization = self.randomization
        if randomization.has_interval:
            randomization.interval(self._elapsed_steps)
        self.faults.detect()  # quarantines envs whose physics went bad (faults.py)
        if (self._fast_step and self._hooks_checked_build == self._reconfig_count
                and self.__dict__.keys().isdisjoint(self._NUMPY_STEP_HOOK_SET)):  # _step_outputs' first test
            info, obs, reward, terminated, finite = self._numpy_outputs(action)
        else:
            info, obs, reward, terminated, finite = self._step_outputs(self._action_tensor(action))
        if self._max_episode_steps is None:
            truncated = self._false()
        else:
            truncated = torch.from_numpy(elapsed >= self._max_episode_steps) if on_cpu else self._elapsed_steps >= self._limit
        obs, reward, terminated, truncated = self.faults.quarantine_outputs(obs, reward, terminated, truncated, info,
                                                                            finite)
        self._remember_obs(obs)
        return obs, reward, terminated, truncated, info

    def _step_outputs(self, action) -> tuple:
        """``(info, obs, reward, terminated, finite)`` of the step just simulated, from the task's
        hooks: in torch, or run on numpy by the CPU fast path (``fast_step.py``); ``finite``: True
        when obs and reward are known to be finite, None when not checked yet."""
        # The first step after each build takes the torch path, where the hooks' outputs are checked
        # (hook_checks.py); a hook set on the instance (env.evaluate = ...) is honoured there too.
        checked = self._hooks_checked_build == self._reconfig_count
        if checked and self._fast_step and self.__dict__.keys().isdisjoint(self._NUMPY_STEP_HOOK_SET):
            return self._numpy_outputs(action)
        self._begin_sensor_capture()  # cameras draw while info and the state obs are computed (rendering.py)
        try:
            info = self.get_info()
            raw_obs = self.get_obs(info, unflattened=True)
        finally:
            self._end_sensor_capture()
        if checked:
            reward = self.get_reward(raw_obs, action, info)
        else:  # the first step of a build: the hooks' outputs are checked (hook_checks.py)
            reward = checked_reward(self, info, raw_obs, action)
            self._hooks_checked_build = self._reconfig_count
        return info, self._flatten_raw_obs(raw_obs), reward, self._terminated(info), None

    def _step_action(self, action):
        """Validate and clip ``action``, apply it and advance the physics by one env step (with
        the control- and simulation-step hooks); returns the clipped action: on the CPU a float32
        numpy ``(N, action_dim)`` (what the fast path's hooks get; ``_action_tensor`` makes it a
        tensor for the torch hooks), elsewhere a tensor or a dict of them; None for None.

        Raises:
            ValueError: a bad action; nothing is simulated.
        """
        if action is not None and self._on_cpu and self._dict_action_bounds is None:  # _prepare_action, inline
            action = array = clip_action(action, self.num_envs, self._action_low_np, self._action_high_np)
        else:
            array = None
            action = self._prepare_action(action)
        before_control, after_control, before, after, substeps, to_controller = self._step_hooks
        if before_control is not None:
            before_control()
        if action is not None:  # checked and clipped above: the controller need not test it again
            agent = self.agent
            if (array is not None and to_controller is not None and to_controller[0] is agent
                    and type(agent) is to_controller[1]):  # the same agent, its class not changed since the build
                to_controller[2](array)
            else:
                action = self._action_tensor(action)  # the agent takes a tensor (returned as such, too)
                agent._set_checked_action(action)
        self._backend.step(substeps, before, after)
        if after_control is not None:
            after_control()
        return action

    def _action_tensor(self, action):
        """``_step_action``'s clipped action for the torch hooks: a CPU numpy array as a tensor on
        its memory (remembered with it in ``_action_view``, for the hooks the torch path hands on
        to the fast path); anything else as it is. The fast path takes the array itself (a
        ``torch.from_numpy`` less per step)."""
        if type(action) is not np.ndarray:
            return action
        tensor = torch.from_numpy(action)
        self._action_view = (tensor, action)  # what the fast path's hooks get (fast_step.py)
        return tensor

    def _terminated(self, info: dict) -> torch.Tensor:
        """bool (N,): ``info["success"] | info["fail"]`` (either may be absent), a new array of ``xp``."""
        success, fail = info.get("success"), info.get("fail")
        if success is None and fail is None:
            return self._false()
        if fail is None:
            return success.copy() if type(success) is np.ndarray else _copy(success)
        if success is None:
            return _copy(fail)
        return success | fail

    def _false(self) -> torch.Tensor:
        """bool (N,) all False, of ``xp``."""
        if self.xp is np:
            return np.zeros(self.num_envs, dtype=bool)
        return torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)

    def _zeros(self) -> torch.Tensor:
        """float32 (N,) zeros, of ``xp``."""
        if self.xp is np:
            return np.zeros(self.num_envs, dtype=np.float32)
        return torch.zeros(self.num_envs, device=self.device)

    def _prepare_action(self, action) -> Optional[torch.Tensor]:
        """Validate and clip an action (``clip_action``); returns float32 (N, action_dim) on
        ``self.device``, or None for None. Off the CPU the checks run in torch on the device."""
        if action is None:
            return None
        if self._dict_action_bounds is not None:
            return clip_dict_action(action, self.num_envs, self._dict_action_bounds, self.device)
        on_cpu = self._on_cpu
        if not on_cpu and isinstance(action, torch.Tensor) and not action.is_cpu:
            if action.is_complex() or action.dtype == torch.bool:
                raise ValueError(f"action must be real-valued, got dtype {action.dtype}")
            dim = self._action_low_np.shape[0]
            action = action.detach().to(torch.float32)
            if action.shape == (dim,) and self.num_envs == 1:
                action = action.unsqueeze(0)
            if tuple(action.shape) != (self.num_envs, dim):
                raise ValueError(f"action must have shape ({self.num_envs}, {dim}), got {tuple(action.shape)}")
            if not bool(torch.isfinite(action).all()):
                raise ValueError("action contains NaN or inf; no env was stepped")
            return torch.clamp(action.to(self.device), self._action_low, self._action_high)
        array = clip_action(action, self.num_envs, self._action_low_np, self._action_high_np)
        clipped = torch.from_numpy(array)
        if not on_cpu:
            return clipped.to(self.device)
        self._action_view = (clipped, array)  # what the fast path's hooks get (fast_step.py)
        return clipped

    # ------------------------------------------------------------------ hooks around the physics
    def _before_control_step(self) -> None:
        """Task hook: runs before the action is applied, once per env step."""

    def _after_control_step(self) -> None:
        """Task hook: runs after the last physics substep of an env step."""

    def _before_simulation_step(self) -> None:
        """Task hook: runs before each physics substep (only called when overridden)."""

    def _after_simulation_step(self) -> None:
        """Task hook: runs after each physics substep (only called when overridden)."""

    def _overridden_step_hooks(self) -> tuple:
        """``(before_control, after_control, before_substep, after_substep, substeps,
        to_controller)``, fixed per build: the task's control- and simulation-step hooks, None
        where it keeps the empty default (no Python call per step or substep for those),
        ``sim_steps_per_control``, and on the CPU ``(agent, its class, sink)`` with the agent's
        ``_checked_array_sink()``, what takes the checked action as the numpy array it was made
        from while the agent and its class stay those (None: the agent's ``_set_checked_action``
        takes the tensor)."""
        cls = type(self)

        def bound(name: str):
            return getattr(self, name) if getattr(cls, name) is not getattr(StepMixin, name) else None

        agent = self.agent
        sink = getattr(agent, "_checked_array_sink", None)
        sink = sink() if sink is not None and self._on_cpu else None
        return (bound("_before_control_step"), bound("_after_control_step"), bound("_before_simulation_step"),
                bound("_after_simulation_step"), self.sim_config.sim_steps_per_control,
                None if sink is None else (agent, type(agent), sink))

    # ------------------------------------------------------------------ the per-env step counter
    @property
    def elapsed_steps(self) -> torch.Tensor:
        """int32 (N,) steps since each env's last reset; fresh. Written by ``set_elapsed_steps``."""
        return self._elapsed_steps.clone()

    def set_elapsed_steps(self, steps, env_idx=None) -> None:
        """Set the step counts of the envs ``env_idx`` (None: all) to ``steps``: whole numbers
        ``(len(env_idx),)`` in ``[0, 2**31 - 2]`` (int or float dtype; torch on any device, numpy,
        a list). Written in place, into the counter that ``elapsed_steps`` reads, the next step
        counts on from (the time limit and ``"interval"`` randomization read it) and a shared
        buffer holds (``use_elapsed_steps_buffer``); nothing else changes (no physics, no RNG).
        E.g. rsl_rl's ``init_at_random_ep_len`` spreads the first time-outs by writing random
        counts below the limit.

        Counts are not capped at ``max_episode_steps`` (an env stepped on past its limit without
        a reset holds such a count too): the next step truncates every env whose count it brings
        to the limit or beyond, i.e. those written ``max_episode_steps - 1`` or more.

        Raises:
            TypeError: ``steps`` is not an integer or float array (bool, strings, None), or a bad
                ``env_idx`` type. ValueError: another shape, NaN, inf, a fraction, a negative
                count or one above ``2**31 - 2``; duplicate ids. IndexError: an id out of range.
                Nothing is written then.
        """
        self._require_open()
        ids = normalize_env_ids(env_idx, self.num_envs, "env_idx")
        counts = as_step_counts(steps, len(ids), "steps")
        if len(ids) == self.num_envs and (ids == np.arange(self.num_envs)).all():
            self._elapsed_steps.copy_(torch.from_numpy(counts))
        elif len(ids):
            self._elapsed_steps[torch.from_numpy(ids).to(self.device)] = torch.from_numpy(counts).to(self.device)

    def use_elapsed_steps_buffer(self, buffer: np.ndarray) -> None:
        """Count ``elapsed_steps`` in ``buffer`` from now on: int32 ``(num_envs,)``, C-contiguous,
        writeable, e.g. this env's rows of shared memory that another process reads and writes
        (the sharded env's workers). Today's counts are copied into it; from then on every step,
        reset, truncation check and ``set_elapsed_steps`` reads or writes ``buffer`` itself, and a
        write to it from outside (the sharded env's ``set_elapsed_steps``, in the parent process)
        is what the next step counts from. CPU envs only.

        Raises TypeError (not a numpy array) or ValueError (another dtype, shape or layout, a
        read-only array, or an env not on the CPU); nothing changes then."""
        if not isinstance(buffer, np.ndarray):
            raise TypeError(f"the elapsed_steps buffer must be a numpy array, got {type(buffer).__name__}")
        if self.device.type != "cpu":
            raise ValueError(f"an elapsed_steps buffer needs an env on the CPU, this one is on {self.device}")
        if buffer.dtype != np.int32 or buffer.shape != (self.num_envs,):
            raise ValueError(f"the elapsed_steps buffer must be int32 ({self.num_envs},), "
                             f"got {buffer.dtype} {tuple(buffer.shape)}")
        if not (buffer.flags.c_contiguous and buffer.flags.writeable):
            raise ValueError("the elapsed_steps buffer must be C-contiguous and writeable")
        buffer[:] = self._elapsed_np
        self._elapsed_steps = torch.from_numpy(buffer)  # the tensor and the numpy view share it
        self._elapsed_np = buffer

    # ------------------------------------------------------------------ outputs
    def get_info(self) -> dict:
        """``evaluate()`` plus ``"elapsed_steps"`` (int32 (N,)) and, with a randomization table,
        ``"privileged"`` (float32 (N, D): the randomized values, ``randomization.privileged_names``)."""
        info = self.evaluate()
        if self.xp is torch:
            info["elapsed_steps"] = self._elapsed_steps.clone()
            self.randomization.add_privileged(info)
            return info
        info["elapsed_steps"] = self._elapsed_np.copy()  # numpy throughout (fast_step.py)
        if self.randomization.terms:
            info["privileged"] = self.randomization.privileged_array()
        return info

    def get_reward(self, obs, action, info) -> torch.Tensor:
        """float32 (N,) reward of ``reward_mode``. ``obs`` is the raw observation dict
        (``get_obs(info, unflattened=True)``) in every obs mode."""
        mode = self.reward_mode
        if mode == "dense":
            return self.compute_dense_reward(obs, action, info)
        if mode == "normalized_dense":
            return self.compute_normalized_dense_reward(obs, action, info)
        if mode == "sparse":
            return self.compute_sparse_reward(obs, action, info)
        return self._zeros()


def _is_int(value) -> bool:
    """True for a Python or numpy integer (bools excluded)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _copy(array):
    """A copy of a tensor or numpy array."""
    return array.clone() if isinstance(array, torch.Tensor) else array.copy()
