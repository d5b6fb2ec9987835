"""``SimConfig``: every simulation tunable in one frozen dataclass, with units and sources."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping, Union

GPU_MEMORY_KEYS = ("temp_buffer_capacity", "max_rigid_contact_count", "max_rigid_patch_count", "heap_capacity",
                   "found_lost_pairs_capacity", "found_lost_aggregate_pairs_capacity",
                   "total_aggregate_pairs_capacity", "collision_stack_size")
"""Keys of ``sapien.physx.set_gpu_memory_config`` (ManiSkill's ``GPUMemoryConfig`` fields)."""

# ManiSkill's nested SimConfig (mani_skill/utils/structs/types.py) -> our flat field names.
_NESTED = {
    "scene_config": {"gravity": "gravity", "bounce_threshold": "bounce_threshold",
                     "sleep_threshold": "sleep_threshold", "contact_offset": "contact_offset",
                     "rest_offset": "rest_offset", "solver_position_iterations": "solver_position_iterations",
                     "solver_iterations": "solver_position_iterations",
                     "solver_velocity_iterations": "solver_velocity_iterations", "enable_pcm": "enable_pcm",
                     "enable_tgs": "enable_tgs", "enable_ccd": "enable_ccd",
                     "enable_enhanced_determinism": "enable_enhanced_determinism",
                     "enable_friction_every_iteration": "enable_friction_every_iteration",
                     "cpu_workers": "num_threads"},
    "default_materials_config": {"static_friction": "static_friction", "dynamic_friction": "dynamic_friction",
                                 "restitution": "restitution"},
}
_TOP_ALIASES = {"spacing": "env_spacing"}


@dataclass(frozen=True)
class SimConfig:
    """Simulation settings shared by every backend.

    Defaults follow ManiSkill 3's ``SimConfig``/``SceneConfig`` (``mani_skill/utils/structs/types.py``)
    so that our tasks and ManiSkill's behave alike, except ``env_spacing`` (see below).

    Attributes:
        sim_freq: physics steps per second [Hz] (PhysX timestep = 1 / sim_freq).
        control_freq: env steps (actions) per second [Hz]; must divide ``sim_freq``.
        env_spacing: distance between neighbouring env origins on the grid [m]. 2 m clears the
            Panda's 0.855 m reach. On physx_cpu envs never collide whatever the spacing for up to
            32 envs (collision bits); beyond 32, envs sharing a bit rely on this spacing.
        solver_position_iterations / solver_velocity_iterations: PhysX TGS solver iterations per body.
        num_threads: PhysX CPU worker threads (0 = solve on the calling thread). Measured on 2 cores:
            workers slow N <= 16 and gain about 13% at N = 64 (SAPIEN 3.0.3), so the default is 0.
        gravity: [m/s^2], world frame.
        bounce_threshold: relative speed [m/s] below which contacts do not bounce.
        contact_offset / rest_offset: PhysX shape offsets [m].
        static_friction / dynamic_friction / restitution: default material of the ground and
            of any shape that does not set its own.
        isolate_envs: one PhysX system per env instead of one shared by all (physx_cpu). An
            env's trajectory then depends only on its own inputs, bit for bit, whatever the
            batch size or the worker shard it runs in; every env sits at the world origin (its
            own world). Slower: N small solves instead of one (``scripts/benchmark.py
            --isolation`` measures it). In a shared system envs couple at float-noise level
            (about 1e-6 per step, growing in contact; measured on SAPIEN 3.0.3).
        step_threads: with ``isolate_envs``, threads stepping the per-env systems at once
            (``simulo_envs/sim/system_stepper.py``); 0 (default): chosen by measurement, the
            stepper times its steps on one thread and on one per CPU core the process may use
            (at most ``num_envs``) and keeps the faster, probing the other every 50 steps
            (threads pay only where a core is free); 1: the calling thread only; k > 1: k
            threads. Results are bit-identical whatever the count. Ignored without
            ``isolate_envs`` (one system steps on one thread; ``num_threads`` gives it PhysX
            worker threads).
        sleep_threshold: mass-normalised kinetic energy [m^2/s^2] below which a body may sleep.
        enable_pcm / enable_tgs / enable_ccd / enable_enhanced_determinism /
            enable_friction_every_iteration: PhysX scene flags (persistent contact manifolds, the
            TGS solver, continuous collision detection, enhanced determinism, friction in every
            solver iteration). Defaults: SAPIEN's and ManiSkill's.
        gpu_memory_config: overrides of PhysX's GPU buffer sizes (keys ``GPU_MEMORY_KEYS``) for
            ``physx_cuda``; other backends ignore it.

    ``merged`` also takes ManiSkill's nested form, ``dict(spacing=..., sim_freq=...,
    scene_config=dict(solver_position_iterations=25, cpu_workers=...),
    default_materials_config=dict(...), gpu_memory_config=dict(...))`` (``spacing`` is our
    ``env_spacing``, ``cpu_workers`` our ``num_threads``, ``solver_iterations`` an older name of
    ``solver_position_iterations``).
        detect_faults: check every env after every step and quarantine the ones whose physics
            went bad (``simulo_envs/envs/faults.py``; about 1 % of the step time at 64 envs,
            3 % at 16: docs/faults.md, ``tests/benchmarks/bench_fault_check.py``). The limits
            below define "bad":
        max_linear_speed: [m/s] fault above this speed of any body (prop or articulation root).
            Healthy tabletop scenes stay far below it: measured at most 1.0 m/s over random
            actions in every FrankaLift task; a fall from the box's top (5 m) ends at 9.9 m/s.
            PhysX's own cap (its default max linear velocity, 1e16 m/s) never acts.
        max_angular_speed: [rad/s] fault above this angular speed of any body. PhysX caps a
            body's angular speed at 100 rad/s (its default max angular velocity, kept by
            SAPIEN), so this fires only where a task raised that cap; measured up to 44 rad/s
            in healthy runs (a cube flicked by the fingers).
        max_joint_speed: [rad/s revolute, m/s prismatic] fault above this joint speed of any
            articulation. PhysX caps joints at 100 (its default max joint velocity); healthy
            Panda runs reach 20 rad/s (measured, random actions in every control mode), its
            rated speeds are 2.2-2.6 rad/s (Franka datasheet).
        fault_box_low / fault_box_high: [m] corners ``(x, y, z)`` of the box, in each env's local
            frame (around its origin), that every body must stay in. The default, 10 m x 10 m
            from 1 m below the ground to 5 m above it, is the rendered ground square; a body
            outside it has left the scene or fallen through the ground.
    """

    sim_freq: int = 100
    control_freq: int = 20
    env_spacing: float = 2.0
    solver_position_iterations: int = 15
    solver_velocity_iterations: int = 1
    num_threads: int = 0
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    bounce_threshold: float = 2.0
    contact_offset: float = 0.02
    rest_offset: float = 0.0
    static_friction: float = 0.3
    dynamic_friction: float = 0.3
    restitution: float = 0.0
    isolate_envs: bool = False
    step_threads: int = 0
    sleep_threshold: float = 0.005
    enable_pcm: bool = True
    enable_tgs: bool = True
    enable_ccd: bool = False
    enable_enhanced_determinism: bool = False
    enable_friction_every_iteration: bool = True
    gpu_memory_config: Mapping[str, int] = field(default_factory=dict)
    detect_faults: bool = True
    max_linear_speed: float = 20.0
    max_angular_speed: float = 200.0
    max_joint_speed: float = 50.0
    fault_box_low: tuple[float, float, float] = (-5.0, -5.0, -1.0)
    fault_box_high: tuple[float, float, float] = (5.0, 5.0, 5.0)

    def __post_init__(self) -> None:
        for name in ("sim_freq", "control_freq", "solver_position_iterations", "solver_velocity_iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"sim_config.{name} must be an int >= 1, got {value!r}")
        for name in ("num_threads", "step_threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"sim_config.{name} must be an int >= 0, got {value!r}")
        if self.sim_freq % self.control_freq != 0:
            raise ValueError(
                f"sim_config.control_freq ({self.control_freq} Hz) must divide sim_freq ({self.sim_freq} Hz)"
            )
        for name in ("env_spacing", "bounce_threshold", "contact_offset", "rest_offset",
                     "static_friction", "dynamic_friction", "restitution", "sleep_threshold"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"sim_config.{name} must be a finite number >= 0, got {value!r}")
        if not isinstance(self.isolate_envs, bool):
            raise ValueError(f"sim_config.isolate_envs must be a bool, got {self.isolate_envs!r}")
        if not isinstance(self.detect_faults, bool):
            raise ValueError(f"sim_config.detect_faults must be a bool, got {self.detect_faults!r}")
        for name in ("max_linear_speed", "max_angular_speed", "max_joint_speed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
                raise ValueError(f"sim_config.{name} must be a finite number > 0, got {value!r}")
        low, high = self.fault_box_low, self.fault_box_high
        for name, corner in (("fault_box_low", low), ("fault_box_high", high)):
            if (not isinstance(corner, (tuple, list)) or len(corner) != 3
                    or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in corner)):
                raise ValueError(f"sim_config.{name} must be 3 finite numbers (x, y, z) [m], got {corner!r}")
        if not all(a < b for a, b in zip(low, high)):
            raise ValueError(f"sim_config.fault_box_low {tuple(low)} must be below fault_box_high {tuple(high)} on every axis")
        if len(self.gravity) != 3 or not all(math.isfinite(g) for g in self.gravity):
            raise ValueError(f"sim_config.gravity must be 3 finite numbers [m/s^2], got {self.gravity!r}")
        for name in ("enable_pcm", "enable_tgs", "enable_ccd", "enable_enhanced_determinism",
                     "enable_friction_every_iteration"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"sim_config.{name} must be a bool, got {getattr(self, name)!r}")
        gpu = self.gpu_memory_config
        if not isinstance(gpu, Mapping) or set(gpu) - set(GPU_MEMORY_KEYS):
            raise ValueError(f"sim_config.gpu_memory_config must be a dict with keys from {list(GPU_MEMORY_KEYS)}, got {gpu!r}")
        for key, value in gpu.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"sim_config.gpu_memory_config[{key!r}] must be an int >= 1, got {value!r}")

    @property
    def sim_steps_per_control(self) -> int:
        """PhysX steps per env step: ``sim_freq // control_freq``."""
        return self.sim_freq // self.control_freq

    def merged(self, overrides: Union[None, "SimConfig", Mapping[str, Any]]) -> "SimConfig":
        """This config with ``overrides`` applied: a dict of field names (flat, or ManiSkill's
        nested form, see the class docstring), or a whole SimConfig (which replaces this one).

        Raises:
            ValueError: an unknown key (the message lists the known ones), or an invalid value.
        """
        if overrides is None:
            return self
        if isinstance(overrides, SimConfig):
            return overrides
        return replace(self, **flatten_sim_config(overrides, {f.name for f in fields(self)}))


def flatten_sim_config(overrides: Mapping[str, Any], known: set) -> dict:
    """Our flat field names for a flat or ManiSkill-nested ``sim_config`` dict.

    Raises:
        ValueError: a key that is neither ours nor ManiSkill's, or a nested part that is not a dict.
    """
    if not isinstance(overrides, Mapping):
        raise ValueError(f"sim_config must be a dict or a SimConfig, got {type(overrides).__name__}")
    flat: dict = {}
    unknown = []
    for key, value in overrides.items():
        if key in _NESTED:
            if not isinstance(value, Mapping):
                raise ValueError(f"sim_config[{key!r}] must be a dict, got {value!r}")
            names = _NESTED[key]
            for sub, sub_value in value.items():
                if sub not in names:
                    raise ValueError(f"sim_config[{key!r}]: unknown key {sub!r}; known keys are {sorted(names)}")
                flat[names[sub]] = tuple(float(g) for g in sub_value) if sub == "gravity" else sub_value
        elif key == "gpu_memory_config" and isinstance(value, Mapping):
            flat[key] = dict(value)
        elif key in _TOP_ALIASES or key in known:
            flat[_TOP_ALIASES.get(key, key)] = value
        else:
            unknown.append(key)
    if unknown:
        raise ValueError(f"sim_config: unknown keys {sorted(unknown)}; known keys are "
                         f"{sorted(known | set(_TOP_ALIASES) | set(_NESTED))}")
    return flat
