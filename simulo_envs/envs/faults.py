"""Faults: find the envs whose physics went bad after every step, and quarantine them.

A single env whose simulation blows up (a body driven to absurd speed, an interpenetration
PhysX resolves violently, a NaN) must not poison a batch: its outputs would reach the learner,
and a NaN in one row of a batched loss diverges the whole policy. After every physics step
``BaseEnv.step`` runs two checks through ``env.faults``, a ``Faults`` (``SimConfig.detect_faults``;
limits in ``SimConfig``):

1. **State** (before the task's ``evaluate``), per env, over every prop's body and every
   articulation (robots, articulated props): a pose, velocity, qpos or qvel that is NaN or inf;
   a body's linear speed above ``max_linear_speed`` or angular speed above
   ``max_angular_speed``; a joint speed above ``max_joint_speed``; a body (prop, articulation
   root) outside the box ``[fault_box_low, fault_box_high]`` around the env's origin. An
   articulation's other links are placed by its root pose and qpos, both checked.
2. **Outputs**: an observation or reward row the task computed that is NaN or inf, though the
   state passed (a task's own arithmetic).

An env caught by either is **quarantined** until its next reset:

- its bodies are put back at once at its *home state* (every body and articulation as it was
  right after the env was built and first reset, at rest, drive targets on qpos), so neither
  PhysX nor the task's code ever works on the bad state again, and the other envs share the
  simulation with nothing extreme;
- ``step`` reports it ``truncated`` (not ``terminated``: the task did not end), its reward is 0,
  and its observation row is the last one it returned before the fault (finite; any value that
  still is not finite reads 0); rows of float ``info`` entries read 0 and of bool entries False
  (so no ``success``); this holds on every step until the reset;
- ``info["sim_fault"]`` (bool (N,)) is True, ``info["sim_fault_reason"]`` (int32 (N,)) holds its
  ``FaultReason`` bits (0 for healthy envs), ``info["sim_fault_count"]`` (int32 (N,)) counts the
  faults of each env since the env was made. Step infos only: a reset's info carries none of the
  three, so the vector env's autoreset (which treats a quarantined env as any truncation) keeps
  the fault visible in ``info`` and in ``final_info``.

Its next reset (``reset(options={"env_idx": ...})``, or autoreset) restores it fully: the home
state is written to every body and articulation of that env (pose, velocity, qpos, qvel, drive
targets: every piece of PhysX state an env has; measured: after a NaN written straight into
PhysX, an env reset this way replays a clean env's episode bit for bit), then the task
initialises the episode as usual. No other env is written.

Isolation: the other envs are not written, ever. In one shared PhysX CPU system (the default) a
large event in one env (a body leaving its place by a metre or more, a fault, the parking itself)
still moves the others at float-noise level: positions and joint positions by about 1e-7 to 1e-6,
velocities of bodies resting in contact by up to about 3e-4 (solver noise; the same happens when
a body is legitimately lifted by 1 m). ``SimConfig(isolate_envs=True)`` gives every env its own
PhysX system: the other envs are then bit-identical to a run without the fault.
"""

from __future__ import annotations

import enum
from typing import Any, Optional

import numpy as np
import torch

from simulo_envs.tensors import all_finite, any_true, count_true, to_device


class FaultReason(enum.IntFlag):
    """Bits of ``info["sim_fault_reason"]``; ``FaultReason(int(value))`` names them."""

    NONFINITE_STATE = 1
    """A body pose or velocity, or a joint position or velocity, is NaN or inf."""
    LINEAR_SPEED = 2
    """A body moves faster than ``SimConfig.max_linear_speed``."""
    ANGULAR_SPEED = 4
    """A body spins faster than ``SimConfig.max_angular_speed``."""
    JOINT_SPEED = 8
    """A joint moves faster than ``SimConfig.max_joint_speed``."""
    OUT_OF_BOX = 16
    """A body left the box ``SimConfig.fault_box_low/high`` around its env origin."""
    NONFINITE_OUTPUT = 32
    """The task's observation or reward is NaN or inf although the state is finite."""


