"""Worker processes of the sharded env: the shared-memory exchange layout and the worker loop.

Layout. Every array the parent and its workers exchange lives in shared memory
(``multiprocessing.shared_memory``), one array per *field*, holding all N envs' rows in global
env order. Shard ``s`` owns envs ``[start_s, stop_s)`` and touches only those rows, so the
parent reads whole batches without concatenating anything. The fields:

    path                    per-env shape  dtype    written by
    ("action",)             (A,)           float32  parent: clipped actions of the next step
    ("reset_mask",)         ()             bool     parent: the envs of a plain partial reset
    ("elapsed_buffer",)     ()             int32    the worker env itself: it *is* the env's
                                                    step counter (``BaseEnv.use_elapsed_steps_buffer``);
                                                    parent: ``ShardedEnv.set_elapsed_steps``, between calls
    ("reward",)             ()             float32  worker, on step
    ("terminated",)         ()             bool     worker, on step
    ("truncated",)          ()             bool     worker, on step
    ("obs", *keys)          leaf shape     leaf's   worker, on step and reset (one per leaf)
    ("info", *keys)         leaf shape     leaf's   worker, on step and reset (one per leaf)
    ("render", method)      (H, W, 3)      uint8    worker, on render

The first segment holds what is known once the worker envs are built (actions, counters, flags,
observation leaves, the leaves of the reset info). An info leaf that first appears later (a
task's reward terms, added at the first step) or a rendered image travels once through the pipe;
the parent then adds a segment with a field for it, so from the next call on it too is
exchanged in shared memory. Values that cannot live in a field (not a tensor with the shard's
env rows) always travel through the pipe.

Protocol: one duplex ``multiprocessing`` pipe per worker. The step path uses raw bytes only:
``b"s"`` step with the actions in ``("action",)``, ``b"0"`` step(None), ``b"r"`` partial reset
of the envs in ``("reset_mask",)``, ``b"R" + method`` render. Other requests are pickled tuples:
``("reset", env_idx, seeds, options)``, ``("call", name, args, kwargs)``, ``("get_attr", name)``,
``("set_attr", name, value)``, ``("attach", segment, fields)``, ``("stats",)``. Replies: ``b"k"`` + a bitmap of
the info fields this call filled; a pickled ``("k", bitmap, extras)`` when some outputs went
through the pipe; ``("value", x)`` for call/get_attr/set_attr; ``("raise", exception, text)``
when one of those (or the env's construction) raised; ``("error", traceback)`` when a step,
reset or render raised. ``b"c"`` asks the worker to close its env and exit.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import os
import pickle
import signal
import time
import traceback
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Any, Iterator, Optional

import numpy as np
import torch

from simulo_envs.workers.start_method import inherit_environment

_ALIGN = 64
PICKLED = b"\x80"  # first byte of a pickle (protocol >= 2); raw commands never start with it


@dataclass(frozen=True)
class Field:
    """One exchanged array: ``path`` names it, ``shape`` and ``dtype`` describe one env's row,
    ``offset`` is its byte offset in its segment."""

    path: tuple
    shape: tuple
    dtype: str
    offset: int = 0


def place(fields: list[Field], num_envs: int) -> tuple[list[Field], int]:
    """Give each field an offset (64-byte aligned) in a segment of ``num_envs`` rows; returns
    the placed fields and the segment size in bytes."""
    placed, offset = [], 0
    for f in fields:
        placed.append(dataclasses.replace(f, offset=offset))
        size = num_envs * int(np.prod(f.shape, dtype=np.int64)) * np.dtype(f.dtype).itemsize
        offset += -(-max(size, 1) // _ALIGN) * _ALIGN
    return placed, max(offset, _ALIGN)


def field_array(buf, field: Field, num_envs: int) -> np.ndarray:
    """The ``(num_envs, *shape)`` array of ``field`` on the segment buffer ``buf``."""
    return np.ndarray((num_envs, *field.shape), dtype=np.dtype(field.dtype), buffer=buf, offset=field.offset)


def leaves(tree: Any, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """``(path, leaf)`` for every leaf of a nested dict, depth first in key order."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from leaves(value, prefix + (key,))
    else:
        yield prefix, tree


