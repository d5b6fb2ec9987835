"""``ShardedEnv``: one batched env whose N envs step in P worker processes, one core each.

One PhysX CPU system steps on one core, so past a few dozen envs a process runs at the physics
floor; more speed on CPU comes only from more cores. ``ShardedEnv`` splits the N envs into P
contiguous shards (sizes differ by at most one), builds each shard as a ``BaseEnv`` in its own
process (``multiprocessing``, forked from a fork server that imported torch and SAPIEN once:
``workers/start_method.py``; torch on one thread per worker) and steps them
in parallel. Actions, observations, rewards, flags and infos cross through shared memory
(``simulo_envs/workers/worker.py`` declares the layout); nothing is pickled on the step path.

It behaves as the in-process env of N envs, so ``SimuloVectorEnv`` drives it unchanged
(autoreset modes, ``final_obs``/``final_info``, partial resets, metrics) and the SB3, rsl_rl and
recording wrappers work on it:

- env ``k`` is built as env ``k`` of an in-process batch (same grid origin, same clone
  variant) and seeded as it (``reset(seed=s)``: env ``k`` gets ``s + k``), so reset
  observations are identical; steps agree to PhysX's float noise (envs sharing a PhysX system
  couple at about 1e-6, growing in contact), or bit for bit with
  ``sim_config={"isolate_envs": True}``;
- every input (actions, ``env_idx``, seeds, options) is checked here before a worker sees it;
- ``elapsed_steps``/``set_elapsed_steps``, ``render()``/``render_rgb_array()`` (images tiled
  by the recorder as usual), ``get_state``/``set_state`` and their ``_dict`` forms,
  ``call``/``get_attr``/``set_attr`` reach every shard; tensors with the env dimension come back
  concatenated in env order, values equal in every shard come back once, others as a tuple per
  shard.
  Task objects (``agent``, props) stay in the workers: read privileged state from ``info``.

Faults: a worker that raises, or dies (killed, crashed), makes the call raise ``WorkerError``
naming the shard, its envs and pid, with the worker's traceback (for a crash, the one
``faulthandler`` wrote); a worker that does not answer within ``timeout`` seconds does the same.
After a fault every worker is stopped and the env refuses further calls. ``close()`` (also from
``with``, garbage collection, interpreter exit or after Ctrl-C) ends every worker (politely,
then SIGTERM, then SIGKILL) and unlinks every shared-memory segment.

Scripts that create a ``ShardedEnv`` must guard their entry point with
``if __name__ == "__main__":`` (each worker imports the main module, as with the spawn start method).

This module is the API; beside it, ``shard_link.py`` (worker counts, shard bounds, the
processes' resources, requests, answers and faults), ``shard_results.py`` (the shared-memory
fields read back as one batch, per-shard answers combined) and ``worker.py`` (the exchange
layout and the worker loop).
"""

from __future__ import annotations

import os
import pickle
import tempfile
import time
import weakref
from typing import Any, Optional, Union

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector.utils import batch_space

from simulo_envs.agents import REGISTERED_AGENTS
from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.envs.actions import clip_action
from simulo_envs.envs.base_env import episode_seeds
from simulo_envs.envs.env_keywords import check_env_keywords
from simulo_envs.envs.reset_options import check_reset_option_keys
from simulo_envs.tensors import as_step_counts
from simulo_envs.workers.shard_link import (SEGMENT_PREFIX, ShardResources, WorkerError, WorkerLinkMixin,
                                             num_workers_arg, resolve_num_workers, shard_bounds)
from simulo_envs.workers.shard_results import ShardFieldsMixin, combine, leaf_items, map_leaves, note, rows_of
from simulo_envs.workers.start_method import worker_context
from simulo_envs.workers.worker import Field, worker_main

__all__ = ["ShardedEnv", "WorkerError", "SEGMENT_PREFIX", "num_workers_arg", "resolve_num_workers", "shard_bounds"]