class FaultScanner:
    """The state check of one built scene: per env, the ``FaultReason`` bits of its bodies.

    Reads go through the backend's batched reads (``rigid_state``, ``qpos``, ``qvel``,
    ``root_pose``, ``root_velocity``), the same ones observations use, so on physx_cpu they come
    from the packed state the step already made. The arithmetic runs on whatever the backend
    returns (numpy on physx_cpu, torch on physx_cuda): a few dozen whole-batch operations.
    """

    def __init__(self, scene, backend, config):
        from simulo_envs.articulation import ArticulationObject
        from simulo_envs.prop import Prop

        self._backend = backend
        self._rigid = [o._gid for o in scene.objects.values() if isinstance(o, Prop) and not _all_static(o)]
        self._arts = [o._gid for o in scene.objects.values() if isinstance(o, ArticulationObject)]
        probe = backend.rigid_state(self._rigid[0]) if self._rigid else (
            backend.root_pose(self._arts[0]) if self._arts else None)
        origins = scene.env_origins
        self._numpy = isinstance(probe, np.ndarray)
        if self._numpy:
            origins = origins.cpu().numpy().astype(np.float32)
            self._zero = np.zeros(backend.num_envs, dtype=np.int32)
            self._low = np.asarray(config.fault_box_low, dtype=np.float32)
            self._high = np.asarray(config.fault_box_high, dtype=np.float32)
        else:
            device = probe.device if probe is not None else origins.device
            origins = origins.to(device, torch.float32)
            self._zero = torch.zeros(backend.num_envs, dtype=torch.int32, device=device)
            self._low = torch.tensor(config.fault_box_low, dtype=torch.float32, device=device)
            self._high = torch.tensor(config.fault_box_high, dtype=torch.float32, device=device)
        self._box_low = origins + self._low  # world frame (N, 3)
        self._box_high = origins + self._high
        self._linear2 = float(config.max_linear_speed) ** 2
        self._angular2 = float(config.max_angular_speed) ** 2
        self._joint = float(config.max_joint_speed)
        self._packed = self._packed_layout() if self._numpy else None

    def scan(self):
        """int32 (N,) ``FaultReason`` bits per env, numpy or torch as the backend reads; None when
        every env is healthy (on numpy, known from a few whole-array reductions per group
        before any per-env arithmetic: the common case costs about half)."""
        if self._packed is not None and self._healthy_packed():
            return None
        bodies, joints = self._read()
        if self._numpy and self._packed is None and self._healthy(bodies, joints):
            return None
        reason = self._zero.copy() if self._numpy else self._zero.clone()
        for arrays, position, linear, angular in bodies:
            finite = _rows_finite(arrays[0])
            for array in arrays[1:]:
                finite = finite & _rows_finite(array)
            outside = ((position < self._box_low) | (position > self._box_high)).any(1)
            reason |= (_bits(~finite, FaultReason.NONFINITE_STATE)
                       | _bits((linear * linear).sum(1) > self._linear2, FaultReason.LINEAR_SPEED)
                       | _bits((angular * angular).sum(1) > self._angular2, FaultReason.ANGULAR_SPEED)
                       | _bits(outside, FaultReason.OUT_OF_BOX))  # NaN compares False
        for qpos, qvel in joints:
            reason |= _bits(~(_rows_finite(qpos) & _rows_finite(qvel)), FaultReason.NONFINITE_STATE)
            reason |= _bits((abs(qvel) > self._joint).any(1), FaultReason.JOINT_SPEED)
        return reason

    def _read(self) -> tuple[list, list]:
        """``bodies``: per body group ``(arrays checked for finiteness, position (N, 3), linear
        velocity (N, 3), angular velocity (N, 3))``; ``joints``: per articulation ``(qpos, qvel)``."""
        backend, bodies, joints = self._backend, [], []
        for gid in self._rigid:
            state = backend.rigid_state(gid)
            bodies.append(((state,), state[:, :3], state[:, 7:10], state[:, 10:13]))
        for gid in self._arts:
            root, velocity = backend.root_pose(gid), backend.root_velocity(gid)
            bodies.append(((root, velocity), root[:, :3], velocity[:, :3], velocity[:, 3:6]))
            joints.append((backend.qpos(gid), backend.qvel(gid)))
        return bodies, joints

    def _packed_layout(self) -> Optional[tuple]:
        """Where the checked values lie in the backend's packed state (physx_cpu), with the bounds
        ``_healthy_packed`` holds them to: ``(index, low, high)``, flat; None when the backend has
        no packed state or a group is not in it (a static body)."""
        backend = self._backend
        if getattr(backend, "_packed_state", None) is None:
            return None
        rows = []  # per body group: packed indices of [x, y, z, vx, vy, vz, wx, wy, wz], (N, 9)
        for gid in self._rigid:
            idx = backend._packed_index("rigid", gid)
            if idx is None:
                return None
            rows.append(idx[:, [0, 1, 2, 7, 8, 9, 10, 11, 12]])
        for gid in self._arts:
            rows.append(np.concatenate([backend._packed_index("root", gid)[:, :3], backend._packed_index("root_vel", gid)], 1))
        joints = [backend._packed_index("qvel", gid).ravel() for gid in self._arts]
        # Each velocity component within limit * 0.577 (< 1/sqrt(3)) implies a speed within the limit.
        linear, angular = np.sqrt(self._linear2) * 0.577, np.sqrt(self._angular2) * 0.577
        low = [np.concatenate([self._box_low, np.full((len(self._box_low), 3), -linear),
                               np.full((len(self._box_low), 3), -angular)], 1).ravel()] * len(rows)
        high = [np.concatenate([self._box_high, np.full((len(self._box_high), 3), linear),
                                np.full((len(self._box_high), 3), angular)], 1).ravel()] * len(rows)
        low += [np.full(j.shape, -self._joint) for j in joints]
        high += [np.full(j.shape, self._joint) for j in joints]
        index = np.concatenate([r.ravel() for r in rows] + joints)
        return index, np.concatenate(low).astype(np.float32), np.concatenate(high).astype(np.float32)

    def _healthy_packed(self) -> bool:
        """physx_cpu: True when no env can break a limit, from the packed state the step made, in
        a handful of whole-array operations whatever the number of envs and groups. Conservative (False
        sends the step to the full scan, which finds the envs and reasons): a non-finite entry
        anywhere in the packed state (every checked pose, velocity, qpos and qvel is in it),
        a position outside the box, a joint speed above its limit, or a velocity component above
        0.577 times its speed limit."""
        index, low, high = self._packed
        packed = self._backend._packed_state()
        if not all_finite(packed):
            return False
        values = packed[index]
        return not count_true((values < low) | (values > high))  # cheaper than any()

    def _healthy(self, bodies: list, joints: list) -> bool:
        """numpy only: True when no env breaks any limit (whole-array reductions)."""
        for arrays, position, linear, angular in bodies:
            if not all(np.isfinite(a).all() for a in arrays):
                return False
            if (np.einsum("ij,ij->i", linear, linear).max() > self._linear2
                    or np.einsum("ij,ij->i", angular, angular).max() > self._angular2):
                return False
            if (position < self._box_low).any() or (position > self._box_high).any():
                return False
        for qpos, qvel in joints:
            if not (np.isfinite(qpos).all() and np.isfinite(qvel).all()) or (np.abs(qvel) > self._joint).any():
                return False
        return True