def field_for(path: tuple, value: Any, rows: int):
    """The ``Field`` (offset 0) a value can be exchanged in, or None: a tensor or array whose
    first dimension is the shard's env count."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == rows and value.dtype != object:
        return Field(tuple(path), tuple(value.shape[1:]), value.dtype.str)
    return None


def to_wire(value: Any) -> Any:
    """Tensors (in dicts, lists, tuples) -> numpy arrays, for pickling through the pipe."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_wire(v) for v in value)
    return value


def describe(env) -> dict:
    """What the parent needs from a freshly built worker env: spaces, modes, the leaves of its
    observation and of its reset info."""
    info = env.get_info()
    obs = env.get_obs(info)
    rows = env.num_envs
    attrs = {name: getattr(env, name, None) for name in
             ("obs_mode", "reward_mode", "control_mode", "render_mode", "max_episode_steps", "sim_config",
              "sim_backend", "metadata", "single_observation_space", "single_action_space")}
    obs_fields = [field_for(("obs",) + p, v, rows) for p, v in leaves(obs)]
    if any(f is None for f in obs_fields):
        raise TypeError("every observation leaf must be a tensor with the env dimension first")
    info_fields = [f for f in (field_for(("info",) + p, v, rows) for p, v in leaves(info)) if f is not None]
    return {"attrs": attrs, "obs": obs_fields, "info": info_fields, "device": str(env.device)}


def shard_class(env_cls: type, start: int, total: int) -> type:
    """``env_cls`` building envs ``[start, start + num_envs)`` of a batch of ``total``: their
    grid origins, clone variants and seeds (``BaseEnv._first_env``) are those of the full batch,
    so env ``k`` of the sharded env is built and seeded exactly like env ``k`` of an in-process
    env of ``total`` envs."""

    def _make_scene(self):
        from simulo_envs.cloner.grid import grid_transforms
        from simulo_envs.scene import Scene

        spacing = 0.0 if self.sim_config.isolate_envs else self.sim_config.env_spacing
        origins, _ = grid_transforms(total, spacing)
        build_cfg = self._clone_cfg_for_build()  # a rebuild's re-sampled variants, as in-process
        clone_cfg = dataclasses.replace(build_cfg, clone_strategy=_Slice(build_cfg, start, total))
        return Scene(self.num_envs, spacing, self.device, clone_cfg=clone_cfg,
                     env_origins=origins[start:start + self.num_envs])

    return type(env_cls.__name__, (env_cls,), {"_make_scene": _make_scene, "_first_env": start,
                                               "__module__": env_cls.__module__})


class _Slice:
    """A clone strategy: rows ``[start, start + n)`` of what the configured strategy assigns to
    ``total`` envs (the "random" strategy drawing from its seeded generator as usual)."""

    def __init__(self, clone_cfg, start: int, total: int):
        import functools

        from simulo_envs.cloner import plan

        strategy = clone_cfg.clone_strategy
        strategy = plan._STRATEGIES[strategy] if isinstance(strategy, str) else strategy
        if strategy is plan.random:
            strategy = functools.partial(plan.random, generator=torch.Generator().manual_seed(clone_cfg.seed))
        self.strategy, self.start, self.total = strategy, start, total

    def __call__(self, combos, num_clones, device="cpu"):
        return self.strategy(combos, self.total, device)[self.start:self.start + num_clones]


