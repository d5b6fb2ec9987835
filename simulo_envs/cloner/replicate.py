"""Replicating onto our Scene: the Scene's replicate context, ``replicate``, ``ReplicateSession``.

The isaaclab-cloner seed's flow runs as written, with our ``Scene`` as the stage (the queue:
:mod:`~simulo_envs.cloner.replication_queue`; what a stage offers:
:class:`~simulo_envs.cloner.stage.ReplicationStage`, so this module never imports the Scene)::

    queue_replication(cfg)                 # each asset cfg to clone: prim_path + spawn
    plan = clone_plan_from_env_0("/World/envs/env_0", "/World/envs/env_{}", num_envs, "cpu", positions)
    replicate(plan, stage=scene)           # drain the queue against plan, publish plan on the scene

An asset cfg is any object with a ``prim_path`` under the scene's env template
(``"/World/envs/env_.*/Block"``) and a ``spawn``: a ``Prop``, ``MultiShapeProp``, ``Robot`` or
bare primitive shape (:class:`PrototypeCfg` is a ready-made one). ``replicate`` registers each
queued cfg the plan owns in the scene (at ``/World/Block``), resolves for every object of the
scene and every env the plan row that populates the object's clone there (nearest template, as
:func:`~simulo_envs.cloner.query.path_to_source`) and the variant that row's source holds, moves
the env origins to ``plan.positions`` when given, and publishes the plan (``scene.clone_plan``).
The scene builds everything into the simulation when the env attaches it; until then no body
exists, which is why replication happens before the backend is made (in ``_load_scene``).

``filter_collisions`` is the inter-env collision isolation, done by the backend while it builds
(physx_cpu: one collision bit per env, ``simulo_envs.sim.physx_cpu``); here it reports the
collision groups each env's shapes get.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from . import path as pth
from .plan import DEFAULT_ENV_TEMPLATE, ClonePlan, make_clone_plan, sequential
from .query import _join, _template_rows
from .replication_queue import REPLICATION_QUEUE, queue_replication
from .stage import ENV_TEMPLATE, WORLD, ReplicationStage

__all__ = [
    "REPLICATION_QUEUE", "queue_replication", "PrototypeCfg", "SceneReplicateContext", "replicate",
    "replicate_cfgs", "ReplicateSession", "filter_collisions",
]

@dataclass(eq=False)
class PrototypeCfg:
    """An asset cfg for one scene object, as :func:`make_clone_plan` and :func:`replicate` read it.

    Attributes:
        prim_path: the clone-side expression, e.g. ``"/World/envs/env_.*/Block"``.
        spawn: the object: a ``Prop`` (its ``variants`` are the spawn variants), a ``Robot`` or a
            bare primitive shape.
        obj: the same object (kept for readers of ``scene.prototype_cfgs``); defaults to ``spawn``.
        spawn_path, spawn_paths: set by :func:`make_clone_plan` (the prototype of each variant).
    """

    prim_path: str
    spawn: Any
    obj: Any = None
    spawn_path: str | None = None
    spawn_paths: tuple = ()

    def __post_init__(self) -> None:
        if self.obj is None:
            self.obj = self.spawn


def _num_variants(obj: Any) -> int:
    variants = getattr(obj, "variants", None)
    return len(variants) if variants is not None else 1


class SceneReplicateContext:
    """Queue and apply replication work for one Scene (the seed's ``UsdReplicateContext``, with
    the Scene as the stage).

    Rows are queued as the seed's ``(source, destination template, env ids)``;
    :meth:`replicate` resolves, for every object of the scene and every env, the nearest queued
    row whose destination owns the object's clone path and populates that env, and the variant
    that row's source holds (from the cfg's ``spawn_paths``; variant 0 when the source is not one
    of them, as a prototype env holds its spawner's first variant). It then commits the new
    objects, the per-env variants and the env origins to the scene in one step.

    Args:
        stage: the ``Scene`` to replicate onto; it must not be attached to a simulation yet.

    Raises:
        TypeError: ``stage`` is not a Scene.
    """

    replicate_priority = 0

    def __init__(self, stage: Any):
        if not isinstance(stage, ReplicationStage):
            raise TypeError(f"the replication stage must be a simulo_envs Scene, got {type(stage).__name__}")
        self.stage = stage
        self._sources: list[str] = []
        self._destinations: list[str] = []
        self._masks: list[torch.Tensor] = []
        self._positions: torch.Tensor | None = None
        self._objects: dict[str, Any] = {}  # new objects to register, scene path -> object
        self._spawns: dict[str, Any] = {}  # scene path -> the cfg's spawn (a bare shape is wrapped)
        self._spawn_paths: dict[str, tuple] = {}
        self._plan: ClonePlan | None = None  # the plan to publish; None: the queued rows

    def queue_object(self, cfg: Any) -> str:
        """Queue the object of asset cfg ``cfg`` for registration; returns its scene path.

        Raises:
            ValueError: ``cfg.prim_path`` is not strictly under the scene's env template, or the
                scene refuses the object there (path taken, object already elsewhere).
            TypeError: ``cfg.spawn`` is not a Prop, Robot or primitive shape.
        """
        m = pth.match(cfg.prim_path, ENV_TEMPLATE)
        if m is None or not m.suffix:
            raise ValueError(f"{cfg.prim_path!r} must name an object under the env template {ENV_TEMPLATE!r} "
                             "(e.g. '/World/envs/env_.*/Block')")
        path = WORLD + m.suffix
        spawn = getattr(cfg, "spawn", None)
        if self.stage.objects.get(path) is not spawn and self._spawns.get(path) is not spawn:
            if path in self._objects:
                raise ValueError(f"two queued cfgs name {path!r} with different objects")
            if any(s is spawn for s in self._spawns.values()):
                raise ValueError(f"{spawn!r} is queued at two paths")
            obj, path = self.stage._check_add(spawn, path)
            self._objects[path], self._spawns[path] = obj, spawn
        spawn_paths = tuple(getattr(cfg, "spawn_paths", ()) or ())
        if spawn_paths:
            self._spawn_paths[path] = spawn_paths
        return path

    def queue(self, source: str, destination: str, env_ids: torch.Tensor, *,
              positions: torch.Tensor | None = None) -> None:
        """Queue one row: clone prototype ``source`` to ``destination.format(e)`` for each ``e``
        in ``env_ids`` (int, any order); ``positions`` as :meth:`queue_mapping`."""
        n = self.stage.num_envs
        ids = torch.as_tensor(env_ids, dtype=torch.long).flatten().cpu()
        if ((ids < 0) | (ids >= n)).any():
            raise ValueError(f"env ids {ids.tolist()} outside [0, {n})")
        mask = torch.zeros(n, dtype=torch.bool)
        mask[ids] = True
        pth.split(destination)
        self._sources.append(source)
        self._destinations.append(destination)
        self._masks.append(mask)
        if positions is not None:
            self._set_positions(torch.arange(n), positions)

    def queue_mapping(self, sources: Sequence[str], destinations: Sequence[str], env_ids: torch.Tensor,
                      clone_mask: torch.Tensor, *, positions: torch.Tensor | None = None) -> None:
        """Queue plan rows.

        Args:
            sources, destinations: one prototype root and destination template per row.
            env_ids: int ``[num_clones]``, the env id of each mask column (``0..num_envs-1``, any order).
            clone_mask: bool ``[rows, num_clones]``.
            positions: optional float ``[num_clones, 3]`` env origins [m], column order.

        Raises:
            ValueError: lengths or shapes disagree, env ids outside the scene, non-finite positions.
        """
        n = self.stage.num_envs
        ids = torch.as_tensor(env_ids, dtype=torch.long).flatten().cpu()
        if sorted(ids.tolist()) != list(range(n)):
            raise ValueError(f"the plan's env_ids must be the scene's envs 0..{n - 1} (each once), got {ids.tolist()}")
        mask = torch.as_tensor(clone_mask).cpu()
        if mask.dtype != torch.bool or tuple(mask.shape) != (len(sources), n) or len(destinations) != len(sources):
            raise ValueError(f"queue_mapping: {len(sources)} sources, {len(destinations)} destinations and a "
                             f"mask of shape {tuple(mask.shape)}; expected a bool mask ({len(sources)}, {n})")
        for source, destination, row in zip(sources, destinations, mask):
            pth.split(destination)
            by_env = torch.zeros(n, dtype=torch.bool)
            by_env[ids[row]] = True
            self._sources.append(source)
            self._destinations.append(destination)
            self._masks.append(by_env)
        if positions is not None:
            self._set_positions(ids, positions)

    def _set_positions(self, ids: torch.Tensor, positions: torch.Tensor) -> None:
        pos = torch.as_tensor(positions, dtype=torch.float32).cpu()
        if tuple(pos.shape) != (len(ids), 3) or not bool(torch.isfinite(pos).all()):
            raise ValueError(f"positions must be finite, shape ({len(ids)}, 3) [m], got {tuple(pos.shape)}")
        origins = torch.empty(self.stage.num_envs, 3, dtype=torch.float32)
        origins[ids] = pos
        self._positions = origins

    def _rows_plan(self) -> ClonePlan:
        """The queued rows as a plan (columns are envs ``0..num_envs-1``)."""
        n = self.stage.num_envs
        mask = torch.stack(self._masks) if self._masks else torch.zeros(0, n, dtype=torch.bool)
        return ClonePlan(tuple(self._sources), tuple(self._destinations), mask, torch.arange(n), self._positions)

    def variants(self) -> dict[str, list[int]]:
        """Scene path -> the variant each env builds, for every object (existing and queued).

        Raises:
            ValueError: an object some env gets no copy of (every env needs each object), or
                distinct, equally near templates owning an object's clone path.
        """
        n = self.stage.num_envs
        rows_plan = self._rows_plan()
        mask = rows_plan.clone_mask
        out = {}
        for path, obj in {**self.stage.objects, **self._objects}.items():
            clone_expr = ENV_TEMPLATE.format(".*") + pth.relative_to(path, WORLD)
            rows, m = _template_rows(rows_plan, clone_expr)
            per_env = torch.full((n,), -1, dtype=torch.long)
            for r in rows:
                source = _join(self._sources[r], m.suffix)
                spawn_paths = self._spawn_paths.get(path, ())
                v = spawn_paths.index(source) if _num_variants(obj) > 1 and source in spawn_paths else 0
                per_env[mask[r] & (per_env < 0)] = v
            missing = (per_env < 0).nonzero().flatten().tolist()
            if missing:
                raise ValueError(f"{path}: envs {missing} get no copy from the clone plan (no row owning "
                                 f"{clone_expr!r} populates them); every env needs each object")
            out[path] = per_env.tolist()
        return out

    def replicate(self) -> None:
        """Commit the queued objects, their per-env variants and the env origins to the scene,
        and publish the queued rows as its clone plan (:func:`replicate` publishes its own plan).

        Raises:
            RuntimeError: the scene is attached or already replicated. ValueError: as
            :meth:`variants`. Nothing changes on an error.
        """
        self.stage._check_replicable()
        plan = self._plan if self._plan is not None else self._rows_plan()
        self.stage._commit_replication(self._objects, self.variants(), self._positions, plan)


def replicate_cfgs(plan: ClonePlan, stage: Any, cfgs: Iterable[Any], replicate_physics: bool = True) -> None:
    """Replicate ``cfgs`` (those ``plan.cfg_rows`` owns) onto ``stage`` and publish ``plan``:
    :func:`replicate` with the cfgs given rather than drained from the queue (the Scene plans
    and replicates itself this way when no plan was published). Raises as :func:`replicate`."""
    if replicate_physics is not True:
        raise ValueError("replicate_physics=False cannot apply here: every cloned object is a simulated body "
                         "in each env (there is no visual-only copy); pass True")
    if not isinstance(plan, ClonePlan):
        raise TypeError(f"replicate: plan must be a ClonePlan, got {type(plan).__name__}")
    if plan.env_ids is None:
        raise ValueError("replicate: plan.env_ids is required (which env each mask column is)")
    ctx = SceneReplicateContext(stage)
    stage._check_replicable()
    rows: set[int] = set()
    for cfg in cfgs:
        owned = plan.cfg_rows.get(id(cfg))
        if owned is None:
            continue  # as the seed: cfgs the plan does not own are not replicated
        ctx.queue_object(cfg)
        rows.update(owned)
    ordered = sorted(rows)
    ctx.queue_mapping([plan.sources[i] for i in ordered], [plan.destinations[i] for i in ordered],
                      plan.env_ids, plan.clone_mask[ordered], positions=plan.positions)
    ctx._plan = plan
    ctx.replicate()


def replicate(plan: ClonePlan, *, stage: Any, replicate_physics: bool = True) -> None:
    """Drain :data:`REPLICATION_QUEUE` against ``plan`` onto ``stage`` and publish the plan.

    Each queued cfg that ``plan.cfg_rows`` owns is registered in the scene (cfgs it does not own
    are skipped, as in the seed); the rows those cfgs own decide, per env, which prototype (and so
    which variant) every object of the scene is cloned from. ``plan.positions``, when given,
    become the scene's env origins. The queue is emptied first, so a failure leaves no stale
    entry, and the scene is unchanged on any error.

    Args:
        plan: the layout, with ``env_ids`` naming the scene's envs ``0..num_envs-1``.
        stage: the ``Scene`` (not yet attached to a simulation).
        replicate_physics: must be True (every clone is a simulated body here).

    Raises:
        TypeError: ``stage`` is not a Scene or ``plan`` not a ClonePlan.
        RuntimeError: the scene is attached or already holds a published plan.
        ValueError: ``replicate_physics`` is not True, ``plan.env_ids`` is None or not the
            scene's envs, bad positions, or an object some env gets no copy of.
    """
    queued = list(REPLICATION_QUEUE)
    REPLICATION_QUEUE.clear()
    replicate_cfgs(plan, stage, queued, replicate_physics)


class ReplicateSession:
    """Folds :func:`make_clone_plan` and :func:`replicate` into a ``with`` block.

    ``__enter__`` builds the plan from ``cfgs`` (setting each cfg's ``spawn_path(s)``); inside
    the block, queue the cfgs to clone with :func:`queue_replication`; a clean ``__exit__``
    replicates them onto ``stage``; an exception empties the queue and leaves the scene as it was.

    Args:
        cfgs: asset cfgs to plan (``prim_path`` under the env template, ``spawn``).
        num_clones: number of envs (the scene's ``num_envs``).
        env_spacing: grid spacing of the env origins [m].
        device: device of the plan's tensors.
        stage: the ``Scene`` to replicate onto.
        clone_strategy, valid_set, env_template, seed: as :func:`make_clone_plan`.
        replicate_physics: as :func:`replicate`.

    >>> from simulo_envs import Prop, Scene
    >>> from simulo_envs.authoring import Cuboid
    >>> scene = Scene(4, env_spacing=2.0)
    >>> cfg = PrototypeCfg("/World/envs/env_.*/Block", Prop(Cuboid("Block", size=(0.05, 0.05, 0.05))))
    >>> with ReplicateSession([cfg], 4, 2.0, "cpu", stage=scene):
    ...     queue_replication(cfg)
    >>> list(scene.objects), scene.clone_plan.sources
    (['/World/Block'], ('/World/envs/env_0/Block',))
    """

    def __init__(self, cfgs: Iterable[Any], num_clones: int, env_spacing: float, device: str | torch.device = "cpu",
                 *, stage: Any, clone_strategy: str | Callable[..., torch.Tensor] = sequential,
                 valid_set: torch.Tensor | None = None, replicate_physics: bool = True,
                 env_template: str = DEFAULT_ENV_TEMPLATE, seed: int = 0):
        self._cfgs = list(cfgs)
        self._stage = stage
        self._replicate_physics = replicate_physics
        self._kwargs = dict(num_clones=num_clones, env_spacing=env_spacing, device=device,
                            clone_strategy=clone_strategy, valid_set=valid_set, env_template=env_template, seed=seed)
        self._plan: ClonePlan | None = None

    def __enter__(self) -> "ReplicateSession":
        self._plan = make_clone_plan(self._cfgs, **self._kwargs)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            replicate(self._plan, stage=self._stage, replicate_physics=self._replicate_physics)
        else:
            REPLICATION_QUEUE.clear()

    @property
    def plan(self) -> ClonePlan:
        """The plan made in ``__enter__``.

        Raises:
            RuntimeError: outside the ``with`` block (before entering).
        """
        if self._plan is None:
            raise RuntimeError("ReplicateSession.plan exists once the with block is entered")
        return self._plan


def filter_collisions(backend) -> list[list[int]]:
    """Collision groups ``[g0, g1, g2, g3]`` each env's shapes get, env by env (the backend's
    inter-env isolation, applied while it builds; see its module docstring)."""
    return backend.env_collision_groups()