def _all_static(prop) -> bool:
    """True when every env's body of ``prop`` is static (it cannot move; PhysX holds no velocity)."""
    return all(s.collision and s.physics.kind == "static" for s in prop.variants)


def _rows_finite(values):
    if isinstance(values, np.ndarray):
        return np.isfinite(values).all(1)
    return torch.isfinite(values).all(1)


def _bits(mask, bit: FaultReason):
    if isinstance(mask, np.ndarray):
        return mask.astype(np.int32) * np.int32(bit)
    return mask.to(torch.int32) * int(bit)


class Faults:
    """An env's fault handling (module docstring), held by ``BaseEnv`` as ``env.faults``: the
    per-env quarantine flags, reasons and counters, the state check of the current build, and the
    home state faulted envs are put back to. ``BaseEnv`` calls it from ``step`` (``detect`` after
    the physics, before ``evaluate``; ``quarantine_outputs`` on the outputs) and ``reset``
    (``restore`` before the task's episode init, ``record_home`` after a rebuild). It writes
    only its own attributes; the env's state it reads and writes through the env's methods.

    Args:
        env: the ``BaseEnv`` (its ``num_envs``, ``device`` and ``sim_config`` are fixed by then).
    """

    def __init__(self, env):
        n, device = env.num_envs, env.device
        self._env = env
        self._n = n
        self._enabled = bool(env.sim_config.detect_faults)
        self._quarantined = torch.zeros(n, dtype=torch.bool, device=device)
        self._reason = torch.zeros(n, dtype=torch.int32, device=device)
        self._count = torch.zeros(n, dtype=torch.int32, device=device)
        # On CPU their numpy views (the same memory; the three are only ever written in place),
        # read by every step's outputs at a fraction of torch's per-call cost.
        self._numpy = (None if device.type != "cpu" else
                       (self._quarantined.numpy(), self._reason.numpy(), self._count.numpy()))
        self._scanner: Optional[FaultScanner] = None
        self._scanner_backend = None  # the backend (built scene) the scanner checks
        self._home_state: Optional[dict] = None
        self._home_backend = None  # the backend (built scene) the home state belongs to

    @property
    def counts(self) -> torch.Tensor:
        """int32 (N,): faults of each env since the env was made (``info["sim_fault_count"]``); fresh."""
        return self._count.clone()

    @property
    def quarantined(self) -> torch.Tensor:
        """bool (N,): envs quarantined by a fault, until their next reset; fresh."""
        return self._quarantined.clone()

    @property
    def scanner(self) -> Optional[FaultScanner]:
        """The state check of the current build (made at its first step); None before."""
        return self._scanner if self._scanner_backend is self._env._backend else None

    def record_home(self) -> None:
        """After the reset that (re)built the scene: every env's state, to park and restore
        faulted envs with (a checked state dict, numpy rows)."""
        env = self._env
        self._home_state = env._check_state_dict(env.get_state_dict(), np.arange(env.num_envs))
        self._home_backend = env._backend

    def _has_home(self) -> bool:
        return self._home_state is not None and self._home_backend is self._env._backend

    def _home_rows(self, ids: np.ndarray) -> dict:
        home = self._home_state
        return {kind: {path: rows[ids] for path, rows in home[kind].items()} for kind in home}

    def detect(self) -> None:
        """After the physics step, before ``evaluate``: scan the state; quarantine and park the
        newly faulted envs."""
        if not self._enabled:
            return
        env = self._env
        backend = env._backend
        if self._scanner_backend is not backend:
            self._scanner = FaultScanner(env.scene, backend, env.sim_config)
            self._scanner_backend = backend
        scanner = self._scanner
        if scanner._packed is not None and scanner._healthy_packed():  # scan's first test, a call less
            return
        reason = scanner.scan()
        if reason is None:
            return
        reason = to_device(reason, env.device)
        bad = reason != 0
        if any_true(bad):
            self._quarantine(bad, reason)

    def _quarantine(self, bad: torch.Tensor, reason: torch.Tensor) -> None:
        """Quarantine the envs of mask ``bad`` (those not quarantined yet count a fault and keep
        ``reason``, int32 (N,)) and put their bodies back at their home state."""
        new = bad & ~self._quarantined
        self._count += new.to(torch.int32)
        self._reason.copy_(torch.where(new, reason, self._reason))  # in place: the numpy view follows
        self._quarantined |= bad
        if self._has_home():
            ids = torch.nonzero(bad).flatten().cpu().numpy()
            self._env._write_state_dict(self._home_rows(ids), ids)

    def quarantine_outputs(self, obs, reward: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor,
                           info: dict, finite: Optional[bool] = None) -> tuple:
        """The step's outputs with every quarantined env's rows replaced (module docstring);
        adds ``sim_fault``, ``sim_fault_reason``, ``sim_fault_count`` to ``info``. ``finite``:
        True when the caller already knows every obs and reward entry is finite."""
        n = self._n
        if self._enabled and not (finite or _all_finite(obs, reward)):
            bad = ~(_finite_rows(obs, n, reward.device) & torch.isfinite(reward))
            if any_true(bad):
                self._quarantine(bad, torch.full_like(self._reason, int(FaultReason.NONFINITE_OUTPUT)))
        quarantined, views = self._quarantined, self._numpy
        if views is not None:  # CPU: numpy copies under tensors, a fraction of clone()'s cost
            flags, reasons, counts = views
            info["sim_fault"] = torch.from_numpy(flags.copy())
            info["sim_fault_reason"] = torch.from_numpy(reasons.copy())
            info["sim_fault_count"] = torch.from_numpy(counts.copy())
            if not count_true(flags):
                return obs, reward, terminated, truncated
        else:
            info["sim_fault"] = quarantined.clone()
            info["sim_fault_reason"] = self._reason.clone()
            info["sim_fault_count"] = self._count.clone()
            if not any_true(quarantined):
                return obs, reward, terminated, truncated
        obs = _replace_rows(obs, quarantined, self._env._last_obs)
        reward = reward.masked_fill(quarantined, 0.0)
        _clear_info_rows(info, quarantined, n)
        return obs, reward, terminated & ~quarantined, truncated | quarantined

    def restore(self, env_idx: np.ndarray) -> None:
        """At the reset of ``env_idx``, before the task's episode init: write the home state into
        the quarantined ones among them and lift their quarantine."""
        rows = self._quarantined[torch.from_numpy(env_idx).to(self._quarantined.device)]
        if not any_true(rows):
            return
        ids = env_idx[rows.cpu().numpy()]
        if self._has_home():  # after a rebuild every body is new: nothing to restore
            self._env._write_state_dict(self._home_rows(ids), ids)
        index = torch.from_numpy(ids).to(self._quarantined.device)
        self._quarantined[index] = False
        self._reason[index] = 0


