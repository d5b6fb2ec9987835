"""``HostGradientAverager``: PPO's gradient averaging through shared memory when all ranks share one CPU host.

rsl-rl-lib averages the gradients of every PPO minibatch with one ``torch.distributed.all_reduce``
(``PPO.reduce_parameters``). On CPU ranks that all-reduce goes through gloo, whose TCP transport
hands each collective from thread to thread and wakes the other process several times: on a
2-core VM one all-reduce of FrankaReach-v1's ~41,000 gradient floats took about 2 ms on an idle
machine and 3 ms between two ranks coming out of their backward passes, where a shared-memory
exchange takes about 0.05 ms (``docs/distributed.md``, "Throughput"). PyTorch offers no
shared-memory transport for CPU tensors, so when every rank of the launch runs on this host
(``torchrun``'s ``LOCAL_WORLD_SIZE == WORLD_SIZE``) the gradients are averaged here instead:

- each rank copies its flat gradient into its own row of a shared buffer (a file in ``/dev/shm``
  mapped by every rank, unlinked as soon as all have mapped it, so nothing is left behind), then
  publishes the number of the exchange in its flag;
- it waits until every rank's flag has reached that number (spinning, then yielding the core, then
  sleeping, so ranks that outnumber the cores do not starve each other), sums the rows in rank
  order (the same float operations on every rank, so all ranks get bit-identical gradients), divides
  by the world size and writes the result back into the gradients: the library's arithmetic
  (sum over ranks, then ``/= world_size``);
- two buffers alternate: a rank can only write buffer ``b`` again after the next exchange, which
  every rank enters only after reading ``b``, so one wait per exchange suffices.

The rest of rsl-rl's collectives (the KL all-reduce and learning-rate broadcast of each minibatch,
the normalisers' statistics) stay on gloo. Ordering: the flags are written after the data through
x86's total store order, so the fast path is used on x86-64 Linux only; elsewhere, across machines,
or on CUDA (NCCL) the library's own all-reduce runs.
"""

from __future__ import annotations

import mmap
import os
import platform
import tempfile
import time
from typing import Callable, Iterable, Optional

import numpy as np
import torch
import torch.distributed as dist

__all__ = ["HostGradientAverager", "host_allreduce_supported"]

_FLAG_BYTES = 64 * 8   # one int64 flag per rank, up to 64 ranks; the gradient rows follow
_TIGHT_POLLS = 500      # polls (about 1 us each) before a waiting rank starts yielding its core


def host_allreduce_supported(device: str) -> bool:
    """Whether this process can average gradients through shared memory: a CPU device, x86-64
    Linux with ``/dev/shm``, an initialised process group, and every rank on this host
    (``LOCAL_WORLD_SIZE`` equal to ``WORLD_SIZE``, both set by ``torchrun``), and not switched off
    with the environment variable ``SIMULO_HOST_ALLREDUCE=0``."""
    if torch.device(device).type != "cpu" or not dist.is_initialized():
        return False
    if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    if not os.path.isdir("/dev/shm") or dist.get_world_size() > 64:
        return False
    if os.environ.get("SIMULO_HOST_ALLREDUCE", "1") == "0":
        return False
    return os.environ.get("LOCAL_WORLD_SIZE") == str(dist.get_world_size())


class HostGradientAverager:
    """Average gradients across the ranks of one host through shared memory (module docstring).

    Args:
        params: a callable returning the parameters whose gradients are averaged, in the same
            order on every rank (``PPO``'s actor, critic and RND parameters).
        capacity: the most gradient floats one exchange carries (the parameters' total size).
        fallback: called instead when an exchange cannot go through shared memory (gradients
            that are not float32, or more of them than ``capacity``): the library's own averaging.
        timeout_s: how long to wait for the other ranks before raising ``RuntimeError``.

    Every rank of the default process group must construct it at the same point (it exchanges
    the buffer's file name over the group), and call it for the same exchanges in the same order.
    """

    def __init__(self, params: Callable[[], Iterable[torch.nn.Parameter]], capacity: int,
                 fallback: Callable[[], None], timeout_s: float = 1800.0):
        self.params, self.capacity, self.fallback, self.timeout_s = params, int(capacity), fallback, timeout_s
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.exchanges = 0
        size = _FLAG_BYTES + 2 * self.world_size * self.capacity * 4
        name = [None]
        if self.rank == 0:
            handle, path = tempfile.mkstemp(prefix="simulo_grads_", dir="/dev/shm")
            os.ftruncate(handle, size)
            os.close(handle)
            name[0] = path
        dist.broadcast_object_list(name, src=0)
        handle = os.open(name[0], os.O_RDWR)
        try:
            self._map = mmap.mmap(handle, size)
        finally:
            os.close(handle)
        dist.barrier()   # every rank has mapped the file: it can go (the mappings stay)
        if self.rank == 0:
            os.unlink(name[0])
        self._flags = np.frombuffer(self._map, dtype=np.int64, count=self.world_size)
        rows = torch.frombuffer(self._map, dtype=torch.float32, offset=_FLAG_BYTES,
                                count=2 * self.world_size * self.capacity)
        self._rows = rows.view(2, self.world_size, self.capacity)

    def __call__(self) -> None:
        """Average the gradients of ``params()`` over the ranks, in place (``PPO.reduce_parameters``)."""
        grads = [p.grad for p in self.params() if p.grad is not None]
        numel = sum(g.numel() for g in grads)
        if numel > self.capacity or any(g.dtype != torch.float32 for g in grads):
            return self.fallback()
        self.exchanges += 1
        rows = self._rows[self.exchanges % 2, :, :numel]
        torch.cat([g.reshape(-1) for g in grads], out=rows[self.rank])
        self._flags[self.rank] = self.exchanges       # after the data (x86 store order)
        self._wait(self.exchanges)
        total = rows[0].clone()
        for r in range(1, self.world_size):
            total += rows[r]
        total /= self.world_size
        offset = 0
        for g in grads:
            g.copy_(total[offset:offset + g.numel()].view_as(g))
            offset += g.numel()

    def _wait(self, exchange: int) -> None:
        flags, polls, start = self._flags, 0, None
        while int(flags.min()) < exchange:
            polls += 1
            if polls < _TIGHT_POLLS:
                continue
            if start is None:
                start = time.monotonic()
            waited = time.monotonic() - start
            if waited > self.timeout_s:
                late = [r for r in range(self.world_size) if flags[r] < exchange]
                raise RuntimeError(f"rank {self.rank}: ranks {late} did not reach gradient exchange {exchange} "
                                   f"within {self.timeout_s:.0f} s")
            if waited < 0.01:
                os.sched_yield()
            else:
                time.sleep(0.0001)

    def close(self) -> None:
        """Release the shared buffer (it is also released when the process exits)."""
        self._rows = self._flags = None
        try:
            self._map.close()
        except BufferError:   # a gradient view still refers to it: the process exit releases it
            pass


def install(alg, device: str) -> Optional[HostGradientAverager]:
    """Route ``alg.reduce_parameters`` (an rsl-rl ``PPO``) through a ``HostGradientAverager`` when
    ``host_allreduce_supported(device)``; returns it, or ``None`` (the library's own all-reduce stays)."""
    if not host_allreduce_supported(device):
        return None

    def params():
        groups = [alg.actor.parameters(), alg.critic.parameters()]
        if alg.rnd:
            groups.append(alg.rnd.parameters())
        return [p for group in groups for p in group]

    library = alg.reduce_parameters
    averager = HostGradientAverager(params, sum(p.numel() for p in params()), library)
    alg.reduce_parameters = averager
    return averager
