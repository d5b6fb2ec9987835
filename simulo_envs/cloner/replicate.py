"""Executing a clone plan on our Scene: build every prototype in the envs its rows populate.

The isaaclab-cloner seed's ``replicate`` copies USD prims; here the Scene's prim-path registry
is the stage and the simulation backend builds one SAPIEN entity per (prototype, env). A
prototype whose cfg owns several rows (a ``MultiShapeProp``) spawns, in env ``j``, the variant
of the row whose mask holds ``j``.

``filter_collisions`` is the inter-env collision isolation, done by the backend while it builds
(physx_cpu: one collision bit per env, ``simulo_envs.sim.physx_cpu``); here it reports the
collision groups each env's shapes get.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .plan import ClonePlan


@dataclass
class PrototypeCfg:
    """The asset cfg the Scene hands to ``make_clone_plan`` for one registered object.

    Attributes:
        prim_path: the clone-side expression, e.g. ``"/World/envs/env_.*/Block"``.
        spawn: the object; its ``variants`` (for props) are the spawn variants.
        obj: the registered ``Prop`` or ``Robot``.
    """

    prim_path: str
    spawn: Any
    obj: Any
    spawn_path: str | None = None
    spawn_paths: tuple = ()


def variant_of_env(plan: ClonePlan, cfg: PrototypeCfg) -> torch.Tensor:
    """int64 (num_clones,): for each env column, the index (within ``cfg``'s rows) of the row
    that populates it.

    Raises:
        ValueError: an env no row of ``cfg`` populates (every env needs each prop).
    """
    rows = plan.cfg_rows[id(cfg)]
    masks = plan.clone_mask[list(rows)]
    if not bool(masks.any(dim=0).all()):
        missing = (~masks.any(dim=0)).nonzero().flatten().tolist()
        raise ValueError(f"{cfg.prim_path}: envs {missing} get no variant; every env needs each prop")
    return masks.to(torch.long).argmax(dim=0)


class ReplicateSession:
    """Build a plan into a backend: on entry every prototype of ``scene`` is built in the envs
    its plan rows populate (each env's own variant); on a clean exit the backend's state buffers
    are finalised.

    Args:
        plan: the scene's clone plan (``scene.prototype_cfgs`` own its rows).
        scene: the ``Scene`` whose registered objects are built.
        backend: the simulation backend to build into.
    """

    def __init__(self, plan: ClonePlan, scene, backend):
        self.plan, self.scene, self.backend = plan, scene, backend

    def __enter__(self) -> "ReplicateSession":
        scene = self.scene
        for cfg in scene.prototype_cfgs:
            if hasattr(cfg.obj, "variants"):
                variants = variant_of_env(self.plan, cfg).tolist()
                cfg.obj._attach(self.backend, scene.env_origins, scene.device, variant_of_env=variants)
            else:
                cfg.obj._attach(self.backend, scene.env_origins, scene.device)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.backend.finalize()


def replicate(plan: ClonePlan, scene, backend) -> None:
    """Build every prototype of ``scene`` in the envs ``plan`` assigns, then finalise ``backend``
    (the seed's ``replicate(plan, stage)``, with our Scene as the stage)."""
    with ReplicateSession(plan, scene, backend):
        pass


def filter_collisions(backend) -> list[list[int]]:
    """Collision groups ``[g0, g1, g2, g3]`` each env's shapes get, env by env (the backend's
    inter-env isolation, applied while it builds; see its module docstring)."""
    return backend.env_collision_groups()
