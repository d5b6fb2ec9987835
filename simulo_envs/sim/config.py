"""``SimConfig``: every simulation tunable in one frozen dataclass, with units and sources."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping, Union


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
            workers slow N <= 16 and gain about 13% at N = 64 (DESIGN.md), so the default is 0.
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
            (about 1e-6 per step, growing in contact; DESIGN.md).
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

    def __post_init__(self) -> None:
        for name in ("sim_freq", "control_freq", "solver_position_iterations", "solver_velocity_iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"sim_config.{name} must be an int >= 1, got {value!r}")
        if isinstance(self.num_threads, bool) or not isinstance(self.num_threads, int) or self.num_threads < 0:
            raise ValueError(f"sim_config.num_threads must be an int >= 0, got {self.num_threads!r}")
        if self.sim_freq % self.control_freq != 0:
            raise ValueError(
                f"sim_config.control_freq ({self.control_freq} Hz) must divide sim_freq ({self.sim_freq} Hz)"
            )
        for name in ("env_spacing", "bounce_threshold", "contact_offset", "rest_offset",
                     "static_friction", "dynamic_friction", "restitution"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"sim_config.{name} must be a finite number >= 0, got {value!r}")
        if not isinstance(self.isolate_envs, bool):
            raise ValueError(f"sim_config.isolate_envs must be a bool, got {self.isolate_envs!r}")
        if len(self.gravity) != 3 or not all(math.isfinite(g) for g in self.gravity):
            raise ValueError(f"sim_config.gravity must be 3 finite numbers [m/s^2], got {self.gravity!r}")

    @property
    def sim_steps_per_control(self) -> int:
        """PhysX steps per env step: ``sim_freq // control_freq``."""
        return self.sim_freq // self.control_freq

    def merged(self, overrides: Union[None, "SimConfig", Mapping[str, Any]]) -> "SimConfig":
        """This config with ``overrides`` applied (a dict of field names, or a whole SimConfig).

        Raises:
            ValueError: an unknown field name, or an invalid value.
        """
        if overrides is None:
            return self
        if isinstance(overrides, SimConfig):
            return overrides
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"sim_config: unknown keys {unknown}; known keys are {sorted(known)}")
        return replace(self, **dict(overrides))
