"""The SO-101 suite's benchmark protocol: fixed initial states, success once and at the end, with
95 % Wilson score intervals, per task and split and their mean; run by ``scripts/benchmark_suite.py``.

**Initial states.** Split ``s`` of every task runs the episodes of seeds ``FIRST_SEEDS[s]``,
``FIRST_SEEDS[s] + 1``, ... (episode ``k``: seed ``FIRST_SEEDS[s] + k``): one batch of envs is
reset with ``reset(seed=FIRST_SEEDS[s])``, which gives env ``k`` the seed ``FIRST_SEEDS[s] + k``
(``BaseEnv.reset``), so every draw of an episode (positions, colours) comes from its seed alone.
The seeds lie far from those the training and evaluation scripts default to (0 and up, 10 000 and
up), so a policy trained with default seeds never saw them. A split is a suite variant
(``gym.make(env_id, variant=split)``, ``tasks/so_suite.py``): ``"train"`` (in distribution) or a
held-out one.

**Success.** Every episode runs to the task's time limit, terminations ignored. *Once*: the task
reported success at some step; *at end*: success holds at the last step (the cube left in the
square, still in the bowl, the stack standing, the gripper released where the task asks it).

**Intervals.** The 95 % Wilson score interval of ``k`` successes in ``n`` episodes (E. B. Wilson,
"Probable inference, the law of succession, and statistical inference", JASA 22 (1927) 209-212):
centre ``(p + z^2 / 2n) / (1 + z^2 / n)``, half-width
``z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)`` with ``p = k / n`` and ``z = 1.959964``
(the standard normal's 97.5 % quantile). The mean over tasks is the mean of their rates; with
the same number of episodes per task that is the pooled rate, and its interval is the pooled
count's Wilson interval (episodes taken as independent).

**Policies.** ``"expert"``: the task's scripted expert (``simulo_envs.policies.EXPERTS``, on
``pd_ee_delta_pos``); or a checkpoint of ``scripts/train.py`` / ``train_sb3.py`` (deterministic
policy, ``simulo_envs.training.evaluation.evaluate``) or of ``scripts/train_il.py``
(``simulo_envs.imitation.rollout.evaluate``), or a LeRobot policy folder (in the LeRobot venv:
LeRobot's own ``rollout``, ``lerobot_env_simulo/evaluation.py``), run in the split's variant of
its own task. ``lerobot-eval`` runs the same episodes with ``--env.type=simulo --env.task=<task>
--env.variant=<split> --seed=<FIRST_SEEDS[split]>`` (``docs/suite_benchmark.md``).

**Tasks.** Every suite task (a ``SuiteEnv``: it takes ``variant=``) runs the protocol, the SO-101
tasks and their SO-100 twins; the default list is the SO-101 suite.
"""

from __future__ import annotations

import math
import os
import time
from typing import Optional, Sequence

import gymnasium as gym
import torch

from simulo_envs.envs.registration import REGISTERED
from simulo_envs.imitation.checkpoint import is_imitation_checkpoint
from simulo_envs.imitation.checkpoint import read_checkpoint as read_imitation_checkpoint
from simulo_envs.imitation.dispatch import by_policy_type
from simulo_envs.training.lerobot_policies import by_policy_folder, is_policy_folder, policy_task
from simulo_envs.policies import EXPERTS
from simulo_envs.tasks.so_suite import VARIANTS, SuiteEnv
from simulo_envs.training.evaluation import evaluate, read_checkpoint, record_policy_video

__all__ = ["FIRST_SEEDS", "Z_95", "wilson_interval", "suite_tasks", "checkpoint_task", "run_expert",
           "run_checkpoint", "summarize", "markdown_table"]

evaluate, _ = by_policy_folder(*by_policy_type(evaluate, record_policy_video))   # imitation, LeRobot too