def worker_main(shard: int, start: int, stop: int, total: int, env_cls: type, env_kwargs: dict, conn,
                fault_path: str, num_workers: int = 1, environ: Optional[dict] = None) -> None:
    """Entry point of worker process ``shard`` of ``num_workers``: build envs ``[start, stop)``,
    then serve requests until the parent says close or goes away. ``environ``: the parent's
    environment variables when it started the worker (``inherit_environment``)."""
    if environ is not None:
        inherit_environment(environ)
    for number in (signal.SIGINT, signal.SIGTERM):   # stopping belongs to the parent, which closes us
        signal.signal(number, signal.SIG_IGN)
    fault_file = open(fault_path, "w")
    faulthandler.enable(fault_file)  # a crash leaves its Python traceback for the parent's error
    torch.set_num_threads(1)
    share_render_threads(num_workers, os.environ)
    try:
        env = shard_class(env_cls, start, total)(num_envs=stop - start, **env_kwargs)
        _batch_scheduling()  # after the env is built: the threads it started keep the default policy
        conn.send(("ready", describe(env)))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        conn.send(_raised(exc))
        return
    try:
        _Worker(env, conn, start, stop, total).serve()
    finally:
        env.close()


RENDER_THREADS = "LP_NUM_THREADS"
"""The environment variable setting how many drawing threads Mesa's lavapipe (software Vulkan)
starts in a process (llvmpipe's ``LP_NUM_THREADS``; default one per core; 0: it draws on the
thread that executes the command buffers). Other Vulkan drivers ignore it."""


def share_render_threads(num_workers: int, environ) -> None:
    """Give each of ``num_workers`` worker processes its share of the cores for drawing: sets
    ``environ[RENDER_THREADS]`` to ``cores // num_workers`` when that is 2 or more, else to 0
    (lavapipe then draws on its queue thread, which does the vertex work anyway, with no hand-off
    to drawing threads). A value the user set is left alone. Call it before the process makes its
    first render system.

    Why: lavapipe's default is one drawing thread per core in every process, so P workers start
    P times as many drawing threads as there are cores, and each picture's drawing threads wait
    for each other. 16 FrankaLift-v1 envs at 128x128 rgb over 2 workers on 2 cores, side by side
    with the in-process env in one run: 1.85x its images/s with no drawing thread per worker,
    1.65x with one, 1.60x with lavapipe's two (``docs/cameras.md``).
    """
    if RENDER_THREADS in environ:
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity outside Linux
        cores = os.cpu_count() or 1
    share = cores // max(1, int(num_workers))
    environ[RENDER_THREADS] = str(share if share >= 2 else 0)


def _batch_scheduling() -> None:
    """Put this worker's main thread under Linux's ``SCHED_BATCH`` policy (``sched(7)``): a
    CPU-bound thread whose wake-ups do not preempt the running task. Without it, each request
    the parent writes wakes a worker that at once preempts the parent on its core, so the parent
    reaches the next worker's pipe only after the scheduler hands the core back: measured here,
    0.46 ms per pipe write (most of the exchange cost per step) against 0.02 ms under
    ``SCHED_BATCH``. Called once the env is built, so the threads the env started (lavapipe's
    queue and drawing threads) keep the default policy: under ``SCHED_BATCH`` each of their
    hand-offs within a picture waits for the running task's time slice to end (16 envs over 2
    workers, 128x128 rgb, side by side with the in-process env: 1.34x its images/s with every
    thread batch, 1.60x with the main thread only). Elsewhere (no such policy, or not
    permitted) the worker keeps the default policy."""
    if hasattr(os, "SCHED_BATCH"):
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        except OSError:
            pass


def _raised(exc: BaseException) -> tuple:
    text = traceback.format_exc()
    try:
        pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - an unpicklable exception travels as text only
        exc = RuntimeError(f"{type(exc).__name__}: {exc}")
    return ("raise", exc, text)


