"""``SimuloRunner``: rsl-rl-lib 5.5.1's ``OnPolicyRunner`` on CPU ranks too, with our progress log.

``OnPolicyRunner.learn`` runs the PPO loop unchanged; this subclass changes three of its hooks:

- ``_configure_multi_gpu``: the library joins a NCCL group and requires ``cuda:<local_rank>``;
  here the rank comes from a ``RankInfo`` and the group is gloo on the CPU, NCCL on CUDA
  (``simulo_envs.wrappers.distributed``). Everything else the library does for several
  processes works on gloo as it is: parameters broadcast from rank 0 before the first rollout,
  gradients averaged in ``PPO.reduce_parameters``, the adaptive learning rate decided on rank 0 and
  broadcast, observation-normaliser statistics all-reduced.
- the logger: ``ProgressLogger`` replaces the library's console block with a tqdm bar that moves
  every env step, writes ``progress.csv`` and TensorBoard scalars against env steps (all ranks'
  finished episodes, gathered on rank 0), and writes nothing on other ranks. Each row also holds
  the iteration's seconds of rollout (``collect_s``) and of PPO update (``learn_s``, gradient
  averaging included), as rank 0's clock saw them.
- ``save``: every checkpoint carries ``infos`` (env id, training config, seed, env steps, the
  task's module), which is all ``simulo_envs.wrappers.training.load_policy`` needs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import time
from collections import deque
from typing import Callable, Optional

import torch
import torch.distributed as dist
from rsl_rl.runners import OnPolicyRunner
from rsl_rl.utils.logger import Logger

from simulo_envs.wrappers.distributed import RankInfo, init_process_group

__all__ = ["SimuloRunner", "ProgressLogger", "WallClockLimit", "EPISODE_KEYS"]

EPISODE_KEYS = ("success_once", "success_at_end", "return", "length")
"""Per-episode statistics ``RslRlVecEnv`` reports in ``extras["episode"]`` and the log averages."""


class WallClockLimit(Exception):
    """Raised out of ``OnPolicyRunner.learn`` by ``ProgressLogger.log`` when the next iteration
    would end past ``max_wall_s``; ``simulo_envs.wrappers.training.train`` catches it."""


class ProgressLogger(Logger):
    """rsl_rl's ``Logger`` with our outputs (see the module docstring).

    ``progress.csv`` (rank 0) has one row per iteration: ``iteration``, ``env_steps`` (all ranks),
    ``wall_s`` (since the first rollout), ``episodes`` (finished so far, all ranks), then
    ``success_once``, ``success_at_end``, ``return``, ``length``: means over the last 100 finished
    episodes of all ranks, empty while no episode has finished.
    """

    def __init__(self, *, runner: "SimuloRunner", log_dir: Optional[str], progress_total: Optional[int],
                 desc: str, on_iteration: Optional[Callable[[dict], None]] = None,
                 max_wall_s: Optional[float] = None):
        info = runner.rank_info
        super().__init__(log_dir=log_dir, cfg=runner.cfg, env_cfg=runner.env.cfg, num_envs=runner.env.num_envs,
                         is_distributed=info.distributed, gpu_world_size=info.world_size,
                         gpu_global_rank=info.rank, device=runner.device)
        self.on_iteration = on_iteration
        self.max_wall_s = max_wall_s
        self.env_steps = 0
        self.episodes = 0
        self.recent = {key: deque(maxlen=100) for key in EPISODE_KEYS}
        self._finished: list[torch.Tensor] = []
        self._steps_per_env_step = runner.env.num_envs * info.world_size
        self._progress_total, self._desc = progress_total, desc
        self.progress_bar = None
        self._csv = None
        self._start = time.perf_counter()

    # -- hooks OnPolicyRunner.learn calls ---------------------------------------------------------
    def init_logging_writer(self) -> None:
        """Create the TensorBoard writer, ``progress.csv`` and the bar (rank 0 with a log dir only)."""
        super().init_logging_writer()
        self._start = time.perf_counter()
        if self.writer is None:
            return
        from tqdm import tqdm

        handle = open(os.path.join(self.log_dir, "progress.csv"), "w", newline="")
        self._csv = (handle, csv.writer(handle))
        self._csv[1].writerow(["iteration", "env_steps", "wall_s", "episodes", *EPISODE_KEYS, "collect_s", "learn_s"])
        if self._progress_total:
            self.progress_bar = tqdm(total=self._progress_total, unit="step", unit_scale=True, desc=self._desc,
                             dynamic_ncols=True)

    def process_env_step(self, rewards, dones, extras, intrinsic_rewards=None) -> None:
        """Keep the episodes that finished in this step (every rank) and move the bar (rank 0)."""
        episode = extras.get("episode")
        if episode:
            self._finished.append(torch.stack([episode[key].detach().float().cpu() for key in EPISODE_KEYS], dim=1))
        if self.progress_bar is not None:
            self.progress_bar.update(self._steps_per_env_step)

    def log(self, it: int, start_it: int, total_it: int, collect_time: float, learn_time: float,
            loss_dict: dict, learning_rate: float, action_std: torch.Tensor, rnd_weight=None, **_) -> None:
        """One iteration's log: gather the finished episodes of all ranks (a collective, so every rank
        calls it), then on rank 0 write the CSV row and TensorBoard scalars and update the bar."""
        finished = torch.cat(self._finished) if self._finished else torch.zeros(0, len(EPISODE_KEYS))
        self._finished.clear()
        if self.gpu_world_size > 1:
            gathered: list = [None] * self.gpu_world_size
            dist.all_gather_object(gathered, finished)
            finished = torch.cat(gathered)
        self.env_steps += self.cfg["num_steps_per_env"] * self._steps_per_env_step
        self.episodes += len(finished)
        for column, key in enumerate(EPISODE_KEYS):
            self.recent[key].extend(finished[:, column].tolist())
        wall = time.perf_counter() - self._start
        row = {"iteration": it, "env_steps": self.env_steps, "wall_s": wall, "episodes": self.episodes,
               **{key: (sum(v) / len(v) if v else None) for key, v in self.recent.items()},
               "collect_s": collect_time, "learn_s": learn_time}
        if self.writer is not None:
            self._write(row, loss_dict, learning_rate, action_std, collect_time + learn_time)
        if self.on_iteration is not None:
            self.on_iteration(row)
        if self.max_wall_s is not None and self._out_of_time(wall, collect_time + learn_time):
            raise WallClockLimit(f"stopped after {wall:.0f} s: another iteration would pass {self.max_wall_s:.0f} s")

    def _out_of_time(self, wall: float, iteration_s: float) -> bool:
        """Whether another iteration (as long as the last) would end past ``max_wall_s``; rank 0
        decides for every rank (ranks must stop at the same iteration)."""
        stop = [wall + iteration_s > self.max_wall_s]
        if self.gpu_world_size > 1:
            dist.broadcast_object_list(stop, src=0)
        return bool(stop[0])

    def stop_logging_writer(self) -> None:
        """Flush and close the bar, the CSV and the writer."""
        super().stop_logging_writer()
        if self.progress_bar is not None:
            self.progress_bar.close()
            self.progress_bar = None
        if self._csv is not None:
            self._csv[0].close()
            self._csv = None
        if self.writer is not None and hasattr(self.writer, "close"):
            self.writer.close()

    def _store_code_state(self) -> list[str]:
        """Nothing: the library would diff rsl_rl's own install, which is no git checkout."""
        return []

    # -- rank 0's outputs ------------------------------------------------------------------------
    def _write(self, row: dict, loss_dict: dict, learning_rate: float, action_std: torch.Tensor,
               iteration_s: float) -> None:
        steps = self.env_steps
        for key in EPISODE_KEYS:
            if row[key] is not None:
                self.writer.add_scalar(f"episode/{key}", row[key], steps)
        for key, value in loss_dict.items():
            self.writer.add_scalar(f"loss/{key}", value, steps)
        self.writer.add_scalar("loss/learning_rate", learning_rate, steps)
        self.writer.add_scalar("policy/action_std", action_std.mean().item(), steps)
        self.writer.add_scalar("perf/steps_per_second",
                               self.cfg["num_steps_per_env"] * self._steps_per_env_step / max(iteration_s, 1e-9), steps)
        handle, table = self._csv
        table.writerow([row["iteration"], steps, f"{row['wall_s']:.1f}", row["episodes"],
                        *("" if row[key] is None else f"{row[key]:.4f}" for key in EPISODE_KEYS),
                        f"{row['collect_s']:.3f}", f"{row['learn_s']:.3f}"])
        handle.flush()
        if self.progress_bar is not None:
            if row["success_once"] is None:
                self.progress_bar.set_postfix_str("no finished episode yet", refresh=False)
            else:
                self.progress_bar.set_postfix(success=f"{row['success_once']:.2f}", ret=f"{row['return']:.2f}",
                                      refresh=False)


