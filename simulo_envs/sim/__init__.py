"""Simulation backends: the only code that talks to SAPIEN (DESIGN.md, Backends)."""

from __future__ import annotations

import numpy as np

from simulo_envs.sim.config import SimConfig

BACKENDS = ("physx_cpu",)


def resolve_backend_name(name: str) -> str:
    """Map ``"auto"`` to a concrete backend and validate the name.

    ``"auto"`` is ``physx_cpu`` for now: the GPU backend (``physx_cuda``) is not built yet.

    Raises:
        ValueError: an unknown name. NotImplementedError: ``physx_cuda`` (not built yet).
    """
    if name == "auto":
        return "physx_cpu"
    if isinstance(name, str) and name.split(":")[0] == "physx_cuda":
        raise NotImplementedError("sim_backend='physx_cuda' is not available yet; use 'physx_cpu' or 'auto'")
    if name not in BACKENDS:
        raise ValueError(f"unknown sim_backend {name!r}; choose from {('auto',) + BACKENDS}")
    return name


def make_backend(name: str, num_envs: int, env_origins: np.ndarray, config: SimConfig, render: bool = False):
    """Create the backend ``name`` (already resolved) for ``num_envs`` envs at ``env_origins`` (N, 3),
    with a render system per env when ``render``."""
    from simulo_envs.sim.physx_cpu import PhysxCpuBackend

    return PhysxCpuBackend(num_envs, env_origins, config, render=render)


__all__ = ["SimConfig", "make_backend", "resolve_backend_name", "BACKENDS"]
