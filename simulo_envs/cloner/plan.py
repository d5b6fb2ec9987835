"""The clone plan: which prototypes exist, where each is cloned to, and which envs it fills.

A :class:`ClonePlan` is built once, read through :mod:`simulo_envs.cloner.query`, and executed
by the simulator backend (not this module). Each *row* pairs one prototype root (a concrete
path that exists once in the scene) with a destination template (one ``"{}"`` clone slot, see
:mod:`simulo_envs.cloner.path`) and a bool mask of the envs it populates.

Constructors: :func:`clone_plan_from_env_0` (every env copies one prototype env, one row);
:func:`make_clone_plan` (one row per spawn variant of every env-scoped asset cfg, assigned to envs
by a clone strategy, :func:`sequential` or :func:`random`), drawing from the weighted table
:func:`make_valid_clone_combinations` builds.

Adaptation of the isaaclab-cloner seed (we have no USD stage; the Scene's prim-path registry
plays its role): an *asset cfg* is any object with a ``prim_path`` (str) and a ``spawn``
attribute. ``spawn=None`` means "nothing to spawn". A multi-asset spawner config
(``assets_cfg``), a multi-USD-file config (a list of ``usd_path``) or a spawn exposing a
``variants`` sequence declares one spawn variant per item (:func:`num_spawn_variants`); any
other spawn declares one. :func:`clone_plan_from_env_0` reads the cfgs from the replication
queue (:mod:`simulo_envs.cloner.replication_queue`) unless given them. The env root is the template
``env_template`` (default ``"/World/envs/env_{}"``), not a hard-coded prefix. Executing a plan
(``replicate``, ``ReplicateSession``, ``queue_replication``) lives in
:mod:`simulo_envs.cloner.replicate`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from . import path as pth
from .grid import grid_transforms
from .replication_queue import REPLICATION_QUEUE

__all__ = [
    "DEFAULT_ENV_TEMPLATE", "ClonePlan", "CloneCfg", "InclusionSet", "grid_transforms", "num_spawn_variants",
    "make_valid_clone_combinations", "sequential", "random", "make_clone_plan", "clone_plan_from_env_0",
]

DEFAULT_ENV_TEMPLATE = "/World/envs/env_{}"
"""Destination template of one env's root prim; ``{}`` is the env id."""


@dataclass(frozen=True, eq=False)
class ClonePlan:
    """One replication layout. Rows are prototypes; columns of ``clone_mask`` are envs.

    Attributes:
        sources: prototype root paths, one per row (concrete; each exists once in the scene).
        destinations: destination templates with one ``"{}"`` for the env id, one per row.
        clone_mask: bool ``[len(sources), num_clones]``; ``clone_mask[i, j]`` is True when env
            ``env_ids[j]`` gets its copy from row ``i``. A row may populate no env.
        env_ids: int64 ``[num_clones]`` of distinct, non-negative env ids, the numbers
            formatted into the templates; column ``j`` stands for ``env_ids[j]``. ``None``
            means column ``j`` is env ``j``.
        positions: float ``[num_clones, 3]`` world positions of the env origins [m], or None.
        cfg_rows: ``id(cfg)`` -> the row indices that cfg owns.

    Raises:
        ValueError: lengths disagree, a destination is not a valid template, ``env_ids``
            repeats or is negative, or a ``cfg_rows`` index is out of range.
        TypeError: ``clone_mask`` is not a 2-D bool tensor or ``env_ids`` not an int tensor.
    """

    sources: tuple[str, ...]
    destinations: tuple[str, ...]
    clone_mask: torch.Tensor
    env_ids: torch.Tensor | None = None
    positions: torch.Tensor | None = None
    cfg_rows: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", tuple(self.sources))
        object.__setattr__(self, "destinations", tuple(self.destinations))
        mask = self.clone_mask
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.ndim != 2:
            raise TypeError("ClonePlan.clone_mask must be a 2-D bool tensor [rows, num_clones]")
        rows, n = mask.shape
        if len(self.sources) != rows or len(self.destinations) != rows:
            raise ValueError(f"ClonePlan: {len(self.sources)} sources and {len(self.destinations)} "
                             f"destinations for a clone_mask with {rows} rows; all three must agree")
        for s in self.sources:
            pth.relative_to(s, "/")  # type/emptiness check of every source path
        for d in self.destinations:
            pth.split(d)
        if self.env_ids is not None:
            ids = self.env_ids
            if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32) or ids.ndim != 1:
                raise TypeError("ClonePlan.env_ids must be a 1-D integer tensor [num_clones]")
            if ids.numel() != n or (ids < 0).any() or ids.unique().numel() != n:
                raise ValueError(f"ClonePlan.env_ids must hold {n} distinct env ids >= 0, got {ids.tolist()}")
        if self.positions is not None and tuple(self.positions.shape) != (n, 3):
            raise ValueError(f"ClonePlan.positions must have shape ({n}, 3), got {tuple(self.positions.shape)}")
        for key, owned in self.cfg_rows.items():
            if any(not 0 <= r < rows for r in owned):
                raise ValueError(f"ClonePlan.cfg_rows[{key}] = {owned} names a row outside 0..{rows - 1}")

    @property
    def num_clones(self) -> int:
        """Number of target envs (columns of ``clone_mask``)."""
        return self.clone_mask.shape[1]


