"""Walking the prototype/clone relation a :class:`~simulo_envs.cloner.plan.ClonePlan` describes.

Each plan row pairs a prototype root (exists once in the scene) with a destination template and
the envs it populates. The relation is partial both ways: a prototype reaches only the envs its
row covers, and an env holds only the assets whose rows cover it.

- :func:`path_env_ids`: prototype path -> the envs it is cloned to.
- :func:`path_to_clone`: prototype path + env -> the clone path.
- :func:`path_to_source`: clone path or expression -> the prototype it came from.
- :func:`iter_sources`: every populated row behind a clone-side expression.

**Env ids are not mask columns.** Column ``j`` stands for ``plan.env_ids[j]`` (or ``j`` when
``env_ids`` is None); every function here takes and returns env ids.

**Nearest row rule.** A path belongs to the nearest row containing it. On the prototype side that
is the deepest source root at or above the path; on the clone side, the template leaving the
shortest suffix (fewest segments below the template root). Rows tying on the prototype side share
one source root; rows tying on the clone side with the *same* template are one asset's variants,
and the env picks between them. For :func:`path_to_source`, distinct templates tying on the clone
side are ambiguous and raise ValueError, and ownership is decided over all rows (an empty nearest
row answers None). :func:`iter_sources` ranks only populated rows and yields every tying row.

The path primitives are imported as ``pth`` because ``path`` is a parameter name here.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator

import torch

from . import path as pth
from .plan import ClonePlan

__all__ = ["path_env_ids", "path_to_clone", "path_to_source", "iter_sources"]


def _env_ids(plan: ClonePlan) -> list[int]:
    """Env id of every mask column."""
    if plan.env_ids is None:
        return list(range(plan.num_clones))
    return [int(i) for i in plan.env_ids.tolist()]


def _row_envs(plan: ClonePlan, row: int) -> tuple[int, ...]:
    """Ascending env ids row ``row`` populates."""
    ids = _env_ids(plan)
    cols = torch.nonzero(plan.clone_mask[row]).flatten().tolist()
    return tuple(sorted(ids[c] for c in cols))


def _depth(path: str) -> int:
    """Number of segments of a (suffix) path: ``""`` -> 0, ``"/a/b"`` -> 2, ``"/"`` -> 0."""
    return len([s for s in path.split("/") if s])


def _join(root: str, suffix: str) -> str:
    """``root`` followed by a suffix from :mod:`path` (``""`` or starting with ``/``)."""
    base = root.rstrip("/")
    return base + suffix if base else suffix or "/"


def _source_rows(plan: ClonePlan, path: str) -> list[int]:
    """Rows whose source root is the deepest one at or above ``path`` (empty: unowned)."""
    best, rows = -1, []
    for r, src in enumerate(plan.sources):
        if pth.under(path, src):
            d = _depth(src)
            if d > best:
                best, rows = d, [r]
            elif d == best:
                rows.append(r)
    return rows


def _nearest_rows(plan: ClonePlan, path_expr: str, populated_only: bool
                  ) -> tuple[list[int], pth.TemplateMatch | None]:
    """Rows of the nearest templates owning ``path_expr`` (in row order) and the nearest match.

    ``populated_only`` ranks only rows that populate an env, so an empty nearer template cannot
    hide a populated ancestor (:func:`iter_sources`); otherwise every row is ranked and the
    caller filters afterwards (:func:`path_to_source`: an empty nearest owner answers None).
    """
    best, rows, found = None, [], None
    for r, dst in enumerate(plan.destinations):
        if populated_only and not bool(plan.clone_mask[r].any()):
            continue
        m = pth.match(path_expr, dst)
        if m is None:
            continue
        d = _depth(m.suffix)
        if best is None or d < best:
            best, rows, found = d, [r], m
        elif d == best:
            rows.append(r)
    return rows, found


def _template_rows(plan: ClonePlan, path_expr: str) -> tuple[list[int], pth.TemplateMatch | None]:
    """Rows of the nearest template owning ``path_expr`` and its match; ValueError if ambiguous."""
    rows, found = _nearest_rows(plan, path_expr, populated_only=False)
    templates = sorted({plan.destinations[r] for r in rows})
    if len(templates) > 1:
        raise ValueError(
            f"{path_expr!r} is owned by {len(templates)} distinct, equally near templates {templates}; "
            "the plan is ambiguous for this path"
        )
    return rows, found


def _named_envs(instance: str) -> set[int] | None:
    """Env ids a clone slot's text names: ``"3"`` -> {3}, ``"(0|2)"`` -> {0, 2}; None for a wildcard."""
    text = instance[1:-1] if instance[:1] == "(" and instance[-1:] == ")" else instance
    parts = text.split("|")
    if all(p.isdecimal() for p in parts):
        return {int(p) for p in parts}
    return None


