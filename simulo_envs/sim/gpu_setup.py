"""Making SAPIEN's PhysX GPU system, with errors that say what to do.

SAPIEN 3.0.3 does not ship PhysX's GPU library. ``sapien.physx.enable_gpu()`` loads
``~/.sapien/physx/<PhysX version>/libPhysXGpu_64.so`` and, when the file is missing, downloads
it from SAPIEN's ``physx-precompiled`` release of that version (``linux-so.zip``). This
framework never downloads anything at run time: without the file it raises and names the path.
"""

from __future__ import annotations

from pathlib import Path

import torch

CPU_ALTERNATIVE = ("use sim_backend='physx_cpu' (or 'auto', which picks it here), or 'physx_cuda_emulated' to run "
                   "the GPU code path on the CPU")


def physx_gpu_library_path() -> Path:
    """Where SAPIEN looks for PhysX's GPU library: ``~/.sapien/physx/<physx.version()>/libPhysXGpu_64.so``
    (SAPIEN 3.0.3's ``sapien/physx/__init__.py``)."""
    import sapien.physx as physx

    return Path.home() / ".sapien" / "physx" / physx.version() / "libPhysXGpu_64.so"


def check_cuda(device_index: int) -> None:
    """Raise RuntimeError unless torch sees CUDA device ``device_index``."""
    if not torch.cuda.is_available():
        raise RuntimeError(f"sim_backend='physx_cuda' needs a CUDA GPU and torch finds none; {CPU_ALTERNATIVE}")
    count = torch.cuda.device_count()
    if device_index >= count:
        raise RuntimeError(f"sim_backend='physx_cuda:{device_index}': this machine has {count} CUDA device(s) "
                           f"(cuda:0 to cuda:{count - 1})")


def physx_gpu_available() -> bool:
    """True when a CUDA GPU is visible and PhysX's GPU library is in place (what ``"auto"`` checks)."""
    return torch.cuda.is_available() and physx_gpu_library_path().is_file()


def enable_physx_gpu() -> None:
    """Load PhysX's GPU library (``sapien.physx.enable_gpu()``) once it is in place.

    Raises:
        RuntimeError: the library file is missing (the message gives the exact path and PhysX
            version), or it failed to load.
    """
    import sapien.physx as physx

    if physx.is_gpu_enabled():
        return
    path = physx_gpu_library_path()
    if not path.is_file():
        raise RuntimeError(
            f"sim_backend='physx_cuda' needs PhysX's GPU library, which SAPIEN does not ship: place "
            f"libPhysXGpu_64.so (PhysX {physx.version()}) at {path}. SAPIEN's own "
            f"sapien.physx.enable_gpu() downloads it there on a machine with internet access (from SAPIEN's "
            f"physx-precompiled release {physx.version()}, linux-so.zip); this framework downloads nothing. "
            f"Without it, {CPU_ALTERNATIVE}.")
    try:
        physx.enable_gpu()
    except (OSError, RuntimeError) as exc:
        raise RuntimeError(f"PhysX's GPU library at {path} (PhysX {physx.version()}) failed to load: {exc}") from exc


def make_physx_gpu_system(device_index: int, memory_overrides=None):
    """A ``PhysxGpuSystem`` on ``cuda:<device_index>`` with GPU memory sized for thousands of envs.

    The memory settings are ManiSkill 3.0.1's for PickCube-v1 (``GPUMemoryConfig``:
    ``found_lost_pairs_capacity = 2**25``, ``max_rigid_patch_count = 2**18``,
    ``max_rigid_contact_count = 2**19``); SAPIEN's defaults overflow near a thousand envs.
    ``memory_overrides`` (``SimConfig.gpu_memory_config``) replaces any of them or sets others.
    """
    import sapien.physx as physx

    check_cuda(device_index)
    enable_physx_gpu()
    memory = {"found_lost_pairs_capacity": 2**25, "max_rigid_patch_count": 2**18, "max_rigid_contact_count": 2**19}
    physx.set_gpu_memory_config(**{**memory, **dict(memory_overrides or {})})
    return physx.PhysxGpuSystem(device=f"cuda:{device_index}")
