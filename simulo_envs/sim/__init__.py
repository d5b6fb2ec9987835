"""Simulation backends: the only code that talks to SAPIEN (docs/architecture.md).

Names (``sim_backend=``):

- ``"physx_cpu"``: every env in one PhysX CPU system (``physx_cpu.py``); tensors on CPU.
- ``"physx_cuda"`` / ``"physx_cuda:N"``: SAPIEN's PhysX GPU system on CUDA device ``N``
  (``physx_cuda.py``); tensors on ``cuda:N``. Needs a CUDA GPU and PhysX's GPU library
  (``gpu_setup.py`` says where it goes).
- ``"physx_cuda_emulated"``: the same GPU backend on ``EmulatedPhysxGpuSystem`` (a CPU system
  with the GPU system's buffers and rules, ``gpu_emulator.py``); tensors on CPU. For tests: it
  is how the GPU code path runs in CI.
- ``"auto"``: ``physx_cuda`` where a CUDA GPU and the PhysX GPU library are present, else ``physx_cpu``.
  (ManiSkill's ``"auto"`` picks by ``num_envs`` instead: CPU for one env, GPU for more, since its
  CPU backend holds one env only; ours holds any number, so the machine decides.)
- ``"cpu"`` and ``"gpu"``: ManiSkill's aliases of ``"physx_cpu"`` and ``"physx_cuda"``.

Every backend implements ``SimBackend`` (``backend.py``).
"""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.sim.backend import SimBackend
from simulo_envs.sim.config import SimConfig

BACKENDS = ("physx_cpu", "physx_cuda", "physx_cuda_emulated")
ALIASES = {"cpu": "physx_cpu", "gpu": "physx_cuda"}
"""ManiSkill's backend aliases (``mani_skill/envs/utils/system/backend.py``)."""


def resolve_backend_name(name: str) -> str:
    """Map ``"auto"`` to a concrete backend and validate the name (``"physx_cuda"`` becomes
    ``"physx_cuda:0"``). Checks nothing about the machine: ``make_backend`` does.

    Raises:
        ValueError: an unknown name, or a bad device number in ``"physx_cuda:N"``.
    """
    if name == "auto":
        from simulo_envs.sim.gpu_setup import physx_gpu_available

        return "physx_cuda:0" if physx_gpu_available() else "physx_cpu"
    if not isinstance(name, str):
        raise ValueError(f"sim_backend must be a string, got {name!r}")
    name = ALIASES.get(name, name)
    if name.startswith("physx_cuda:") or name == "physx_cuda":
        index = name.partition(":")[2] or "0"
        if not index.isdigit():
            raise ValueError(f"sim_backend {name!r}: the device must be a number, as in 'physx_cuda:0'")
        return f"physx_cuda:{int(index)}"
    if name not in BACKENDS:
        raise ValueError(f"unknown sim_backend {name!r}; choose from {('auto',) + BACKENDS + tuple(ALIASES)} "
                         "or 'physx_cuda:N'")
    return name


def backend_device(name: str) -> torch.device:
    """The torch device of a resolved backend's tensors: ``cuda:N`` for ``physx_cuda:N``, else CPU.

    Raises:
        RuntimeError: ``physx_cuda:N`` where torch sees no CUDA device ``N``, or where PhysX's
            GPU library is missing or fails to load (the messages say what to do). Checked here,
            before an env makes anything on the device.
    """
    if name.startswith("physx_cuda:"):
        from simulo_envs.sim.gpu_setup import check_cuda, enable_physx_gpu

        index = int(name.partition(":")[2])
        check_cuda(index)
        enable_physx_gpu()
        return torch.device("cuda", index)
    return torch.device("cpu")


def sim_backend_arg(value: str) -> str:
    """``argparse`` type for a script's ``--sim-backend``: returns ``value`` unchanged when this
    machine can run it, so that a script fails in one line before building anything.

    Raises:
        argparse.ArgumentTypeError: an unknown name, or ``physx_cuda`` where this machine lacks a
            CUDA GPU or PhysX's GPU library (the message says what to use instead).
    """
    import argparse

    try:
        backend_device(resolve_backend_name(value))
    except (ValueError, RuntimeError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def make_backend(name: str, num_envs: int, env_origins: np.ndarray, config: SimConfig, render: bool = False,
                 render_config=None):
    """Create the backend ``name`` (already resolved) for ``num_envs`` envs at ``env_origins`` (N, 3),
    with a render system per env when ``render`` (``render_config``: a ``RenderConfig``).

    Raises:
        RuntimeError: ``physx_cuda`` without a CUDA GPU or without PhysX's GPU library (the
            message says what to do).
    """
    if name == "physx_cpu":
        from simulo_envs.sim.physx_cpu import PhysxCpuBackend

        return PhysxCpuBackend(num_envs, env_origins, config, render=render, render_config=render_config)
    from simulo_envs.sim.physx_cuda import PhysxCudaBackend

    if name == "physx_cuda_emulated":
        from simulo_envs.sim.gpu_emulator import EmulatedPhysxGpuSystem

        return PhysxCudaBackend(num_envs, env_origins, config, render=render, system_factory=EmulatedPhysxGpuSystem,
                                device=torch.device("cpu"), name=name, render_config=render_config)
    from simulo_envs.sim.gpu_setup import check_cuda, make_physx_gpu_system

    device = backend_device(name)
    check_cuda(device.index)  # before anything is built
    return PhysxCudaBackend(num_envs, env_origins, config, render=render,
                            system_factory=lambda: make_physx_gpu_system(device.index, config.gpu_memory_config), device=device,
                            name="physx_cuda", render_config=render_config)


def engine_versions() -> dict:
    """``{"sapien": SAPIEN's version, "physx": the PhysX version SAPIEN bundles}``, e.g.
    ``{"sapien": "3.0.3", "physx": "5.3.1"}`` (from ``sapien.physx.version()``,
    ``"105.1-physx-5.3.1.patch0"``: the part after ``physx-``, patch level dropped)."""
    import sapien
    import sapien.physx

    physx_version = sapien.physx.version()
    return {"sapien": sapien.__version__, "physx": physx_version.split("physx-")[-1].split(".patch")[0]}


__all__ = ["engine_versions", "SimConfig", "SimBackend", "make_backend", "resolve_backend_name", "backend_device", "sim_backend_arg", "BACKENDS"]
