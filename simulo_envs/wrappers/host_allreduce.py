"""PPO's collectives through shared memory when all CPU ranks share one host (``install``).

rsl-rl-lib's multi-GPU PPO makes three blocking collectives per minibatch: a KL all-reduce and a
learning-rate broadcast (the adaptive schedule) and the gradient all-reduce
(``PPO.reduce_parameters``). On CPU ranks they go through gloo, whose TCP transport hands each
collective from thread to thread and wakes the other process several times: on a 2-core VM a
1-float all-reduce took about 0.3 ms on an idle machine and the all-reduce of FrankaReach-v1's
~41,000 gradient floats about 2 ms, where a shared-memory exchange takes about 0.05 ms
(``docs/distributed.md``, "Throughput").
PyTorch offers no shared-memory transport for CPU tensors, so when every rank of the launch runs
on this host (``torchrun``'s ``LOCAL_WORLD_SIZE == WORLD_SIZE``) these exchanges go through
``HostAllReduce`` instead, with the library's arithmetic:

- each rank copies its flat tensor into its own row of a shared buffer (a file in ``/dev/shm``
  mapped by every rank, unlinked as soon as all have mapped it, so nothing is left behind), then
  publishes the number of the exchange in its flag;
- it waits until every rank's flag has reached that number (polling for up to 1 ms, when the ranks
  have a core each, then sleeping 0.05 ms between polls, so ranks that outnumber the cores or
  share them with other work do not hold each other up), sums the rows in rank
  order (the same float operations on every rank, so all ranks get bit-identical results) and
  divides by the world size: the library's all-reduce SUM, then ``/= world_size``;
- two buffers alternate: a rank can only write buffer ``b`` again after the next exchange, which
  every rank enters only after reading ``b``, so one wait per exchange suffices.

``_HostPPOSync`` wires it into the library's update through its own hooks (see there); the
learning-rate broadcast becomes unnecessary because every rank takes the same decision from the
same averaged KL. The observation normalisers' statistics (6 small all-reduces per update) stay on
gloo. Ordering: the flags are written after the data through x86's total store order, so the fast
path is used on x86-64 Linux only; elsewhere, across machines, on CUDA (NCCL), or with
``SIMULO_HOST_ALLREDUCE=0``, the library's own collectives run.
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

__all__ = ["HostAllReduce", "HostGradientAverager", "host_allreduce_supported", "install"]

_FLAG_BYTES = 64 * 8   # one int64 flag per rank, up to 64 ranks; the gradient rows follow
_SPIN_S = 0.001         # a waiting rank polls without sleeping this long [s] when the ranks have a core each
_SLEEP_S = 0.00005      # then it sleeps this long [s] between polls, leaving its core to others


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


class HostAllReduce:
    """Average float32 tensors across the ranks of one host through shared memory (module docstring).

    Args:
        capacity: the most floats one exchange carries.
        timeout_s: how long to wait for the other ranks before raising ``RuntimeError``.

    Every rank of the default process group must construct it at the same point (it exchanges
    the buffer's file name over the group) and make the same exchanges in the same order.
    """

    def __init__(self, capacity: int, timeout_s: float = 1800.0):
        self.capacity, self.timeout_s = int(capacity), timeout_s
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.exchanges = 0
        # Spinning keeps a waiting rank's core awake (a sleeping vCPU takes long to wake); it only pays
        # while every rank has a core of its own, otherwise the spinner would hold up the rank it waits for.
        self.spin_s = _SPIN_S if self.world_size <= len(os.sched_getaffinity(0)) else 0.0
        size = _FLAG_BYTES + 2 * self.world_size * self.capacity * 4
        name = [None]
        if self.rank == 0:
            handle, path = tempfile.mkstemp(prefix="simulo_allreduce_", dir="/dev/shm")
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

    def accepts(self, tensors: list[torch.Tensor]) -> bool:
        """Whether ``average_`` can take these tensors (float32 on the CPU, at most ``capacity`` floats)."""
        return (sum(t.numel() for t in tensors) <= self.capacity
                and all(t.dtype == torch.float32 and t.device.type == "cpu" for t in tensors))

    def average_(self, tensors: list[torch.Tensor]) -> None:
        """Replace each tensor by its mean over the ranks, in place: the rows summed in rank order,
        then divided by the world size (bit-identical on every rank). Raises ``ValueError`` for
        tensors ``accepts`` refuses, ``RuntimeError`` when a rank does not arrive within the timeout."""
        if not self.accepts(tensors):
            raise ValueError("HostAllReduce takes float32 CPU tensors of at most "
                             f"{self.capacity} floats in all")
        numel = sum(t.numel() for t in tensors)
        self.exchanges += 1
        rows = self._rows[self.exchanges % 2, :, :numel]
        torch.cat([t.reshape(-1) for t in tensors], out=rows[self.rank])
        self._flags[self.rank] = self.exchanges       # after the data (x86 store order)
        self._wait(self.exchanges)
        total = rows[0].clone()
        for r in range(1, self.world_size):
            total += rows[r]
        total /= self.world_size
        offset = 0
        for t in tensors:
            t.copy_(total[offset:offset + t.numel()].view_as(t))
            offset += t.numel()

    def _wait(self, exchange: int) -> None:
        flags = self._flags
        if int(flags.min()) >= exchange:
            return
        start = time.perf_counter()
        while int(flags.min()) < exchange:
            waited = time.perf_counter() - start
            if waited < self.spin_s:
                continue
            if waited > self.timeout_s:
                late = [r for r in range(self.world_size) if flags[r] < exchange]
                raise RuntimeError(f"rank {self.rank}: ranks {late} did not reach exchange {exchange} "
                                   f"within {self.timeout_s:.0f} s")
            time.sleep(_SLEEP_S)

    def close(self) -> None:
        """Release the shared buffer (it is also released when the process exits)."""
        self._rows = self._flags = None
        try:
            self._map.close()
        except BufferError:   # a tensor still refers to it: the process exit releases it
            pass


class HostGradientAverager:
    """``PPO.reduce_parameters`` through a ``HostAllReduce``: averages the gradients of ``params()``
    (the same parameters in the same order on every rank) in place; gradients the exchange does not
    accept (not float32, more than its capacity) go to ``fallback`` (the library's all-reduce)."""

    def __init__(self, exchange: HostAllReduce, params: Callable[[], Iterable[torch.nn.Parameter]],
                 fallback: Callable[[], None]):
        self.exchange, self.params, self.fallback = exchange, params, fallback
        self.exchanges = 0

    def __call__(self) -> None:
        grads = [p.grad for p in self.params() if p.grad is not None]
        if not self.exchange.accepts(grads):
            return self.fallback()
        self.exchange.average_(grads)
        self.exchanges += 1


class _HostPPOSync:
    """The collectives of rsl-rl's ``PPO.update`` for one host's ranks, with none over gloo:

    ``alg.is_multi_gpu`` is switched off, so the library's update makes no collective of its own;
    instead, (1) the actor's ``get_kl_divergence`` returns the KL averaged over the ranks (the
    library's ``kl_mean``, all-reduced and divided by the world size), so every rank takes the
    adaptive learning-rate decision rank 0 would take and broadcast (``gpu_global_rank`` 0 on every
    rank: the same rule on the same numbers; the rate is rounded to float32 before each optimizer
    step, as the library's broadcast of it as a float32 tensor does); (2) once the backward pass
    has accumulated every parameter's gradient, the gradients are averaged
    (``HostGradientAverager``), before the library clips them and steps. The normalisers'
    statistics still go over gloo (once per update).
    A step without that averaging raises ``RuntimeError`` instead of letting the ranks drift apart.
    """

    def __init__(self, alg, exchange: HostAllReduce, params: list, library_reduce: Callable[[], None]):
        self.exchange = exchange
        self.gradients = HostGradientAverager(exchange, lambda: params, library_reduce)
        self.kl_exchanges = 0
        self._pending, self._averaged, self._count = len(params), False, 0
        self._alg, self._adaptive = alg, alg.desired_kl is not None and alg.schedule == "adaptive"
        kl_divergence = alg.actor.get_kl_divergence

        def global_kl(old_params, new_params):
            kl = kl_divergence(old_params, new_params)
            mean = torch.mean(kl).reshape(1)
            if exchange.accepts([mean]):
                exchange.average_([mean])
            else:
                dist.all_reduce(mean)
                mean /= exchange.world_size
            self.kl_exchanges += 1
            return mean   # the library takes its mean: the mean over all ranks' samples

        for param in params:
            param.register_post_accumulate_grad_hook(self._accumulated)
        alg.optimizer.register_step_pre_hook(self._before_step)
        alg.actor.get_kl_divergence = global_kl
        alg.is_multi_gpu, alg.gpu_global_rank = False, 0

    def _accumulated(self, _param) -> None:
        self._count += 1
        if self._count == self._pending:
            self._count = 0
            self.gradients()
            self._averaged = True

    def _before_step(self, *_args) -> None:
        if not self._averaged:
            raise RuntimeError("a PPO optimizer step without gradient averaging across ranks: the backward pass "
                               "did not reach every parameter")
        self._averaged = False
        if self._adaptive:   # the library broadcasts the rate as a float32 tensor: the same rounding here
            alg = self._alg
            alg.learning_rate = torch.tensor(alg.learning_rate, dtype=torch.float32).item()
            for group in alg.optimizer.param_groups:
                group["lr"] = alg.learning_rate


def install(alg, device: str) -> Optional[_HostPPOSync]:
    """Make ``alg`` (an rsl-rl ``PPO`` of one rank) average its gradients and KL through shared
    memory when ``host_allreduce_supported(device)`` (``_HostPPOSync``); returns the installed
    sync, or ``None`` (the library's own collectives stay)."""
    if not host_allreduce_supported(device):
        return None
    groups = [alg.actor.parameters(), alg.critic.parameters()]
    if alg.rnd:
        groups.append(alg.rnd.parameters())
    params = [p for group in groups for p in group if p.requires_grad]
    return _HostPPOSync(alg, HostAllReduce(sum(p.numel() for p in params)), params, alg.reduce_parameters)
