"""One evaluation entry point for every kind of checkpoint: the policy type is read from the file.

``scripts/evaluate.py`` evaluates PPO checkpoints with ``simulo_envs.wrappers``' functions;
``by_policy_type`` wraps them so that an imitation checkpoint (``checkpoint.is_imitation_checkpoint``)
runs with ``rollout.evaluate`` / ``rollout.record_policy_video`` instead, with the same arguments.
"""

from __future__ import annotations

import functools
from typing import Callable

from simulo_envs.imitation import rollout
from simulo_envs.imitation.checkpoint import is_imitation_checkpoint

__all__ = ["by_policy_type"]


def by_policy_type(evaluate: Callable, record_policy_video: Callable) -> tuple[Callable, Callable]:
    """``(evaluate, record_policy_video)`` that call ``rollout``'s functions for an imitation
    checkpoint (their first argument) and the given ones for any other.

    Raises:
        FileNotFoundError: the checkpoint file does not exist (before anything runs). Otherwise as
            the function called.
    """

    def pick(imitation: Callable, other: Callable) -> Callable:
        @functools.wraps(other)
        def run(checkpoint: str, *args, **kwargs):
            return (imitation if is_imitation_checkpoint(checkpoint) else other)(checkpoint, *args, **kwargs)
        return run

    return pick(rollout.evaluate, evaluate), pick(rollout.record_policy_video, record_policy_video)
