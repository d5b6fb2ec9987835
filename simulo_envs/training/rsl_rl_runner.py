"""``SimuloRunner``: rsl-rl-lib 5.5.1's ``OnPolicyRunner`` on CPU ranks too, with our progress log.

``OnPolicyRunner.learn`` runs the PPO loop unchanged; this subclass changes three of its hooks:

- ``_configure_multi_gpu``: the library joins a NCCL group and requires ``cuda:<local_rank>``;
  here the rank comes from a ``RankInfo`` and the group is gloo on the CPU, NCCL on CUDA
  (``simulo_envs.training.distributed``). Everything else the library does for several
  processes works on gloo as it is: parameters broadcast from rank 0 before the first rollout,
  gradients averaged in ``PPO.reduce_parameters``, the adaptive learning rate decided on rank 0 and
  broadcast, observation-normaliser statistics all-reduced.
- the logger: ``ProgressLogger`` replaces the library's console block with a progress bar
  (``simulo_envs.progress``) that moves every env step, writes ``progress.csv`` and
  TensorBoard scalars against env steps (all ranks' finished episodes, gathered on rank 0), and
  writes nothing on other ranks. Each row also holds the iteration's seconds of rollout
  (``collect_s``) and of PPO update (``learn_s``, gradient averaging included), as rank 0's clock
  saw them. It is also where ``learn`` stops early: at the wall-clock cap, or after a stop signal
  (``simulo_envs.training.interrupt``: at the next env step in one process, at the end of the
  iteration when several ranks must stop together).
- ``save``: every checkpoint carries ``infos`` (env id, training config, seed, env steps, PPO
  iterations done, finished episodes, the last 100 episodes' statistics, the task's module),
  which is all ``simulo_envs.training.evaluation.load_policy`` needs and what a resumed
  training continues from (``ProgressLogger.restore``). It is written whole or not at all.

A config's ``class_name`` that names a class where it lived before (``MOVED_CLASS_MODULES``: a
checkpoint saved then stores it) is read as the class's current path, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import signal
import time
import warnings
from collections import deque
from typing import Callable, Optional

import torch
import torch.distributed as dist
from rsl_rl.runners import OnPolicyRunner
from rsl_rl.utils.logger import Logger

from simulo_envs.training.distributed import RankInfo, init_process_group
from simulo_envs.training.interrupt import StopOnSignals, TrainingInterrupted, max_over_ranks
from simulo_envs.progress import ProgressBar
from simulo_envs.training.run_files import open_progress_csv, progress_row

__all__ = ["SimuloRunner", "ProgressLogger", "WallClockLimit", "EPISODE_KEYS", "MOVED_CLASS_MODULES",
           "current_class_names"]

EPISODE_KEYS = ("success_once", "success_at_end", "return", "length")
"""Per-episode statistics ``RslRlVecEnv`` reports in ``extras["episode"]`` and the log averages."""


MOVED_CLASS_MODULES = {"simulo_envs.wrappers.rsl_rl_ppo": "simulo_envs.training.rsl_rl_ppo"}
"""Modules a training config's ``class_name`` may name from before they moved -> where they are now
(the old names are read for one release)."""


def current_class_names(train_cfg: dict) -> dict:
    """A copy of rsl_rl's runner config with every ``class_name`` (``"module:Class"`` or
    ``"module.Class"``) in a module of ``MOVED_CLASS_MODULES`` renamed to the module's new path,
    with a ``DeprecationWarning`` naming it; ``train_cfg`` is not changed."""
    def renamed(value):
        if isinstance(value, dict):
            return {key: (_moved_class(item) if key == "class_name" else renamed(item)) for key, item in value.items()}
        if isinstance(value, list):
            return [renamed(item) for item in value]
        return value

    return renamed(copy.deepcopy(train_cfg))


def _moved_class(name):
    for old, new in MOVED_CLASS_MODULES.items():
        if isinstance(name, str) and name.startswith(old) and name[len(old):len(old) + 1] in (":", "."):
            warnings.warn(f"class_name {name!r}: {old} moved to {new}; name {new + name[len(old):]!r} "
                          "(the old name goes away in the next release)", DeprecationWarning)
            return new + name[len(old):]
    return name


class WallClockLimit(Exception):
    """Raised out of ``OnPolicyRunner.learn`` by ``ProgressLogger.log`` when the next iteration
    would end past ``max_wall_s``; ``simulo_envs.training.rsl_rl_train.train`` catches it."""


class ProgressLogger(Logger):
    """rsl_rl's ``Logger`` with our outputs (see the module docstring).

    ``progress.csv`` (rank 0) has one row per iteration: ``iteration``, ``env_steps`` (all ranks),
    ``wall_s`` (since the first rollout), ``episodes`` (finished so far, all ranks), then
    ``success_once``, ``success_at_end``, ``return``, ``length``: means over the last 100 finished
    episodes of all ranks, empty while no episode has finished. A resumed training (``restore``)
    continues the counts, the clock and the file; rows past its checkpoint (an earlier session
    that ended without saving them) are dropped, in TensorBoard too (``purge_step``).

    ``stop_signals``: a ``StopOnSignals`` whose request stops ``learn`` (``TrainingInterrupted``).
    """

    def __init__(self, *, runner: "SimuloRunner", log_dir: Optional[str], progress_total: Optional[int],
                 desc: str, on_iteration: Optional[Callable[[dict], None]] = None,
                 max_wall_s: Optional[float] = None):
        info = runner.rank_info
        super().__init__(log_dir=log_dir, cfg=runner.cfg, env_cfg=runner.env.cfg, num_envs=runner.env.num_envs,
                         is_distributed=info.distributed, gpu_world_size=info.world_size,
                         gpu_global_rank=info.rank, device=runner.device)
        self.rank = info.rank
        self.on_iteration = on_iteration
        self.max_wall_s = max_wall_s
        self.stop_signals: Optional[StopOnSignals] = None
        self.env_steps = 0
        self.episodes = 0
        self.iterations_done = 0
        self.wall_offset = 0.0          # seconds trained by earlier sessions of a resumed training
        self.resumed = False
        self.recent = {key: deque(maxlen=100) for key in EPISODE_KEYS}
        self._finished: list[torch.Tensor] = []
        self._steps_per_env_step = runner.env.num_envs * info.world_size
        self._progress_total, self._desc = progress_total, desc
        self.progress_bar = None
        self._csv = None
        self._start = time.perf_counter()

    def state(self) -> dict:
        """What a checkpoint keeps of the log: ``env_steps``, ``iterations``, ``episodes``, ``wall_s``
        and ``recent`` (the last 100 episodes' statistics)."""
        return {"env_steps": self.env_steps, "iterations": self.iterations_done, "episodes": self.episodes,
                "wall_s": self.wall_offset + (time.perf_counter() - self._start),
                "recent": {key: list(values) for key, values in self.recent.items()}}

    def restore(self, infos: dict) -> None:
        """Continue the log of a checkpoint's ``infos`` (``state``'s keys): call before ``learn``."""
        self.env_steps, self.iterations_done = int(infos["env_steps"]), int(infos["iterations"])
        self.episodes, self.wall_offset = int(infos.get("episodes", 0)), float(infos.get("wall_s", 0.0))
        for key, values in infos.get("recent", {}).items():
            if key in self.recent:
                self.recent[key].extend(values)
        self.resumed = True

    # -- hooks OnPolicyRunner.learn calls ---------------------------------------------------------
    def init_logging_writer(self) -> None:
        """Create the TensorBoard writer, ``progress.csv`` and the bar (rank 0 with a log dir only).
        A resumed session writes one event file: the library's writer is replaced by one that drops
        the events past the checkpoint (``purge_step``), and the file the library's had opened
        (its header alone) is removed."""
        resumed_in = self.log_dir if self.resumed and self.log_dir and os.path.isdir(self.log_dir) else None
        earlier = set(os.listdir(resumed_in)) if resumed_in else set()
        super().init_logging_writer()
        self._start = time.perf_counter()
        if self.writer is None:
            return
        if resumed_in and hasattr(self.writer, "purge_step"):   # TensorBoard: drop events past the checkpoint
            from torch.utils.tensorboard import SummaryWriter

            self.writer.close()
            for name in set(os.listdir(resumed_in)) - earlier:
                if name.startswith("events.out.tfevents."):
                    os.remove(os.path.join(resumed_in, name))
            self.writer = SummaryWriter(log_dir=self.log_dir, flush_secs=10, purge_step=self.env_steps + 1)
        self._csv = open_progress_csv(os.path.join(self.log_dir, "progress.csv"),
                                      self.iterations_done if self.resumed else None)
        if self._progress_total:
            self.progress_bar = ProgressBar(total=self._progress_total, unit="step", unit_scale=True, desc=self._desc,
                                            deadline_s=self.max_wall_s, initial=self.env_steps)

    def process_env_step(self, rewards, dones, extras, intrinsic_rewards=None) -> None:
        """Keep the episodes that finished in this step (every rank) and move the bar (rank 0)."""
        episode = extras.get("episode")
        if episode:
            self._finished.append(torch.stack([episode[key].detach().float().cpu() for key in EPISODE_KEYS], dim=1))
        if self.progress_bar is not None:
            self.progress_bar.update(self._steps_per_env_step)
        if self.stop_signals is not None and self.gpu_world_size == 1:
            self.stop_signals.check()   # one process: stop between env steps (the rollout is dropped)

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
        self.iterations_done += 1
        for column, key in enumerate(EPISODE_KEYS):
            self.recent[key].extend(finished[:, column].tolist())
        session_wall = time.perf_counter() - self._start
        wall = self.wall_offset + session_wall
        row = {"iteration": it, "env_steps": self.env_steps, "wall_s": wall, "episodes": self.episodes,
               **{key: (sum(v) / len(v) if v else None) for key, v in self.recent.items()},
               "collect_s": collect_time, "learn_s": learn_time}
        if self.writer is not None:
            self._write(row, loss_dict, learning_rate, action_std, collect_time + learn_time)
        if self.on_iteration is not None:
            self.on_iteration(row)
        self._stop_if_asked(session_wall, collect_time + learn_time)

    def _stop_if_asked(self, session_wall: float, iteration_s: float) -> None:
        """After an iteration: stop on a signal any rank received (``TrainingInterrupted``), or when
        another iteration as long as the last would end past ``max_wall_s`` by rank 0's clock
        (``WallClockLimit``). One all-reduce decides for every rank: they stop at the same iteration."""
        requested = self.stop_signals.requested if self.stop_signals is not None else None
        number = float(signal.Signals[requested]) if requested else 0.0
        late = (self.max_wall_s is not None and self.rank == 0
                and session_wall + iteration_s > self.max_wall_s)
        number, late = max_over_ranks([number, float(late)])
        if number:
            raise TrainingInterrupted(signal.Signals(int(number)).name)
        if late:
            raise WallClockLimit(f"stopped after {session_wall:.0f} s: another iteration would pass "
                                 f"{self.max_wall_s:.0f} s")

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
        table.writerow(progress_row(row))
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
            super().__init__(env, current_class_names(train_cfg), log_dir=log_dir, device=device)
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
        """``OnPolicyRunner.save`` with ``self.infos`` and the log's state (``ProgressLogger.state``)
        in ``infos``, written to a temporary file first and then renamed, so ``path`` is never
        half written."""
        temporary = f"{path}.partial"
        super().save(temporary, {**self.infos, **self.logger.state(), **(infos or {})})
        os.replace(temporary, path)