@dataclass(frozen=True)
class InclusionSet:
    """One legal clone combination: the assets active together, and its relative weight.

    Assets named by *no* combination are active in every row. An asset named by some
    combination is absent (variant ``-1``) from the combinations that do not name it.

    Attributes:
        assets: asset names active in this combination.
        weight: non-negative int; rows contributed relative to the other combinations
            (0 disables the combination).

    Raises:
        ValueError: a repeated or empty asset name, or a negative weight.
        TypeError: ``weight`` is not an int.
    """

    assets: tuple[str, ...]
    weight: int = 1

    def __post_init__(self) -> None:
        assets = (self.assets,) if isinstance(self.assets, str) else tuple(self.assets)
        object.__setattr__(self, "assets", assets)
        if any(not isinstance(a, str) or not a for a in assets) or len(set(assets)) != len(assets):
            raise ValueError(f"InclusionSet.assets must be distinct non-empty names, got {assets}")
        if isinstance(self.weight, bool) or not isinstance(self.weight, int):
            raise TypeError(f"InclusionSet.weight must be an int, got {self.weight!r}")
        if self.weight < 0:
            raise ValueError(f"InclusionSet.weight must be >= 0, got {self.weight}")


def sequential(combos: torch.Tensor, num_clones: int, device: str | torch.device = "cpu") -> torch.Tensor:
    """Clone strategy: env ``j`` takes combination ``j % len(combos)``.

    Args:
        combos: int64 ``[num_combos, num_groups]`` valid combinations (variant index, -1 absent).
        num_clones: number of envs.
        device: device of the result.

    Returns:
        int64 ``[num_clones, num_groups]``, one combination per env.

    >>> sequential(torch.tensor([[0], [1], [2]]), 5).flatten().tolist()
    [0, 1, 2, 0, 1]
    """
    idx = torch.arange(num_clones, device=combos.device) % combos.shape[0]
    return combos[idx].to(device)


def random(combos: torch.Tensor, num_clones: int, device: str | torch.device = "cpu", *,
           generator: torch.Generator | None = None) -> torch.Tensor:
    """Clone strategy: each env draws a combination uniformly, with replacement.

    Args:
        combos, num_clones, device: as :func:`sequential`.
        generator: CPU ``torch.Generator`` to draw from; None uses torch's default generator.
            :func:`make_clone_plan` always passes one seeded from its ``seed``.

    Returns:
        int64 ``[num_clones, num_groups]``.

    >>> g = torch.Generator().manual_seed(0)
    >>> random(torch.tensor([[5]]), 3, generator=g).flatten().tolist()
    [5, 5, 5]
    """
    idx = torch.randint(0, combos.shape[0], (num_clones,), generator=generator)
    return combos.cpu()[idx].to(device)


_STRATEGIES: dict[str, Callable[..., torch.Tensor]] = {"sequential": sequential, "random": random}