FIRST_SEEDS = {"train": 1_000_000, "heldout": 2_000_000, "heldout_colors": 3_000_000,
               "heldout_shapes": 4_000_000, "heldout_distractors": 5_000_000, "heldout_positions": 6_000_000}
"""The first seed of each split; episode ``k`` of a split runs seed ``FIRST_SEEDS[split] + k``."""
assert set(FIRST_SEEDS) == set(VARIANTS)
Z_95 = 1.959963984540054
"""The standard normal's 97.5 % quantile: a two-sided 95 % interval."""


def wilson_interval(successes: int, episodes: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` in [0, 1] of ``successes`` in ``episodes``
    Bernoulli trials (formula in the module docstring); ``z = Z_95`` gives 95 %.

    Raises:
        ValueError: ``episodes < 1`` or ``successes`` outside ``[0, episodes]``.
    """
    if episodes < 1 or not 0 <= successes <= episodes:
        raise ValueError(f"need 0 <= successes <= episodes and episodes >= 1, got {successes} of {episodes}")
    p, n, z2 = successes / episodes, episodes, z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)


def suite_tasks(prefix: str = "SO101") -> list[str]:
    """The registered suite tasks (``SuiteEnv`` subclasses: they take ``variant=``) whose id starts
    with ``prefix`` (``""``: every arm's), sorted."""
    return sorted(env_id for env_id, cls in REGISTERED.items()
                  if env_id.startswith(prefix) and isinstance(cls, type) and issubclass(cls, SuiteEnv))


def checkpoint_task(checkpoint: str) -> str:
    """The task id ``checkpoint`` was trained on: a checkpoint of ``scripts/train.py``,
    ``train_sb3.py`` or ``train_il.py``, or a LeRobot policy folder (the task it is evaluated in:
    ``simulo_envs.training.lerobot_policies.policy_task``).

    Raises:
        FileNotFoundError: no such file. ValueError: not a checkpoint of those scripts, a policy
            folder that names no task of ours.
    """
    if os.path.isdir(checkpoint) and is_policy_folder(checkpoint):
        return policy_task(checkpoint)
    if is_imitation_checkpoint(checkpoint):
        return read_imitation_checkpoint(checkpoint)["spec"]["env_id"]
    return read_checkpoint(checkpoint)["env_id"]


def _check(split: str, episodes: int) -> int:
    if split not in FIRST_SEEDS:
        raise ValueError(f"split must be one of {list(FIRST_SEEDS)}, got {split!r}")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an int >= 1, got {episodes!r}")
    return FIRST_SEEDS[split]


def run_expert(env_id: str, split: str, episodes: int) -> dict:
    """Run the scripted expert of ``env_id`` for the protocol's ``episodes`` episodes of ``split``
    (one batch of ``episodes`` envs, each to the time limit). Returns the row ``summarize`` takes.

    Raises:
        ValueError: an unknown split, ``episodes < 1``; KeyError: a task without an expert.
    """
    first = _check(split, episodes)
    if env_id not in EXPERTS:
        raise KeyError(f"{env_id} has no scripted expert; tasks with one: {sorted(EXPERTS)}")
    start = time.perf_counter()
    env = gym.make(env_id, num_envs=episodes, control_mode="pd_ee_delta_pos", variant=split)
    try:
        expert = EXPERTS[env_id](env)
        _, info = env.reset(seed=first)
        once = torch.zeros(episodes, dtype=torch.bool)
        for _ in range(env.unwrapped.default_max_episode_steps):
            _, _, _, _, info = env.step(expert.act())
            once |= info["success"].cpu()
        at_end = info["success"].cpu()
    finally:
        env.close()
    return _row(env_id, split, "expert", episodes, int(once.sum()), int(at_end.sum()), time.perf_counter() - start)


def run_checkpoint(checkpoint: str, split: str, episodes: int, device: str = "cpu") -> dict:
    """Run the deterministic policy of ``checkpoint`` (its own task, in ``split``'s variant) for
    the protocol's ``episodes`` episodes of ``split``, each to the time limit. Returns the row
    ``summarize`` takes.

    Raises:
        ValueError: an unknown split, ``episodes < 1``, a checkpoint whose task is not a suite task
            (it has no variants); FileNotFoundError: no such file; as ``evaluate``.
    """
    first = _check(split, episodes)
    env_id = checkpoint_task(checkpoint)
    if env_id not in suite_tasks(""):
        raise ValueError(f"{checkpoint} is a policy for {env_id}, not a suite task; suite tasks: {suite_tasks('')}")
    start = time.perf_counter()
    result = evaluate(checkpoint, episodes, seed=first, max_envs=episodes, device=device, full_episodes=True,
                      env_kwargs={"variant": split})
    once, at_end = round(result["success_rate"] * episodes), round(result["success_at_end"] * episodes)
    return _row(result["env_id"], split, checkpoint, episodes, once, at_end, time.perf_counter() - start)


def _row(env_id: str, split: str, policy: str, episodes: int, once: int, at_end: int, wall_s: float) -> dict:
    first = FIRST_SEEDS[split]
    return {"env_id": env_id, "split": split, "policy": policy, "episodes": episodes,
            "seeds": [first, first + episodes - 1], "success_once": once / episodes,
            "success_once_ci95": list(wilson_interval(once, episodes)), "success_at_end": at_end / episodes,
            "success_at_end_ci95": list(wilson_interval(at_end, episodes)), "wall_s": round(wall_s, 2)}


def summarize(rows: Sequence[dict]) -> dict:
    """``{"rows": rows, "mean": {split: ...}}``: per split, the mean over its tasks of success once
    and at the end, each with the pooled count's 95 % Wilson interval (module docstring)."""
    mean = {}
    for split in dict.fromkeys(row["split"] for row in rows):
        own = [row for row in rows if row["split"] == split]
        n = sum(row["episodes"] for row in own)
        entry = {"tasks": len(own), "episodes": n}
        for key in ("success_once", "success_at_end"):
            count = sum(round(row[key] * row["episodes"]) for row in own)
            entry[key] = sum(row[key] for row in own) / len(own)
            entry[key + "_ci95"] = list(wilson_interval(count, n))
        mean[split] = entry
    return {"rows": list(rows), "mean": mean}


def markdown_table(summary: dict) -> str:
    """The summary as one Markdown table: a row per task and split, then a mean row per split;
    rates in percent with their 95 % Wilson intervals."""
    def cell(value: float, ci: Sequence[float]) -> str:
        return f"{100 * value:.0f} % [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]"

    lines = ["| task | split | policy | episodes (seeds) | success once [95 % CI] | success at end [95 % CI] |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in summary["rows"]:
        lines.append(f"| {row['env_id']} | {row['split']} | {row['policy']} | {row['episodes']} "
                     f"({row['seeds'][0]}-{row['seeds'][1]}) | {cell(row['success_once'], row['success_once_ci95'])} "
                     f"| {cell(row['success_at_end'], row['success_at_end_ci95'])} |")
    for split, entry in summary["mean"].items():
        tasks = f"{entry['tasks']} task" + ("s" if entry["tasks"] != 1 else "")
        lines.append(f"| **mean of {tasks}** | {split} | | {entry['episodes']} "
                     f"| {cell(entry['success_once'], entry['success_once_ci95'])} "
                     f"| {cell(entry['success_at_end'], entry['success_at_end_ci95'])} |")
    return "\n".join(lines) + "\n"


def resolve_split_list(splits: Optional[Sequence[str]]) -> list[str]:
    """``splits`` checked against ``FIRST_SEEDS`` (default: train and heldout).

    Raises:
        ValueError: an unknown split.
    """
    splits = list(splits or ("train", "heldout"))
    for split in splits:
        _check(split, 1)
    return splits
