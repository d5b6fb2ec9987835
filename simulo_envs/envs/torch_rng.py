"""Per-env torch draws: ``torch.rand`` & co. inside ``_initialize_episode`` draw from each reset
env's own ``torch.Generator``, so a seeded reset is reproducible and env ``k``'s draws do not
depend on ``num_envs`` or on which other envs reset with it.

The rule (while ``per_env_torch_draws(generators)`` is active; ``BaseEnv`` activates it around
``_initialize_episode`` and the scene-building hooks):

- a random call without an explicit ``generator`` whose result has a leading dimension equal to
  the number of reset envs ``k`` is drawn row by row: row ``j`` comes from the generator of
  the ``j``-th reset env, exactly as that env would draw the row alone. So draw per-env data
  with shape ``(len(env_idx), ...)``;
- any other such call (a scalar, a ``(3,)`` draw while ``k != 3``, ``torch.randperm``) is drawn
  whole from the first reset env's generator;
- random functions not listed below (including wrappers such as ``torch.nn.init.uniform_``,
  whose inner calls run outside this hook) use torch's global generator, forked for the duration and
  seeded from the first reset env's episode seed and reset count (reproducible, but tied to
  which env is first in the batch);
- a call that passes its own ``generator`` is left alone.

Draws are made on the CPU and moved to the requested device, so CPU and CUDA envs draw the same
numbers. Handled: ``torch.rand``, ``randn``, ``randint``, ``normal``, ``rand_like``,
``randn_like``, ``randint_like``, ``bernoulli``, ``multinomial``, ``poisson``, ``randperm``, and
the in-place ``Tensor.uniform_``, ``normal_``, ``random_``, ``bernoulli_``, ``exponential_``,
``cauchy_``, ``log_normal_``, ``geometric_`` (``torch.distributions`` samplers call these).
"""

from __future__ import annotations

import contextlib
from typing import Sequence

import torch
from torch.overrides import TorchFunctionMode

_FACTORIES = {torch.rand, torch.randn}
_LIKE = {torch.rand_like: torch.rand, torch.randn_like: torch.randn}
_TENSOR_INPUT = {torch.bernoulli, torch.multinomial, torch.poisson}
_INPLACE = {getattr(torch.Tensor, name) for name in (
    "uniform_", "normal_", "random_", "bernoulli_", "exponential_", "cauchy_", "log_normal_", "geometric_")}
_HANDLED = (_FACTORIES | set(_LIKE) | _TENSOR_INPUT | _INPLACE
            | {torch.randint, torch.randint_like, torch.normal, torch.randperm})