def _env_glob(envs: tuple[int, ...], all_envs: list[int]) -> str:
    """Slot text for a set of envs: ``".*"`` for all of them, ``"3"`` for one, else ``"(0|2|5)"``."""
    if set(envs) == set(all_envs):
        return ".*"
    if len(envs) == 1:
        return str(envs[0])
    return "(" + "|".join(str(e) for e in envs) + ")"


def _as_env_id(env_id: object) -> int:
    """``env_id`` as a plain int; TypeError for bools, floats and other non-integers."""
    if isinstance(env_id, bool):
        raise TypeError("env_id must be an integer env id, got a bool")
    try:
        return operator.index(env_id)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"env_id must be an integer env id, got {type(env_id).__name__}") from None


def path_env_ids(plan: ClonePlan, path: str) -> tuple[int, ...]:
    """The envs a prototype ``path`` is cloned to.

    Args:
        plan: the clone plan.
        path: a prototype path: a row's source root or a path below it.

    Returns:
        The ascending env ids populated by the row(s) owning ``path`` (nearest row rule); the
        **empty tuple** when no source root lies at or above ``path`` or the owning rows populate
        no env.

    >>> from simulo_envs.cloner.plan import clone_plan_from_env_0
    >>> plan = clone_plan_from_env_0("/World/envs/env_0", "/World/envs/env_{}", 3)
    >>> path_env_ids(plan, "/World/envs/env_0/Robot/base")
    (0, 1, 2)
    >>> path_env_ids(plan, "/World/envs/env_01/Robot")
    ()
    """
    envs: set[int] = set()
    for r in _source_rows(plan, path):
        envs.update(_row_envs(plan, r))
    return tuple(sorted(envs))


def path_to_clone(plan: ClonePlan, path: str, env_id: int) -> str | None:
    """The clone of prototype ``path`` in env ``env_id``.

    Only the source root is swapped for the filled template; everything below it is carried over.

    Args:
        plan: the clone plan.
        path: a prototype path.
        env_id: the target env id (not a mask column).

    Returns:
        The clone path, or **None** when ``path`` is unowned, ``env_id`` is not in the plan, or
        no owning row populates ``env_id``. Where several rows share the owning source root (one
        asset's variants), the one populating ``env_id`` is used (the first in row order).

    Raises:
        TypeError: ``env_id`` is not an integer.

    >>> from simulo_envs.cloner.plan import clone_plan_from_env_0
    >>> plan = clone_plan_from_env_0("/World/envs/env_0", "/World/envs/env_{}", 12)
    >>> path_to_clone(plan, "/World/envs/env_0/Robot/base", 10)
    '/World/envs/env_10/Robot/base'
    >>> path_to_clone(plan, "/World/envs/env_0/Robot", 12) is None
    True
    """
    env_id = _as_env_id(env_id)
    ids = _env_ids(plan)
    if env_id not in ids:
        return None
    col = ids.index(env_id)
    for r in _source_rows(plan, path):
        if bool(plan.clone_mask[r, col]):
            return pth.rebase(path, plan.sources[r], plan.destinations[r].format(env_id))
    return None