class SimuloRunner(OnPolicyRunner):
    """``OnPolicyRunner`` for simulo_envs: gloo or NCCL ranks, our progress log, self-describing checkpoints.

    Args:
        env: an ``RslRlVecEnv`` holding this rank's envs.
        train_cfg: rsl_rl's runner config (the ``"runner"`` entry of a task's ``TRAIN_CONFIG``).
        log_dir: where rank 0 writes; ``None``: no files (evaluation, or ranks > 0).
        device: this rank's network device (``"cpu"``, ``"cuda:<local_rank>"``).
        rank_info: this process's place in the ``torchrun`` launch; the default is one process.
        infos: stored in every checkpoint (``env_steps`` is added at save time).
        progress_total: planned env steps for the bar (rank 0); ``None`` or 0: no bar.
        desc: the bar's label.
        on_iteration: called on every rank after each update with the iteration's row
            (``ProgressLogger``'s columns; episode means are ``None`` until an episode finishes).
        max_wall_s: a wall-clock budget [s] for ``learn`` (rollouts and updates, from its first
            rollout): after an iteration, if another as long as it would end past the budget,
            ``learn`` stops by raising ``WallClockLimit`` (rank 0's clock decides for all ranks).

    The library prints both networks when it builds them; that output is kept in
    ``self.model_summary`` instead.
    """

    def __init__(self, env, train_cfg: dict, log_dir: Optional[str] = None, device: str = "cpu", *,
                 rank_info: RankInfo = RankInfo(), infos: Optional[dict] = None, progress_total: Optional[int] = None,
                 desc: str = "", on_iteration: Optional[Callable[[dict], None]] = None,
                 max_wall_s: Optional[float] = None):
        self.rank_info = rank_info
        self.infos = dict(infos or {})
        if not rank_info.is_main:
            log_dir = None
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            super().__init__(env, train_cfg, log_dir=log_dir, device=device)
        self.model_summary = printed.getvalue()
        self.logger = ProgressLogger(runner=self, log_dir=log_dir, progress_total=progress_total, desc=desc,
                                     on_iteration=on_iteration, max_wall_s=max_wall_s)

    def _configure_multi_gpu(self) -> None:
        """The library's multi-GPU set-up, for any device: ranks from ``self.rank_info``, a gloo group
        on the CPU and a NCCL group on CUDA (``init_process_group``)."""
        info = self.rank_info
        self.gpu_world_size, self.gpu_global_rank, self.gpu_local_rank = info.world_size, info.rank, info.local_rank
        self.is_distributed = info.distributed
        if not info.distributed:
            self.cfg["multi_gpu"] = None
            return
        init_process_group(info, self.device)
        self.cfg["multi_gpu"] = {"global_rank": info.rank, "local_rank": info.local_rank,
                                 "world_size": info.world_size}

    def save(self, path: str, infos: Optional[dict] = None) -> None:
        """``OnPolicyRunner.save`` with ``self.infos`` and the env steps trained so far in ``infos``."""
        super().save(path, {**self.infos, "env_steps": self.logger.env_steps, **(infos or {})})