def _size_arg(args: tuple) -> tuple[int, ...]:
    """The ``size`` of ``torch.rand(2, 3)`` / ``torch.rand((2, 3))``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        return tuple(int(s) for s in args[0])
    return tuple(int(s) for s in args)


def _stack(rows: list[torch.Tensor], shape: tuple[int, ...], like: torch.Tensor | None = None) -> torch.Tensor:
    if rows:
        return torch.stack(rows)
    return torch.empty(shape) if like is None else like.new_empty(shape)


class _PerEnvDraws(TorchFunctionMode):
    def __init__(self, generators: Sequence[torch.Generator]):
        super().__init__()
        self.gens = list(generators)
        self.k = len(self.gens)

    # -------------------------------------------------------------- dispatch
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if kwargs.get("generator") is not None or not self.k or func not in _HANDLED:
            return func(*args, **kwargs)
        if kwargs.get("out") is not None:  # filling a given tensor: drawn whole from the first env
            return func(*args, **{**kwargs, "generator": self.gens[0]})
        kwargs.pop("out", None)
        kwargs.pop("generator", None)
        if func in _FACTORIES:
            return self._factory(func, args, kwargs)
        if func is torch.randint:
            return self._randint(args, kwargs)
        if func in _LIKE:
            return self._like(_LIKE[func], args, kwargs)
        if func is torch.randint_like:
            return self._randint_like(args, kwargs)
        if func is torch.normal:
            return self._normal(args, kwargs)
        if func in _TENSOR_INPUT:
            return self._tensor_input(func, args, kwargs)
        if func in _INPLACE:
            return self._inplace(func, args, kwargs)
        return self._on_cpu(func, args, kwargs, self.gens[0])  # torch.randperm

    # -------------------------------------------------------------- helpers
    @staticmethod
    def _on_cpu(func, args, kwargs, gen):
        """``func`` drawn on the CPU from ``gen``, moved to the requested device."""
        device = kwargs.pop("device", None)
        requires_grad = kwargs.pop("requires_grad", False)
        out = func(*args, generator=gen, device="cpu", **kwargs)
        if device is not None:
            out = out.to(device)
        return out.requires_grad_() if requires_grad else out

    def _rows(self, draw_row, shape: tuple[int, ...], device, requires_grad: bool, like=None):
        rows = [draw_row(j, gen) for j, gen in enumerate(self.gens)]
        out = _stack(rows, shape, like)
        if device is not None:
            out = out.to(device)
        return out.requires_grad_() if requires_grad else out

    def _factory(self, func, args, kwargs):
        size = _size_arg(args) if args else tuple(kwargs.pop("size"))
        device = kwargs.pop("device", None)
        requires_grad = kwargs.pop("requires_grad", False)
        if len(size) == 0 or size[0] != self.k:
            out = func(size, generator=self.gens[0], device="cpu", **kwargs)
            out = out.to(device) if device is not None else out
            return out.requires_grad_() if requires_grad else out
        return self._rows(lambda j, g: func(size[1:], generator=g, device="cpu", **kwargs), size, device, requires_grad)

    def _randint(self, args, kwargs):
        # randint(high, size) or randint(low, high, size); size may be a keyword.
        args = list(args)
        size = tuple(kwargs.pop("size")) if "size" in kwargs else tuple(args.pop())
        if "high" in kwargs:
            high = kwargs.pop("high")
            low = kwargs.pop("low") if "low" in kwargs else (args[0] if args else 0)
        elif len(args) == 1:
            low, high = kwargs.pop("low", 0), args[0]
        else:
            low, high = args[0], args[1]
        device = kwargs.pop("device", None)
        requires_grad = kwargs.pop("requires_grad", False)

        def draw(shape, gen):
            return torch.randint(low, high, shape, generator=gen, device="cpu", **kwargs)

        if len(size) == 0 or size[0] != self.k:
            out = draw(size, self.gens[0])
            return out.to(device) if device is not None else out
        return self._rows(lambda j, g: draw(size[1:], g), size, device, requires_grad)

    def _like(self, factory, args, kwargs):
        x = args[0]
        dtype = kwargs.pop("dtype", None) or x.dtype
        device = kwargs.pop("device", None) or x.device
        requires_grad = kwargs.pop("requires_grad", False)
        kwargs.pop("memory_format", None)
        kwargs.pop("layout", None)
        return self._factory(factory, (tuple(x.shape),), {"dtype": dtype, "device": device,
                                                          "requires_grad": requires_grad, **kwargs})

    def _randint_like(self, args, kwargs):
        x, bounds = args[0], list(args[1:])
        if "high" in kwargs:
            bounds = [kwargs.pop("low", 0), kwargs.pop("high")] if "low" in kwargs or not bounds else bounds + [kwargs.pop("high")]
        dtype = kwargs.pop("dtype", None) or x.dtype
        device = kwargs.pop("device", None) or x.device
        kwargs.pop("memory_format", None)
        kwargs.pop("layout", None)
        return self._randint((*bounds, tuple(x.shape)), {"dtype": dtype, "device": device, **kwargs})

    def _normal(self, args, kwargs):
        args = list(args)
        mean = kwargs.pop("mean") if "mean" in kwargs else (args.pop(0) if args else 0.0)
        std = kwargs.pop("std") if "std" in kwargs else (args.pop(0) if args else 1.0)
        if not isinstance(mean, torch.Tensor) and not isinstance(std, torch.Tensor):
            size = tuple(kwargs.pop("size") if "size" in kwargs else (args.pop(0) if args else ()))
            return self._factory(lambda shape, **kw: torch.normal(mean, std, shape, **kw), (size,), kwargs)
        ref = mean if isinstance(mean, torch.Tensor) else std
        shape = torch.broadcast_shapes(tuple(mean.shape) if isinstance(mean, torch.Tensor) else (),
                                       tuple(std.shape) if isinstance(std, torch.Tensor) else ())
        mean_b = mean.expand(shape) if isinstance(mean, torch.Tensor) else mean
        std_b = std.expand(shape) if isinstance(std, torch.Tensor) else std
        device = ref.device

        def cpu(v, j=None):
            if not isinstance(v, torch.Tensor):
                return v
            v = v if j is None else v[j]
            return v.detach().cpu()

        if len(shape) == 0 or shape[0] != self.k:
            mean_c, std_c = cpu(mean_b), cpu(std_b)
            if not isinstance(mean_c, torch.Tensor):
                mean_c = torch.full(shape, float(mean_c))
            return torch.normal(mean_c, std_c, generator=self.gens[0]).to(device)

        def draw(j, gen):
            m, s = cpu(mean_b, j), cpu(std_b, j)
            if not isinstance(m, torch.Tensor):
                m = torch.full(tuple(s.shape), float(m))
            return torch.normal(m, s, generator=gen)

        return self._rows(draw, shape, device, False, like=ref)

    def _tensor_input(self, func, args, kwargs):
        x, rest = args[0], args[1:]
        if x.ndim == 0 or x.shape[0] != self.k or (func is torch.multinomial and x.ndim == 1):
            return func(x.detach().cpu(), *rest, generator=self.gens[0], **kwargs).to(x.device)
        return self._rows(lambda j, g: func(x[j].detach().cpu(), *rest, generator=g, **kwargs),
                          tuple(x.shape), x.device, False, like=x)

    def _inplace(self, func, args, kwargs):
        x, rest = args[0], args[1:]
        if x.ndim == 0 or x.shape[0] != self.k:
            tmp = torch.empty(tuple(x.shape), dtype=x.dtype)
            func(tmp, *rest, generator=self.gens[0], **kwargs)
            with torch.no_grad():
                x.copy_(tmp)
            return x
        with torch.no_grad():
            for j, gen in enumerate(self.gens):
                tmp = torch.empty(tuple(x.shape[1:]), dtype=x.dtype)
                func(tmp, *rest, generator=gen, **kwargs)
                x[j].copy_(tmp)
        return x


@contextlib.contextmanager
def per_env_torch_draws(generators: Sequence[torch.Generator], fallback_seed: int = 0,
                        device: torch.device | str = "cpu"):
    """Draw torch random numbers per env while the block runs (the rule is in the module docstring).

    Args:
        generators: one CPU ``torch.Generator`` per reset env, in ``env_idx`` order.
        fallback_seed: seed of torch's (forked) global generator for the random functions not handled.
        device: the env's device; its global generator is forked too when it is a CUDA device.
    """
    gens = list(generators)
    if not gens:
        yield
        return
    device = torch.device(device)
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(int(fallback_seed))
        with _PerEnvDraws(gens):
            yield