@dataclass
class CloneCfg:
    """Configuration of environment replication, as the Scene consumes it.

    Attributes:
        env_template: destination template of one env root; ``{}`` is the env id.
        clone_strategy: ``"sequential"``, ``"random"``, or a callable
            ``(combos, num_clones, device) -> [num_clones, num_groups]``.
        clone_combinations: legal :class:`InclusionSet` combinations; None or empty = every
            variant combination (full cartesian product). A Scene names its assets by their path
            below ``/World`` (``"Block"``), and refuses combinations that leave an object out of
            some env (every env needs each object); weights still shape the layout.
        seed: seed of the generator the ``"random"`` strategy draws from (default 0, so a
            "random" layout is reproducible; pass another seed for another draw).
        device: torch device of the plan's tensors.
        replicate_physics: must be True: every clone is a simulated body here (there is no
            visual-only copy to fall back to); accepted so Isaac Lab cfgs construct.

    Raises:
        ValueError: an invalid ``env_template``, an unknown strategy name, or
            ``replicate_physics`` not True.
    """

    env_template: str = DEFAULT_ENV_TEMPLATE
    clone_strategy: str | Callable[..., torch.Tensor] = "sequential"
    clone_combinations: tuple[InclusionSet, ...] | None = None
    seed: int = 0
    device: str = "cpu"
    replicate_physics: bool = True

    def __post_init__(self) -> None:
        pth.split(self.env_template)
        if isinstance(self.clone_strategy, str) and self.clone_strategy not in _STRATEGIES:
            raise ValueError(f"CloneCfg.clone_strategy must be one of {sorted(_STRATEGIES)} or a callable")
        if self.replicate_physics is not True:
            raise ValueError("CloneCfg.replicate_physics must be True: every clone is a simulated body here "
                             "(there is no visual-only copy)")


def num_spawn_variants(spawn_cfg: Any) -> int:
    """Number of spawn variants one spawner configuration declares.

    Read by duck typing, so Isaac Lab's spawner configs and ours both count:

    - a multi-asset spawner config (an ``assets_cfg`` sequence, Isaac Lab's
      ``MultiAssetSpawnerCfg``): one variant per asset config;
    - a multi-USD-file config (a ``usd_path`` that is a list or tuple, Isaac Lab's
      ``MultiUsdFileCfg``): one variant per path; a single ``usd_path`` string declares 1;
    - a spawn with a ``variants`` sequence (our ``Prop`` / ``MultiShapeProp``): one per item;
    - any other spawn: 1.

    Args:
        spawn_cfg: a spawner configuration or spawn object.

    Returns:
        The variant count, ``>= 1``.

    Raises:
        ValueError: ``spawn_cfg`` is None, or its asset, path or variant list is empty
            (a spawner that can spawn nothing).

    >>> from types import SimpleNamespace
    >>> num_spawn_variants(SimpleNamespace(assets_cfg=["cone", "cuboid", "sphere"]))
    3
    >>> num_spawn_variants(SimpleNamespace(usd_path=["mug.usd", "bowl.usd"]))
    2
    >>> num_spawn_variants(SimpleNamespace(usd_path="mug.usd"))
    1
    >>> num_spawn_variants(SimpleNamespace(variants=["mug.obj", "bowl.obj"]))
    2
    >>> num_spawn_variants(object())
    1
    """
    if spawn_cfg is None:
        raise ValueError("num_spawn_variants: spawn_cfg is None; an asset without a spawn has no variants")
    for attr in ("assets_cfg", "usd_path", "variants"):
        items = getattr(spawn_cfg, attr, None)
        if items is None or (attr == "usd_path" and isinstance(items, str)):
            continue
        if isinstance(items, (str, bytes)) or not hasattr(items, "__len__"):
            raise ValueError(f"num_spawn_variants: {type(spawn_cfg).__name__}.{attr} must be a sequence, "
                             f"got {type(items).__name__}")
        if len(items) == 0:
            raise ValueError(f"num_spawn_variants: {type(spawn_cfg).__name__}.{attr} is empty")
        return len(items)
    return 1


