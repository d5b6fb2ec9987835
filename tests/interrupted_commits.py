"""Kill a LeRobot-format commit at each of its durable steps, as a crash or ``kill -9`` would.

``kill_points(root)`` writes a dataset of ``COMMITTED`` episodes with our ``LeRobotWriter``, then
for ``k = 0, 1, ...`` copies it and, in a forked child, starts one more commit and ends the child
with ``os._exit`` (no cleanup, no ``finally``) just before its ``k``-th rename or folder exchange
(``os.replace``, ``atomic.exchange``: the moments between two writes a reader can see), until a
child finishes the commit. It yields each interrupted copy with the number of renames done before
the kill. Used by ``tests/test_datasets_interrupted.py`` (our reader) and by the LeRobot venv's
``integrations/lerobot_env_simulo/tests/test_interrupted_dataset.py`` (LeRobot's classes).
"""

from __future__ import annotations

import os
import shutil
from typing import Iterator

import numpy as np

from simulo_envs.datasets import DatasetSchema, Episode, LeRobotWriter, atomic

COMMITTED = 2
"""Episodes committed before the interrupted commit (seeds 0 .. COMMITTED - 1)."""
SCHEMA = DatasetSchema(
    env_id="SO100Lift-v1", obs_mode="rgb", control_mode="pd_joint_pos_lerobot", reward_mode="normalized_dense",
    fps=30, robot_type="so_follower", state_names=tuple(f"m{i}.pos" for i in range(3)),
    action_names=tuple(f"m{i}.pos" for i in range(3)), cameras={"front": (32, 48, 3)}, task="Lift a cube.",
    max_episode_steps=50, env_kwargs={}, camera_sources={"front": "base_camera"})
"""A small dataset in a real arm's layout: 3 joints, one 48x32 camera named front."""


def episode(seed: int, steps: int = 6) -> Episode:
    """A synthetic episode of ``steps`` steps whose values encode its seed (state = seed + t)."""
    rng = np.random.default_rng(seed)
    t = np.arange(steps + 1, dtype=np.float32)[:, None]
    obs = {"agent": {"qpos": np.repeat(seed + t, 3, axis=1).astype(np.float32)},
           "sensor_data": {"base_camera": {"rgb": rng.integers(60, 200, (steps + 1, 32, 48, 3), dtype=np.uint8)}}}
    success = np.zeros(steps, bool)
    success[-1] = True
    return Episode(seed=seed, obs=obs, actions=np.repeat(seed + t[:-1], 3, axis=1).astype(np.float32),
                   rewards=np.zeros(steps, np.float32), terminated=success.copy(), truncated=np.zeros(steps, bool),
                   success=success)


def base_dataset(root: str) -> str:
    """The dataset every kill starts from: ``COMMITTED`` episodes, one episode per file (so the
    next commit writes new data, video and metadata files)."""
    writer = LeRobotWriter(root, SCHEMA, episodes_per_file=1)
    for seed in range(COMMITTED):
        writer.add(episode(seed))
    return root


def _commit_killed_at(root: str, kill_at: int) -> bool:
    """In a forked child, append one episode to ``root`` and die before the ``kill_at``-th rename or
    exchange; True when the child finished the commit instead."""
    pid = os.fork()
    if pid == 0:  # the child: count the renames, die at the chosen one
        count = [0]
        replace, exchange = os.replace, atomic.exchange

        def counted(call):
            def run(*args, **kwargs):
                if count[0] == kill_at:
                    os._exit(9)
                count[0] += 1
                return call(*args, **kwargs)
            return run

        os.replace, atomic.exchange = counted(replace), counted(exchange)
        try:
            LeRobotWriter(root, SCHEMA, append=True, episodes_per_file=1).add(episode(COMMITTED))
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 9):
        raise RuntimeError(f"the writer failed (exit {code}) before the kill at rename {kill_at}")
    return code == 0


def kill_points(folder: str, limit: int = 40) -> Iterator[tuple[int, str]]:
    """``(k, dataset)`` for each kill point ``k`` of one commit (module docstring), then
    ``(k, dataset)`` of the commit that finished."""
    base = base_dataset(os.path.join(folder, "base"))
    for k in range(limit):
        root = os.path.join(folder, f"killed_at_{k}")
        shutil.copytree(base, root, symlinks=True)
        finished = _commit_killed_at(root, k)
        yield k, root
        if finished:
            return
    raise RuntimeError(f"a commit took more than {limit} renames")