def _all_finite(obs: Any, reward: torch.Tensor) -> bool:
    """True when every float entry of ``obs`` and ``reward`` is finite (numpy's reduction on CPU
    tensors: about 1 us each)."""
    for leaf in (*_float_leaves(obs), reward):
        finite = np.isfinite(leaf.numpy()).all() if leaf.device.type == "cpu" else torch.isfinite(leaf).all()
        if not finite:
            return False
    return True


def _finite_rows(obs: Any, n: int, device: torch.device) -> torch.Tensor:
    """bool (n,) on ``device``: rows of ``obs`` (a tensor or nested dict of tensors) whose float
    entries are all finite."""
    ok = torch.ones(n, dtype=torch.bool, device=device)
    for leaf in _float_leaves(obs):
        ok &= torch.isfinite(leaf.reshape(n, -1)).all(1).to(device)
    return ok


def _float_leaves(obs: Any):
    if isinstance(obs, dict):
        for value in obs.values():
            yield from _float_leaves(value)
    elif isinstance(obs, torch.Tensor) and obs.is_floating_point():
        yield obs.detach()


def _replace_rows(obs: Any, mask: torch.Tensor, previous: Any) -> Any:
    """A copy of ``obs`` with the rows of ``mask`` taken from ``previous`` (same layout), and
    non-finite values in them set to 0. ``obs`` itself is not modified (its tensors may be the
    task's own)."""
    if isinstance(obs, dict):
        return {k: _replace_rows(v, mask, previous.get(k) if isinstance(previous, dict) else None)
                for k, v in obs.items()}
    if not isinstance(obs, torch.Tensor) or obs.ndim == 0 or obs.shape[0] != mask.shape[0]:
        return obs
    rows = mask.to(obs.device).reshape(-1, *([1] * (obs.ndim - 1)))
    if isinstance(previous, torch.Tensor) and previous.shape == obs.shape:
        obs = torch.where(rows, previous.to(obs.dtype), obs)
    if obs.is_floating_point():
        obs = torch.where(rows, torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0), obs)
    return obs


def _clear_info_rows(info: dict, mask: torch.Tensor, n: int) -> None:
    """Rows ``mask`` of every float (to 0) and bool (to False) tensor of ``info`` (nested dicts
    too), except the fault keys; in place."""
    for key, value in info.items():
        if key.startswith("sim_fault"):
            continue
        if isinstance(value, dict):
            _clear_info_rows(value, mask, n)
        elif isinstance(value, torch.Tensor) and value.ndim >= 1 and value.shape[0] == n:
            if value.is_floating_point() or value.dtype == torch.bool:
                info[key] = value.masked_fill(mask.reshape(n, *([1] * (value.ndim - 1))), 0)
