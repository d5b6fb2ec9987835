"""Environment replication: prim-path algebra, clone plans and plan queries (the isaaclab-cloner seed).

Submodules: :mod:`~simulo_envs.cloner.path` (segment-boundary-safe path primitives, reached as
``cloner.path.rebase(...)``), :mod:`~simulo_envs.cloner.plan` (:class:`ClonePlan` and its
constructors), :mod:`~simulo_envs.cloner.query` (walking a plan),
:mod:`~simulo_envs.cloner.grid` (:func:`grid_transforms`, scalar-first quaternions) and
:mod:`~simulo_envs.cloner.replicate` (:func:`replicate` onto a Scene), with the replication queue
(:mod:`~simulo_envs.cloner.replication_queue`) and the stage it writes into
(:mod:`~simulo_envs.cloner.stage`: the prim-path layout, what the Scene provides).
"""

from . import path, plan, query
from .grid import grid_transforms
from .path import TemplateMatch, match, rebase, relative_to, relativize, split, under
from .plan import (
    DEFAULT_ENV_TEMPLATE,
    CloneCfg,
    ClonePlan,
    InclusionSet,
    clone_plan_from_env_0,
    make_clone_plan,
    make_valid_clone_combinations,
    num_spawn_variants,
    random,
    sequential,
)
from .query import iter_sources, path_env_ids, path_to_clone, path_to_source
from .replicate import (
    REPLICATION_QUEUE,
    PrototypeCfg,
    ReplicateSession,
    SceneReplicateContext,
    filter_collisions,
    queue_replication,
    replicate,
)

__all__ = [
    # replicate
    "REPLICATION_QUEUE", "queue_replication", "PrototypeCfg", "SceneReplicateContext", "ReplicateSession",
    "replicate", "filter_collisions",
    # path
    "TemplateMatch", "split", "match", "relative_to", "under", "rebase", "relativize",
    # plan
    "DEFAULT_ENV_TEMPLATE", "ClonePlan", "CloneCfg", "InclusionSet", "num_spawn_variants",
    "make_valid_clone_combinations", "sequential", "random", "make_clone_plan", "clone_plan_from_env_0",
    # query
    "path_env_ids", "path_to_clone", "path_to_source", "iter_sources",
    # grid
    "grid_transforms",
    # submodules
    "path", "plan", "query",
]