def make_valid_clone_combinations(asset_names: Sequence[str], variant_counts: Sequence[int],
                                  clone_combinations: Sequence[InclusionSet] | None = None,
                                  device: str | torch.device = "cpu", *,
                                  all_asset_names: Sequence[str] | None = None) -> torch.Tensor:
    """Build the weighted table of valid variant combinations.

    Each combination expands to the cartesian product of its active assets' variants. With
    ``L`` the least common multiple of those product sizes, combination ``c`` contributes
    ``weight_c * L`` rows, an equal share per variant tuple. Rows are emitted round-robin --
    ``weight_c`` rows of each combination in turn, each cycling through its own variants -- so
    the first ``sum(weights)`` rows already hold every combination.

    Args:
        asset_names: clone-planned asset names, one per column.
        variant_counts: spawn variants per asset, each ``>= 1``.
        clone_combinations: legal combinations; None or an empty sequence means one
            combination with every asset active (the full cartesian product).
        device: device of the result.
        all_asset_names: the scene's full asset-name list; combinations may name these even
            when they are not clone-planned (such names are ignored).

    Returns:
        int64 ``[num_rows, len(asset_names)]`` of variant indices, ``-1`` where an asset is absent.

    Raises:
        ValueError: no asset names, lengths disagree, a name repeats, a count is < 1, a
            combination names an unknown asset, or every weight is 0.

    >>> make_valid_clone_combinations(["Robot", "Cube"], [2, 1]).tolist()
    [[0, 0], [1, 0]]
    >>> make_valid_clone_combinations(
    ...     ["A", "B"], [1, 2], [InclusionSet(("A",), 1), InclusionSet(("B",), 1)]).tolist()
    [[0, -1], [-1, 0], [0, -1], [-1, 1]]
    """
    names, counts = list(asset_names), list(variant_counts)
    if len(names) != len(counts):
        raise ValueError(f"{len(names)} asset_names but {len(counts)} variant_counts; they must agree")
    if len(set(names)) != len(names):
        raise ValueError(f"asset_names must be distinct, got {names}")
    if not names:
        raise ValueError("make_valid_clone_combinations: expected at least one asset name")
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in counts):
        raise ValueError(f"variant_counts must be ints >= 1, got {counts}")
    if not clone_combinations:  # None or empty: the full cartesian product, as Isaac Lab
        clone_combinations = [InclusionSet(tuple(names), 1)]
    known = set(names) | set(all_asset_names or ())
    claimed: set[str] = set()
    for combo in clone_combinations:
        unknown = [a for a in combo.assets if a not in known]
        if unknown:
            raise ValueError(f"InclusionSet names unknown assets {unknown}; known: {sorted(known)}")
        claimed.update(combo.assets)
    expanded = []
    for combo in clone_combinations:
        if combo.weight == 0:
            continue
        active = set(combo.assets)
        ranges = [range(c) if n in active or n not in claimed else (-1,) for n, c in zip(names, counts)]
        expanded.append((combo.weight, list(itertools.product(*ranges))))
    if not expanded:
        raise ValueError("make_valid_clone_combinations: every combination has weight 0; no valid rows")
    period = math.lcm(*(len(v) for _, v in expanded))
    rows: list[tuple[int, ...]] = []
    for turn in range(period):
        for weight, variants in expanded:
            rows.extend(variants[(turn * weight + k) % len(variants)] for k in range(weight))
    return torch.tensor(rows, dtype=torch.long, device=device).reshape(len(rows), len(names))


def _env_scoped_destination(cfg: Any, env_template: str) -> str | None:
    """``cfg.prim_path`` as a destination template under ``env_template``; None if global."""
    prim_path = getattr(cfg, "prim_path", None)
    if not isinstance(prim_path, str):
        raise TypeError(f"asset cfg {type(cfg).__name__} needs a str prim_path, got {prim_path!r}")
    m = pth.match(prim_path, env_template)
    if m is None:
        return None
    prefix, suffix = pth.split(env_template)
    return prefix + "{}" + suffix + m.suffix