class ShardedEnv(ShardFieldsMixin, WorkerLinkMixin, gym.Env):
    """N envs of ``env_cls`` in ``num_workers`` worker processes, as one batched env (see the
    module docstring).

    Args:
        env_cls: a ``BaseEnv`` subclass (a registered task class).
        num_envs: N >= 1.
        num_workers: P, ``1 <= P <= N``, or ``"auto"`` (the usable cores).
        env_kwargs: keywords for ``env_cls`` (``obs_mode``, ``control_mode``, ``sim_config``, ...),
            the same in every worker.
        timeout: seconds a worker may take to answer one call before ``WorkerError``.
        start_timeout: seconds the workers may take to build their envs.

    Raises:
        ValueError: bad ``num_envs``/``num_workers``; a non-CPU ``sim_backend``; a keyword
            ``env_cls`` does not take (before any worker starts).
        NotImplementedError: several robots (a ``Dict`` action space). Errors of the
            env's own construction (bad ``obs_mode``, ...) are raised as the env raises them.
        WorkerError: a worker died or timed out while starting.
    """

    def __init__(self, env_cls: type, num_envs: int, num_workers: Union[int, str] = "auto",
                 env_kwargs: Optional[dict] = None, timeout: float = 120.0, start_timeout: float = 600.0):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        env_kwargs = dict(env_kwargs or {})
        check_env_keywords(env_cls, {"num_envs": num_envs, **env_kwargs})   # here, not in every worker
        if str(env_kwargs.get("sim_backend", "auto")).startswith("physx_cuda"):
            raise ValueError("worker processes run CPU envs (physx_cpu); a GPU backend steps every env in one process")
        uids = env_kwargs.get("robot_uids") or getattr(env_cls, "default_robot_uids", None)
        if isinstance(uids, tuple) and len(uids) > 1:
            raise NotImplementedError(f"worker processes exchange one robot's Box actions; robot_uids={uids!r} "
                                      "gives a Dict action space (several robots): use num_workers=1")
        for name, value in (("timeout", timeout), ("start_timeout", start_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be a number of seconds > 0, got {value!r}")
        self.env_cls = env_cls
        self._env_kwargs = env_kwargs
        self.num_envs = int(num_envs)
        self.num_workers = resolve_num_workers(num_workers, self.num_envs)
        self.bounds = shard_bounds(self.num_envs, self.num_workers)
        self.timeout = float(timeout)
        self.device = torch.device("cpu")
        self._fault: Optional[str] = None
        self._busy = False
        self._fields: dict[tuple, np.ndarray] = {}
        self._info_paths: list[tuple] = []
        self._res = ShardResources()
        self._finalizer = weakref.finalize(self, self._res.shutdown)
        self._start(env_cls, env_kwargs, start_timeout)

    # ------------------------------------------------------------------ start-up
    def _start(self, env_cls: type, env_kwargs: dict, start_timeout: float) -> None:
        ctx = worker_context()
        res = self._res
        for s, (start, stop) in enumerate(self.bounds):
            parent, child = ctx.Pipe(duplex=True)
            fd, fault_path = tempfile.mkstemp(prefix=f"simulo_shard{s}_", suffix=".log")
            os.close(fd)
            res.fault_paths.append(fault_path)
            process = ctx.Process(target=worker_main, name=f"simulo-shard-{s}", daemon=True,
                                  args=(s, start, stop, self.num_envs, env_cls, env_kwargs, child, fault_path,
                                        self.num_workers, dict(os.environ)))
            process.start()
            child.close()
            res.processes.append(process)
            res.conns.append(parent)
        try:
            described = [self._ready(s, start_timeout) for s in range(self.num_workers)]
        except BaseException:
            self.close()
            raise
        first = described[0]
        if any((d["obs"], d["attrs"]["single_action_space"]) != (first["obs"], first["attrs"]["single_action_space"])
               for d in described):
            self.close()
            raise RuntimeError("the worker envs disagree on their observation or action layout")
        if not isinstance(first["attrs"]["single_action_space"], gym.spaces.Box):
            self.close()
            raise NotImplementedError("worker processes exchange Box actions; this env's action space is "
                                      f"{first['attrs']['single_action_space']} (several robots): use num_workers=1")
        for name, value in first["attrs"].items():
            setattr(self, name, value)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._low = self.single_action_space.low.astype(np.float32)
        self._high = self.single_action_space.high.astype(np.float32)
        dim = self._low.shape[0]
        info = {f.path: f for d in described for f in d["info"]}  # union, in first-seen order
        fixed = [Field(("action",), (dim,), "<f4"), Field(("reset_mask",), (), "|b1"),
                 Field(("elapsed_buffer",), (), "<i4"), Field(("reward",), (), "<f4"),
                 Field(("terminated",), (), "|b1"), Field(("truncated",), (), "|b1")]
        self._add_fields(fixed + first["obs"] + list(info.values()))
        self._elapsed_steps = torch.from_numpy(self._fields[("elapsed_buffer",)])

    def _ready(self, shard: int, timeout: float) -> dict:
        reply = self._receive(shard, time.monotonic() + timeout, "start-up")
        if reply[0] == "raise":
            exc = reply[1]
            note(exc, f"(raised while building shard {shard}, envs {self._env_range(shard)}; its traceback:\n{reply[2]})")
            raise exc
        return reply[1]

    # ------------------------------------------------------------------ the gym API
    def step(self, action):
        """Step every env (``BaseEnv.step``'s contract); the action is checked and clipped here.

        Raises:
            ValueError: a wrong shape, dtype or a NaN/inf entry; no worker is asked.
            WorkerError: a worker raised, died or timed out.
        """
        self._require_usable()
        if action is None:
            command = b"0"
        else:
            clip_action(action, self.num_envs, self._low, self._high, out=self._fields[("action",)])
            command = b"s"
        replies = self._exchange([command] * self.num_workers, "step")
        present = self._present(replies)
        extras = self._merge_extras(replies)
        reward, terminated, truncated = (self._take(p, extras) for p in (("reward",), ("terminated",), ("truncated",)))
        return self._read_obs(extras), reward, terminated, truncated, self._read_info(present, extras)

    def reset(self, *, seed: Union[None, int, list[int]] = None, options: Optional[dict] = None):
        """Reset all envs or ``options["env_idx"]`` (``BaseEnv.reset``'s contract; env ``k``
        gets the seed an in-process env gives env ``k``). Everything is validated here first.

        Raises:
            TypeError/ValueError/IndexError: bad ``options``, ``env_idx`` or ``seed``.
            WorkerError: a worker raised, died or timed out.
        """
        self._require_usable()
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset: options must be a dict or None, got {type(options).__name__}")
        options = dict(options or {})
        check_reset_option_keys(self.env_cls, options)
        env_idx = normalize_env_ids(options.pop("env_idx", None), self.num_envs, "options['env_idx']")
        reconfigure = options.pop("reconfigure", False)
        if not isinstance(reconfigure, (bool, np.bool_)):
            raise TypeError(f"reset: options['reconfigure'] must be a bool, got {reconfigure!r}")
        if reconfigure:
            env_idx = np.arange(self.num_envs)
        seeds = episode_seeds(seed, env_idx)
        if seeds:  # Gymnasium's np_random, seeded as the in-process env seeds its own
            scalar = isinstance(seed, (int, np.integer)) or (isinstance(seed, torch.Tensor) and seed.ndim == 0)
            super().reset(seed=int(seed) if scalar else seeds[0])
        if seeds is None and not options and not reconfigure:
            mask = self._fields[("reset_mask",)]
            mask[:] = False
            mask[env_idx] = True
            messages = [b"r"] * self.num_workers
        else:
            restore = options.pop("reset_to_env_states", None)
            if restore is not None and not (isinstance(restore, dict) and "env_states" in restore):
                raise KeyError("reset: options['reset_to_env_states'] must be a dict with 'env_states' "
                               "(a get_state_dict() dict or a get_state() tensor) and optionally 'obs'")
            messages = []
            for start, stop in self.bounds:
                mine = np.flatnonzero((env_idx >= start) & (env_idx < stop))
                shard_seeds = None if seeds is None else [seeds[k] for k in mine.tolist()]
                shard_options = {**options, "reconfigure": bool(reconfigure)}
                if restore is not None:  # row k of every leaf belongs to env env_idx[k]
                    shard_options["reset_to_env_states"] = map_leaves(
                        restore, lambda leaf: rows_of(leaf, mine, len(env_idx), "reset_to_env_states"))
                messages.append(pickle.dumps(("reset", env_idx[mine] - start, shard_seeds, shard_options)))
        replies = self._exchange(messages, "reset")
        present = self._present(replies)
        extras = self._merge_extras(replies)
        info = self._read_info(present, extras)
        info["reconfigure"] = bool(reconfigure)
        return self._read_obs(extras), info

    def render(self):
        """``render_mode="rgb_array"``/``"sensors"``: uint8 (N, H, W, 3) images of every env; None
        without a render mode."""
        if self.render_mode is None:
            return None
        return self._render("render")

    def render_rgb_array(self, camera_name: Optional[str] = None) -> torch.Tensor:
        """``BaseEnv.render_rgb_array`` of every env: uint8 (N, H, W, 3)."""
        if camera_name is not None:
            return self.call("render_rgb_array", camera_name)
        return self._render("render_rgb_array")

    def render_sensors(self) -> torch.Tensor:
        """``BaseEnv.render_sensors`` of every env: uint8 (N, H, W_total, 3)."""
        return self._render("render_sensors")

    def _render(self, method: str) -> torch.Tensor:
        self._require_usable()
        replies = self._exchange([b"R" + method.encode()] * self.num_workers, "render")
        return self._take(("render", method), self._merge_extras(replies))

    def close(self) -> None:
        """End every worker and release the shared memory; calling it again does nothing."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """True once the workers are gone (closed, or stopped after a fault)."""
        return not self._finalizer.alive

    # ------------------------------------------------------------------ state and attributes
    @property
    def agent_class(self) -> type:
        """The class of the robot agent every shard builds (from ``robot_uids`` or the task's
        ``default_robot_uids``; the agents live in the workers). Its class-level description
        (``controller_configs``, ``supported_control_modes``) serves scripted policies here.

        Raises:
            ValueError: the uid names no registered agent.
        """
        uid = self._env_kwargs.get("robot_uids") or getattr(self.env_cls, "default_robot_uids", None)
        if isinstance(uid, type):
            return uid
        if uid not in REGISTERED_AGENTS:
            raise ValueError(f"unknown agent {uid!r}; registered agents: {sorted(REGISTERED_AGENTS)}")
        return REGISTERED_AGENTS[uid]

    @property
    def sim_freq(self) -> int:
        """Physics rate [Hz]."""
        return self.sim_config.sim_freq

    @property
    def control_freq(self) -> int:
        """Env step rate [Hz]."""
        return self.sim_config.control_freq

    @property
    def control_timestep(self) -> float:
        """Seconds of simulated time per env step."""
        return 1.0 / self.sim_config.control_freq

    @property
    def elapsed_steps(self) -> torch.Tensor:
        """int32 (N,) steps since each env's last reset; fresh. Written by ``set_elapsed_steps``."""
        return self._elapsed_steps.clone()

    def set_elapsed_steps(self, steps, env_idx=None) -> None:
        """``BaseEnv.set_elapsed_steps``: the counts of the envs ``env_idx`` (None: all), whole
        numbers ``(len(env_idx),)`` in ``[0, 2**31 - 2]``, not capped at ``max_episode_steps``.
        Checked here, then written into the shared memory that every worker's env counts in
        (``BaseEnv.use_elapsed_steps_buffer``), so the workers' next step counts on from them; no
        worker is asked anything.

        Raises:
            TypeError/ValueError/IndexError: as ``BaseEnv.set_elapsed_steps``; nothing is written
                in any worker then. RuntimeError: the env is closed or stopped after a fault.
        """
        self._require_usable()
        ids = normalize_env_ids(env_idx, self.num_envs, "env_idx")
        counts = as_step_counts(steps, len(ids), "steps")
        self._fields[("elapsed_buffer",)][ids] = counts

    def get_state(self) -> torch.Tensor:
        """``BaseEnv.get_state`` of every env, float32 (N, D)."""
        return self.call("get_state")

    def get_state_dict(self) -> dict:
        """``BaseEnv.get_state_dict`` of every env."""
        return self.call("get_state_dict")

    def set_state(self, state, env_idx=None) -> None:
        """``BaseEnv.set_state``: rows of ``state`` go to ``env_idx`` (None: all), each to its shard.

        Raises:
            ValueError: ``state`` has not one row per listed env. IndexError/TypeError: bad ``env_idx``.
        """
        self._set_rows("set_state", torch.as_tensor(state), env_idx)

    def set_state_dict(self, state: dict, env_idx=None) -> None:
        """``BaseEnv.set_state_dict``: rows of every leaf go to ``env_idx`` (None: all)."""
        self._set_rows("set_state_dict", state, env_idx)

    def _set_rows(self, method: str, rows: Any, env_idx) -> None:
        self._require_usable()
        ids = normalize_env_ids(env_idx, self.num_envs, "env_idx")
        for path, leaf in leaf_items(rows):
            leaf = leaf.detach().cpu().numpy() if isinstance(leaf, torch.Tensor) else np.asarray(leaf)
            if leaf.ndim != 2 or len(leaf) != len(ids):
                raise ValueError(f"{method}: need a (len(env_idx) = {len(ids)}, D) array, got shape {leaf.shape} at {path}")
            if leaf.dtype.kind not in "fiub" or not np.isfinite(leaf).all():
                raise ValueError(f"{method}: non-numeric, NaN or inf values at {path}; nothing was written")
        messages = []
        for start, stop in self.bounds:
            mine = np.flatnonzero((ids >= start) & (ids < stop))
            part = map_leaves(rows, lambda leaf: np.asarray(leaf)[mine])
            messages.append(pickle.dumps(("call", method, (part,), {"env_idx": ids[mine] - start})))
        self._queries(messages, method)

    def call(self, name: str, *args, **kwargs) -> Any:
        """Call method ``name`` (or read attribute ``name``) of every shard's env with the same
        arguments; results combined (module docstring). The worker's exception is re-raised."""
        return self._queries([pickle.dumps(("call", name, args, kwargs))] * self.num_workers, name)

    def get_attr(self, name: str) -> Any:
        """Attribute ``name`` of every shard's env, combined (module docstring)."""
        return self._queries([pickle.dumps(("get_attr", name))] * self.num_workers, name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` to ``value`` on every shard's env."""
        self._queries([pickle.dumps(("set_attr", name, value))] * self.num_workers, name)

    def worker_stats(self) -> list[dict]:
        """Per shard: ``pid``, ``busy_s`` (seconds its worker spent serving requests so far) and
        ``requests`` (how many). A step's wall time minus its busiest worker's share is the cost
        of the exchange (``scripts/benchmark.py --workers``)."""
        self._require_usable()
        return [reply[1] for reply in self._exchange([pickle.dumps(("stats",))] * self.num_workers, "stats",
                                                     pickled_replies=True)]

    def instructions(self) -> list[str]:
        """Each env's instruction for its current episode (``BaseEnv.instructions``): the shards'
        lists joined in env order (num_envs str)."""
        message = pickle.dumps(("call", "instructions", (), {}))
        return [text for part in self._replies([message] * self.num_workers, "instructions") for text in part]

    def _queries(self, messages: list, what: str) -> Any:
        return combine(self._replies(messages, what), [stop - start for start, stop in self.bounds])

    def _replies(self, messages: list, what: str) -> list:
        """Each shard's answer to its message, in shard order; a worker's exception is re-raised."""
        self._require_usable()
        replies = self._exchange(messages, what, pickled_replies=True)
        for s, reply in enumerate(replies):
            if reply[0] == "raise":
                exc = reply[1]
                note(exc, f"(raised by the env of shard {s}, envs {self._env_range(s)}; its traceback:\n{reply[2]})")
                raise exc
        return [reply[1] for reply in replies]
