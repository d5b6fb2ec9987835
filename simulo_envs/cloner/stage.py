"""The stage replication writes into: our prim-path layout and what a stage must offer.

In the isaaclab-cloner seed the stage is a USD stage. Here it is the ``Scene``
(``simulo_envs.scene``), a prim-path registry one layer above the cloner: the cloner names the
layout and the operations it needs (:class:`ReplicationStage`) and the Scene implements them,
so the cloner never imports the Scene.

Layout: prototypes live under :data:`WORLD` (``/World/Block``); env ``i``'s clones under
``ENV_TEMPLATE.format(i)`` (``/World/envs/env_3/Block``); :data:`ENVS_ROOT` is reserved for clones.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol, runtime_checkable

import torch

from .plan import DEFAULT_ENV_TEMPLATE, ClonePlan

__all__ = ["WORLD", "ENVS_ROOT", "ENV_TEMPLATE", "ReplicationStage"]

WORLD = "/World"
"""Root of every prototype path."""
ENVS_ROOT = "/World/envs"
"""Root of the per-env clones; no prototype may live under it."""
ENV_TEMPLATE = DEFAULT_ENV_TEMPLATE
"""Root of env ``i``'s clones: ``ENV_TEMPLATE.format(i)`` (``"/World/envs/env_{}"``)."""


@runtime_checkable
class ReplicationStage(Protocol):
    """What :class:`~simulo_envs.cloner.replicate.SceneReplicateContext` needs from its stage.

    ``simulo_envs.scene.Scene`` is the implementation; the underscored methods are its
    replication hooks, not user API.
    """

    num_envs: int

    @property
    def objects(self) -> dict:
        """Prototype path -> registered object, in registration order (a copy)."""

    def _check_add(self, obj: Any, at: str) -> tuple:
        """``(object, path)`` that adding ``obj`` at prototype path ``at`` would register; raises
        ValueError / TypeError as ``Scene.add`` does and changes nothing."""

    def _check_replicable(self) -> None:
        """Raise RuntimeError when the stage is attached to a simulation or already replicated."""

    def _commit_replication(self, objects: dict, variants: dict, origins: Optional[torch.Tensor],
                            plan: ClonePlan) -> None:
        """Register ``objects`` (path -> object), record each object's variant per env, move the
        env origins to ``origins`` (float (num_envs, 3) [m], None: unchanged) and publish ``plan``."""