def _check_table(what: str, table: torch.Tensor, counts: list[int]) -> None:
    """Raise ValueError unless ``table`` is int ``[rows, len(counts)]`` with column ``g`` in ``-1..counts[g]-1``."""
    if not isinstance(table, torch.Tensor) or table.ndim != 2 or table.shape[1] != len(counts) or not len(table):
        shape = tuple(table.shape) if isinstance(table, torch.Tensor) else type(table).__name__
        raise ValueError(f"make_clone_plan: {what} must be an int tensor [rows >= 1, {len(counts)}], got {shape}")
    for g, n in enumerate(counts):
        if ((table[:, g] < -1) | (table[:, g] >= n)).any():
            raise ValueError(f"make_clone_plan: {what} column {g} holds a variant outside -1..{n - 1}")


def make_clone_plan(
    cfgs: Iterable[Any],
    num_clones: int,
    env_spacing: float,
    device: str | torch.device = "cpu",
    *,
    clone_strategy: str | Callable[..., torch.Tensor] = sequential,
    valid_set: torch.Tensor | None = None,
    env_template: str = DEFAULT_ENV_TEMPLATE,
    seed: int = 0,
) -> ClonePlan:
    """Build a :class:`ClonePlan` with one row per spawn variant of every env-scoped cfg.

    A cfg is env-scoped when its ``prim_path`` lies at or under ``env_template`` (its clone
    slot holding e.g. ``".*"``: ``"/World/envs/env_.*/Robot"``); global cfgs and cfgs with
    ``spawn=None`` are skipped and not replicated. Each group (cfg) contributes
    :func:`num_spawn_variants` rows in cfg order. ``clone_strategy`` picks one row of
    ``valid_set`` per env; env ``j`` then gets variant ``v`` of group ``g`` when that row
    holds ``v`` in column ``g`` (-1: the asset is absent there).

    Each variant's prototype is its first populated env: its source is the template filled
    with that env id. Every cfg that enters the plan is mutated: ``cfg.spawn_paths``
    becomes a tuple with one source path per variant (None for a variant no env uses) and
    ``cfg.spawn_path`` the first non-None of them, so the asset constructor spawns there. A
    variant no env uses still owns a row, with an all-False mask and env 0's slot as source.

    Args:
        cfgs: asset cfgs with resolved ``prim_path`` (no macros) and ``spawn``.
        num_clones: number of envs, ``>= 1``; env ids are ``0 .. num_clones - 1``.
        env_spacing: distance between neighbouring env origins [m] (see
            :func:`~simulo_envs.cloner.grid.grid_transforms`).
        device: device of the plan's tensors.
        clone_strategy: ``"sequential"`` (default), ``"random"``, or a callable
            ``(combos, num_clones, device) -> int64 [num_clones, num_groups]``.
        valid_set: int64 ``[num_combos, num_groups]`` of allowed combinations (see
            :func:`make_valid_clone_combinations`); None = full cartesian product.
        env_template: destination template of an env root.
        seed: seed of the generator ``"random"`` draws from (no global RNG is touched).

    Returns:
        The plan, with ``env_ids = arange(num_clones)``, grid ``positions`` and ``cfg_rows``.

    Raises:
        ValueError: ``num_clones < 1``, an unknown strategy, or a ``valid_set`` / strategy
            result of the wrong shape or with a variant index out of range.
        TypeError: a cfg without a str ``prim_path``, or a cfg that cannot be mutated.
    """
    if isinstance(num_clones, bool) or not isinstance(num_clones, int) or num_clones < 1:
        raise ValueError(f"make_clone_plan: num_clones must be an int >= 1, got {num_clones!r}")
    if isinstance(clone_strategy, str):
        if clone_strategy not in _STRATEGIES:
            raise ValueError(f"make_clone_plan: unknown clone_strategy {clone_strategy!r}; use {sorted(_STRATEGIES)}")
        clone_strategy = _STRATEGIES[clone_strategy]
    if clone_strategy is random:
        clone_strategy = functools.partial(random, generator=torch.Generator().manual_seed(seed))
    groups = []  # (cfg, destination, variant count)
    for cfg in cfgs:
        dest = _env_scoped_destination(cfg, env_template)
        if dest is not None and getattr(cfg, "spawn", None) is not None:
            groups.append((cfg, dest, num_spawn_variants(cfg.spawn)))
    counts = [n for _, _, n in groups]
    env_ids = torch.arange(num_clones, dtype=torch.long, device=device)
    positions, _ = grid_transforms(num_clones, env_spacing, device=device)
    if not groups:  # nothing env-scoped to clone: an empty plan, so the scene still proceeds
        empty = torch.zeros(0, num_clones, dtype=torch.bool, device=device)
        return ClonePlan((), (), empty, env_ids, positions, {})
    if valid_set is None:
        valid_set = make_valid_clone_combinations([str(i) for i in range(len(groups))], counts, device=device)
    _check_table("valid_set", valid_set, counts)
    assignment = clone_strategy(valid_set, num_clones, device)
    _check_table("clone_strategy result", assignment, counts)
    if assignment.shape[0] != num_clones:
        raise ValueError(f"make_clone_plan: clone_strategy returned {assignment.shape[0]} rows for {num_clones} envs")
    sources, destinations, masks, cfg_rows = [], [], [], {}
    for g, (cfg, dest, n) in enumerate(groups):
        owned, spawn_paths = [], []
        for v in range(n):
            mask = (assignment[:, g] == v).to(device)
            populated = mask.nonzero().flatten().tolist()
            spawn_paths.append(dest.format(populated[0]) if populated else None)
            sources.append(dest.format(populated[0] if populated else 0))
            destinations.append(dest)
            masks.append(mask)
            owned.append(len(sources) - 1)
        cfg_rows[id(cfg)] = tuple(owned)
        try:
            cfg.spawn_paths = tuple(spawn_paths)
            cfg.spawn_path = next((p for p in spawn_paths if p is not None), None)
        except (AttributeError, TypeError) as exc:
            raise TypeError(f"make_clone_plan: cannot set spawn_path(s) on {type(cfg).__name__}; use a mutable cfg") from exc
    clone_mask = torch.stack(masks)
    return ClonePlan(tuple(sources), tuple(destinations), clone_mask, env_ids, positions, cfg_rows)


