"""Data-parallel training under ``torchrun``: which rank this process is, its process group, its env seeds.

``torchrun --nproc_per_node=P scripts/train.py ...`` starts P processes and sets, in each, the
variables read here (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``; ``MASTER_ADDR``/``MASTER_PORT`` for
the rendezvous, used by ``torch.distributed.init_process_group``'s default ``env://`` method).
A plain ``python scripts/train.py`` sets none of them: one rank, no process group.

Each rank builds its own share of the envs and one copy of the policy; rsl-rl-lib averages the PPO
gradients over the group (``rsl_rl/utils/utils.py: reduce_gradients_in_buckets``), so every rank
applies the same update. The backend is NCCL for CUDA devices and gloo for the CPU (the only
backend torch offers for CPU tensors across machines).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

__all__ = ["RankInfo", "rank_info", "rank_device", "check_device", "rank_seeds", "init_process_group",
           "close_process_group"]


@dataclass(frozen=True)
class RankInfo:
    """Where this process sits in a ``torchrun`` launch.

    Attributes:
        rank: global rank in ``[0, world_size)``; rank 0 writes logs, checkpoints and evaluations.
        local_rank: rank on this machine (selects the GPU ``cuda:<local_rank>``).
        world_size: number of processes over all machines (1 outside ``torchrun``).
    """

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1

    @property
    def distributed(self) -> bool:
        """True when more than one process trains together."""
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """True on rank 0, the one process that writes files and prints progress."""
        return self.rank == 0


def rank_info() -> RankInfo:
    """This process's rank, local rank and world size from ``torchrun``'s environment variables.

    Raises:
        ValueError: the variables are not integers, or a rank is outside ``[0, WORLD_SIZE)``.
    """
    try:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError as error:
        raise ValueError(f"RANK, LOCAL_RANK and WORLD_SIZE must be integers (torchrun sets them): {error}") from None
    if world_size < 1 or not 0 <= rank < world_size or not 0 <= local_rank < world_size:
        raise ValueError(f"inconsistent torchrun variables: RANK={rank}, LOCAL_RANK={local_rank}, "
                         f"WORLD_SIZE={world_size}")
    return RankInfo(rank=rank, local_rank=local_rank, world_size=world_size)


def rank_device(device: str, info: RankInfo) -> str:
    """The device this rank's networks use: ``"cuda"`` becomes ``"cuda:<local_rank>"`` (one GPU per
    process, as rsl-rl-lib requires); any other device string is returned unchanged.

    Raises:
        ValueError: with several ranks, a CUDA device other than this rank's ``cuda:<local_rank>``.
    """
    if device == "cuda":
        return f"cuda:{info.local_rank}"
    if info.distributed and device.startswith("cuda") and device != f"cuda:{info.local_rank}":
        raise ValueError(f"under torchrun each rank uses its own GPU: give --device cuda "
                         f"(rank {info.rank} takes cuda:{info.local_rank}), not {device!r}")
    return device


def check_device(device: str) -> str:
    """``device`` if this machine has it: ``"cpu"``, or a CUDA device (``"cuda"``, ``"cuda:N"``) when
    torch sees a GPU (and GPU ``N``). Called before any work, so a training or an evaluation asked
    to run where it cannot fails at once.

    Raises:
        ValueError: not a device string torch knows; a CUDA device on a machine without CUDA (a
            torch build without CUDA support, or no GPU visible) or with fewer GPUs; any other
            device type (the message says which devices there are).
    """
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device {device!r} is not a device torch knows (cpu, cuda, cuda:N): {error}") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            why = ("this torch build has no CUDA support" if not torch.backends.cuda.is_built()
                   else "torch sees no CUDA GPU on this machine")
            raise ValueError(f"device {device!r}: {why} (torch {torch.__version__}); use --device cpu")
        count = torch.cuda.device_count()
        if parsed.index is not None and parsed.index >= count:
            raise ValueError(f"device {device!r}: this machine has {count} CUDA GPU{'s' if count != 1 else ''} "
                             f"(cuda:0 .. cuda:{count - 1})")
    elif parsed.type != "cpu":
        raise ValueError(f"device {device!r}: the training and evaluation code runs on cpu or cuda[:N]")
    return device


def rank_seeds(seed: int, info: RankInfo, envs_per_rank: int) -> list[int]:
    """The env seeds of this rank: those a single process with ``world_size * envs_per_rank`` envs
    reset with ``seed`` gives to envs ``rank * n ... rank * n + n - 1`` (``BaseEnv.reset``: env ``i``
    of a batch seeded ``s`` takes ``s + i``), so ranks never share a seed and the union of all ranks'
    episodes is the single-process run's."""
    start = seed + info.rank * envs_per_rank
    return list(range(start, start + envs_per_rank))


def init_process_group(info: RankInfo, device: str) -> None:
    """Join the ``torchrun`` process group: NCCL when ``device`` is a CUDA device, gloo otherwise.

    Does nothing for a single process or when the group already exists. Rendezvous uses
    ``MASTER_ADDR``/``MASTER_PORT`` (set by ``torchrun`` from ``--rdzv-endpoint`` or ``--standalone``).

    Raises:
        ValueError: a CUDA device that is not this rank's ``cuda:<local_rank>``.
    """
    if not info.distributed or dist.is_initialized():
        return
    cuda = torch.device(device).type == "cuda"
    if cuda:
        expected = f"cuda:{info.local_rank}"
        if device != expected:
            raise ValueError(f"rank {info.rank} must use {expected} (one GPU per process), got {device!r}")
        torch.cuda.set_device(info.local_rank)
    dist.init_process_group(backend="nccl" if cuda else "gloo", rank=info.rank, world_size=info.world_size)


def close_process_group() -> None:
    """Leave the process group (if any), so the process exits without torch's warning."""
    if dist.is_initialized():
        dist.destroy_process_group()
