"""Recording a scripted expert in another control mode than the one it drives.

The experts drive ``pd_ee_delta_pos`` (``collect.EXPERT_CONTROL_MODE``). To record their episodes
in another mode (``scripts/collect_demos.py --control-mode pd_joint_pos``), each expert episode is
converted the moment it finishes, exactly as ``scripts/replay.py --target-control-mode`` converts
a recorded dataset (``replay.replay_episodes``, ``follow.Follower``): three batched envs of one
task take part,

- the *expert env* (the expert's mode, no observations): the expert acts, its episodes (seed,
  actions, env states) are recorded as usual (``rollout.run_expert``);
- the *source env* (the same): replays each episode's actions and records the joint drive
  targets the expert's controller set at every step (``replay.source_targets``);
- the *target env* (the asked obs and control modes): reset with the episode's seed, it
  reproduces those targets step for step, with extra steps following the recorded states where
  the target mode cannot move as fast (a delta joint mode), and is what the dataset records.

A converted episode "still succeeds" when the task reports success at its last step; the
collection reports how many of the expert's successes did (``collect``'s summary, ``conversion``).
Only joint-position target modes can be converted into (``convert.ActionConverter``).
"""

from __future__ import annotations

from collections import deque
from typing import Iterator, Optional

from simulo_envs.datasets.convert import ActionConverter
from simulo_envs.datasets.episode import Episode
from simulo_envs.datasets.replay import Recorded, replay_episodes

__all__ = ["expert_kwargs", "check_target_mode", "converted_episodes"]


def expert_kwargs(target_kwargs: dict, expert_mode: str) -> dict:
    """The keywords of the expert and source envs: the target env's (``sim_config``, randomization,
    ...) with ``expert_mode``, no observations (the experts read ``info``), no cameras and no
    reward (the target env computes the recorded one)."""
    kwargs = {k: v for k, v in target_kwargs.items() if k not in ("sensor_configs", "human_render_camera_configs")}
    return {**kwargs, "obs_mode": "none", "control_mode": expert_mode, "render_mode": None, "reward_mode": "none"}


def check_target_mode(target_env) -> None:
    """Raise ValueError when the control mode of ``target_env`` (in-process) cannot be converted
    into (a Cartesian mode: ``convert.ActionConverter``), naming the modes that can."""
    try:
        ActionConverter(target_env)
    except NotImplementedError as error:
        raise ValueError(f"{error}; record in the experts' own mode and convert with scripts/replay.py otherwise") \
            from None


def converted_episodes(expert_episodes: Iterator[Episode], source, target,
                       keep_failures: bool = False) -> Iterator[tuple[int, bool, Optional[Episode]]]:
    """Convert the expert's episodes as they finish (module docstring).

    Args:
        expert_episodes: the expert env's finished episodes (``run_expert``, with env states).
        source / target: the source env (the expert's mode) and the target env (the asked
            modes), batched in-process envs of the expert env's task.
        keep_failures: convert the expert's failed episodes too (else they are counted only).

    Yields:
        ``(seed, expert_succeeded, converted)`` per expert episode, in the order the conversions
        finish: ``seed`` is the episode's reset seed, ``converted`` the target env's
        ``Episode``, or None for an expert failure that was not converted (the seed says which
        episode it was, so a caller can keep seed order).
    """
    skipped: deque = deque()

    def feed() -> Iterator[Recorded]:
        for index, episode in enumerate(expert_episodes):
            if episode.succeeded or keep_failures:
                yield Recorded(index, episode.seed, episode.actions, episode.rewards, episode.terminated,
                               episode.truncated, episode.success, episode.env_states)
            else:
                skipped.append(episode)

    for recorded, episode in replay_episodes(target, feed(), source, name="expert episode"):
        while skipped:
            yield int(skipped.popleft().seed), False, None
        yield int(recorded.seed), bool(recorded.success[-1]), episode
    while skipped:
        yield int(skipped.popleft().seed), False, None