class _Worker:
    """The request loop of one worker (see the module docstring for the protocol)."""

    def __init__(self, env, conn, start: int, stop: int, total: int):
        self.env, self.conn = env, conn
        self.start, self.stop, self.total = start, stop, total
        self.views: dict[tuple, np.ndarray] = {}
        self.info_index: dict[tuple, int] = {}
        self.segments: list = []
        self.busy_s, self.requests = 0.0, 0  # time spent serving requests (for ShardedEnv.worker_stats)

    def serve(self) -> None:
        conn = self.conn
        while True:
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):
                return  # the parent is gone
            if message == b"c":
                return
            begin = time.perf_counter()
            try:
                reply = self.handle(message)
            except BaseException:  # noqa: BLE001 - reported to the parent, which stops every worker
                reply = pickle.dumps(("error", traceback.format_exc()))
            self.busy_s += time.perf_counter() - begin
            self.requests += 1
            conn.send_bytes(reply)

    def handle(self, message: bytes) -> bytes:
        env = self.env
        if message[:1] == PICKLED:
            return self.handle_pickled(pickle.loads(message))
        kind = message[:1]
        if kind in (b"s", b"0"):
            action = None if kind == b"0" else torch.from_numpy(self.views[("action",)].copy())
            obs, reward, terminated, truncated, info = env.step(action)
            return self.emit({("obs",) + p: v for p, v in leaves(obs)}, info,
                             {("reward",): reward, ("terminated",): terminated, ("truncated",): truncated})
        if kind == b"r":
            ids = np.flatnonzero(self.views[("reset_mask",)])
            obs, info = env.reset(options={"env_idx": ids})
            info.pop("reconfigure", None)  # the parent knows it
            return self.emit({("obs",) + p: v for p, v in leaves(obs)}, info, {})
        if kind == b"R":
            method = message[1:].decode()
            return self.emit({}, {}, {("render", method): getattr(env, method)()})
        raise ValueError(f"unknown request {message[:16]!r}")

    def handle_pickled(self, request: tuple) -> bytes:
        env, kind = self.env, request[0]
        if kind == "reset":
            _, ids, seeds, options = request
            obs, info = env.reset(seed=seeds, options={**options, "env_idx": ids})
            info.pop("reconfigure", None)
            return self.emit({("obs",) + p: v for p, v in leaves(obs)}, info, {})
        if kind == "attach":
            self.attach(request[1], request[2])
            return b"k"
        if kind == "stats":
            return pickle.dumps(("value", {"pid": os.getpid(), "busy_s": self.busy_s, "requests": self.requests}))
        try:
            if kind == "call":
                value = getattr(env, request[1])
                value = value(*request[2], **request[3]) if callable(value) else value
            elif kind == "get_attr":
                value = getattr(env, request[1])
            elif kind == "set_attr":
                value = setattr(env, request[1], request[2])
            else:
                raise ValueError(f"unknown request {kind!r}")
            return pickle.dumps(("value", to_wire(value)))
        except Exception as exc:  # noqa: BLE001 - the parent re-raises it; the env stays usable
            return pickle.dumps(_raised(exc))

    def attach(self, name: str, fields: list[Field]) -> None:
        """Map segment ``name`` and take views of this shard's rows of its ``fields``."""
        segment = shared_memory.SharedMemory(name=name)
        self.segments.append(segment)
        for f in fields:
            view = field_array(segment.buf, f, self.total)[self.start:self.stop]
            self.views[f.path] = view
            if f.path[0] == "info":
                self.info_index[f.path] = len(self.info_index)
            if f.path == ("elapsed_buffer",):
                # The env's step counter becomes a view on shared memory: the parent reads it
                # (elapsed_steps) and may write it (set_elapsed_steps) between calls.
                self.env.use_elapsed_steps_buffer(view)

    def emit(self, outputs: dict, info: dict, flags: dict) -> bytes:
        """Write outputs into this shard's rows; what does not fit a field goes in the reply."""
        present = np.zeros(len(self.info_index), dtype=bool)
        extras = {}
        items = list(outputs.items()) + list(flags.items()) + [(("info",) + p, v) for p, v in leaves(info)]
        for path, value in items:
            view = self.views.get(path)
            array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value
            if view is not None and isinstance(array, np.ndarray) and array.shape == view.shape and array.dtype == view.dtype:
                view[...] = array
                if path[0] == "info":
                    present[self.info_index[path]] = True
            else:
                extras[path] = to_wire(array)
        bitmap = np.packbits(present).tobytes()
        if extras:
            return pickle.dumps(("k", bitmap, extras))
        return b"k" + bitmap
