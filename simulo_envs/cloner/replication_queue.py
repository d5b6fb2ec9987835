"""The replication queue of the isaaclab-cloner seed: asset cfgs waiting to be cloned.

:func:`queue_replication` adds a cfg; :func:`~simulo_envs.cloner.plan.clone_plan_from_env_0`
reads the queue (when not given the cfgs) and :func:`~simulo_envs.cloner.replicate.replicate`
drains it. It sits below both, so the plan and the replication read one queue without
importing each other.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REPLICATION_QUEUE", "queue_replication"]

REPLICATION_QUEUE: list[Any] = []
"""Asset cfgs registered by :func:`queue_replication` and drained by :func:`replicate`.

Process-wide, as in the seed. :func:`replicate` empties it up front (also when it then fails),
and :class:`ReplicateSession` empties it when its block raises, so no entry outlives one
replication."""


def queue_replication(cfg: Any) -> None:
    """Register ``cfg`` for cloning when :func:`replicate` next runs.

    Args:
        cfg: asset cfg with a resolved ``prim_path`` (str, e.g. ``"/World/envs/env_.*/Block"``)
            and a ``spawn``.

    Raises:
        TypeError: ``cfg`` has no str ``prim_path`` (nothing is queued).
    """
    if not isinstance(getattr(cfg, "prim_path", None), str):
        raise TypeError(f"queue_replication: {type(cfg).__name__} needs a str prim_path, "
                        f"got {getattr(cfg, 'prim_path', None)!r}")
    REPLICATION_QUEUE.append(cfg)