def clone_plan_from_env_0(source: str, destination: str, num_clones: int, device: str | torch.device = "cpu",
                          positions: torch.Tensor | None = None, *, cfgs: Iterable[Any] | None = None) -> ClonePlan:
    """A one-row plan: every env ``0 .. num_clones - 1`` is a copy of ``source``.

    Args:
        source: prototype root, typically ``"/World/envs/env_0"``.
        destination: template with one ``"{}"`` for the env id, e.g. ``"/World/envs/env_{}"``.
        num_clones: number of envs, ``>= 1``.
        device: device of the mask and env-id tensors.
        positions: optional float ``[num_clones, 3]`` env origins [m].
        cfgs: asset cfgs to record in ``cfg_rows``; None (default) reads them from
            :data:`~simulo_envs.cloner.replication_queue.REPLICATION_QUEUE`, as the seed does, so call
            this after queueing every cfg. Those whose ``prim_path`` lies at or under
            ``destination``'s template root own row 0, the others are left out.

    Returns:
        The plan, with an all-True ``[1, num_clones]`` mask.

    Raises:
        ValueError: ``num_clones < 1``, an invalid template, or ``positions`` of the wrong shape.

    >>> plan = clone_plan_from_env_0("/World/envs/env_0", "/World/envs/env_{}", 3)
    >>> plan.sources, plan.clone_mask.tolist(), plan.env_ids.tolist()
    (('/World/envs/env_0',), [[True, True, True]], [0, 1, 2])
    """
    if isinstance(num_clones, bool) or not isinstance(num_clones, int) or num_clones < 1:
        raise ValueError(f"clone_plan_from_env_0: num_clones must be an int >= 1, got {num_clones!r}")
    pth.split(destination)
    if cfgs is None:
        cfgs = list(REPLICATION_QUEUE)
    cfg_rows = {id(c): (0,) for c in cfgs if _env_scoped_destination(c, destination) is not None}
    mask = torch.ones(1, num_clones, dtype=torch.bool, device=device)
    env_ids = torch.arange(num_clones, dtype=torch.long, device=device)
    if positions is not None:
        positions = positions.to(device)
    return ClonePlan((source,), (destination,), mask, env_ids, positions, cfg_rows)