def path_to_source(plan: ClonePlan, path_expr: str, env_id: int | None = None) -> tuple[str, str, str] | None:
    """Resolve a clone-side path or expression to the prototype it was cloned from.

    A concrete clone path names its env in the template's clone slot (``env_3``), and that env
    picks the variant, so this undoes :func:`path_to_clone`. A wildcard (``env_.*``) names no
    env and resolves to the first populated row of the nearest template; an alternation
    (``env_(0|2)``) to the first row populating one of the envs it names.

    Args:
        plan: the clone plan.
        path_expr: clone-side path or expression, e.g. ``"/World/envs/env_.*/Robot/base"``.
        env_id: env whose variant to resolve; overrides the env ``path_expr`` names.

    Returns:
        ``(source_path, destination_glob, asset_suffix)``: ``source_path`` is the prototype path
        (source root + suffix); ``destination_glob`` is the row's template filled with the envs
        *that row* populates (``".*"`` when it populates every env of the plan, ``"3"`` for one,
        ``"(0|2)"`` for a subset), so ``destination_glob + asset_suffix`` names exactly the clones
        of ``source_path``; ``asset_suffix`` is the part of ``path_expr`` below the template root.
        **None** when no template owns ``path_expr`` or no owning row populates the requested env.

    Raises:
        ValueError: distinct, equally near templates own ``path_expr``.
        TypeError: ``env_id`` is not an integer or None.

    >>> from simulo_envs.cloner.plan import clone_plan_from_env_0
    >>> plan = clone_plan_from_env_0("/World/envs/env_0", "/World/envs/env_{}", 4)
    >>> path_to_source(plan, "/World/envs/env_3/Robot/base")
    ('/World/envs/env_0/Robot/base', '/World/envs/env_.*', '/Robot/base')
    >>> path_to_source(plan, "/World/envs/env_9/Robot") is None
    True
    >>> path_to_source(plan, "/World/Ground") is None
    True
    """
    rows, m = _template_rows(plan, path_expr)
    if m is None:
        return None
    wanted = {_as_env_id(env_id)} if env_id is not None else _named_envs(m.instance)
    for r in rows:
        envs = _row_envs(plan, r)
        if envs and (wanted is None or wanted & set(envs)):
            glob = plan.destinations[r].format(_env_glob(envs, _env_ids(plan)))
            return _join(plan.sources[r], m.suffix), glob, m.suffix
    return None


def iter_sources(plan: ClonePlan, path_expr: str) -> Iterator[tuple[str, str, str, tuple[int, ...]]]:
    """Every populated row whose destination owns ``path_expr``: the rows of the nearest owning
    template, in row order.

    Where :func:`path_to_source` names one variant, this visits them all (e.g. to load one mesh
    per variant). Only populated rows compete for "nearest", so a nearer template whose rows
    populate no env does not hide a populated ancestor. The clone slot's text does not filter:
    a concrete clone path (``env_3``) yields the same rows as the wildcard (``env_.*``), as in
    Isaac Lab; use :func:`path_to_source` for the one variant a given env holds.

    Args:
        plan: the clone plan.
        path_expr: clone-side path or expression.

    Yields:
        ``(source_root, destination_template, source_path, env_ids)`` per row, ``env_ids``
        ascending. Yields **nothing** when no populated row's template owns ``path_expr``.
        Distinct templates equally near all yield (each owns the path).

    >>> import torch
    >>> plan = ClonePlan(("/World/source/Robot",), ("/World/scenes/{}/Robot",),
    ...                  torch.tensor([[True, False, True]]))
    >>> list(iter_sources(plan, "/World/scenes/.*/Robot/base"))
    [('/World/source/Robot', '/World/scenes/{}/Robot', '/World/source/Robot/base', (0, 2))]
    >>> [row[3] for row in iter_sources(plan, "/World/scenes/1/Robot")]
    [(0, 2)]
    """
    rows, m = _nearest_rows(plan, path_expr, populated_only=True)
    for r in rows:
        src = plan.sources[r]
        # Each row's own match: equally near templates all leave the same suffix.
        suffix = pth.match(path_expr, plan.destinations[r]).suffix
        yield src, plan.destinations[r], _join(src, suffix), _row_envs(plan, r)
