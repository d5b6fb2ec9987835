"""Training loop of the imitation policies (``scripts/train_il.py`` is its command line).

``train(demos, config, out_dir, ...)`` checks everything first (the demonstrations, the output
folder, a checkpoint to resume and its fit with the demonstrations), then runs ``config.iterations``
gradient steps of ``policy.loss`` on random batches of ``Windows`` (AdamW; learning rate warmed up
linearly, then cosine-decayed to 0; the decay follows whichever budget runs out first: iterations,
``max_minutes`` of wall-clock or ``max_cpu_minutes`` of this process's CPU time, so a time-capped
run still ends at a small learning rate), with an EMA of the weights (diffusers' ``EMAModel``,
warmup power ``config.ema_power``). On a machine shared with other work, the CPU budget is the
reproducible one: it is what the same training takes alone on one core.

Outputs in ``out_dir``: ``model_<iteration>.pt`` every ``checkpoint_every`` iterations and
``model_final.pt`` (``checkpoint.py``'s layout). Only the newest checkpoint keeps the training
state (optimizer, raw weights, EMA, generators) that resuming needs: each periodic checkpoint
is cut to its acting weights (what ``scripts/evaluate.py`` reads) once a newer one is written, so
a run's folder grows by one small file per checkpoint, not by one training state each. The
progress bar's time estimate counts ``max_minutes`` and ``max_cpu_minutes`` too. Also written:
``progress.csv`` (``iteration``, ``wall_s``, ``cpu_s``, ``loss``, ``lr``, ``it_per_s``), ``evaluations.csv`` (``iteration``,
``wall_s``, ``cpu_s`` and whatever ``on_checkpoint`` returns, e.g. a success rate) and TensorBoard
events. ``wall_s`` counts training only (gradient steps, logging, checkpoint writes), never the
time ``on_checkpoint`` takes; ``cpu_s`` is the CPU time this process spent on the same (all
threads), which on a shared machine says what the training would take alone on one core. A Ctrl-C
or a SIGTERM (``kill``, a job scheduler's stop; in the main thread) saves ``model_<iteration>.pt``
and returns (``TrainResult.interrupted``; ``scripts/train_il.py`` says where and how to resume). A
resumed run in its own folder keeps one training state as well: the checkpoint it resumed from
is cut to its acting weights once a newer one is written (``model_final.pt`` included).
"""

from __future__ import annotations

import csv
import math
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

import torch

from simulo_envs.envs.provenance import provenance
from simulo_envs.output_paths import check_not_foreign_dir, check_output_dir as check_writable_dir
from simulo_envs.imitation.checkpoint import (CheckpointError, check_resumable, export_policy, read_checkpoint,
                                              save_checkpoint)
from simulo_envs.imitation.config import ILConfig
from simulo_envs.imitation.demos import Demonstrations, Windows
from simulo_envs.imitation.encoders import Normalizer
from simulo_envs.imitation.policies import build_policy, check_settings
from simulo_envs.imitation.spec import PolicySpec, env_kwargs, spec_mismatch
from simulo_envs.progress import ProgressBar
from simulo_envs.training.interrupt import SIGNALS as STOP_SIGNALS, loop_started

__all__ = ["train", "TrainResult", "OutputInUse", "check_output_dir"]

LOCK = ".train_il.lock"
RUN_FILES = ("model_*.pt", "progress.csv", "evaluations.csv")
"""What a training writes into its output folder besides ``LOCK`` (a folder holding other files only is refused)."""


class OutputInUse(RuntimeError):
    """The output folder holds another training (or one is running there)."""


@dataclass
class TrainResult:
    """What ``train`` did (counts and seconds include a resumed run's earlier sessions)."""
    checkpoint: str                 # model_final.pt (or the interrupt's checkpoint)
    iterations: int                 # gradient steps done in total (resumed ones included)
    wall_s: float                   # training seconds in total (resumed ones included)
    loss: Optional[float]           # mean loss over the last logging window, or over the iterations after
                                    # it; None when this session trained no iteration
    interrupted: bool = False


def check_output_dir(out_dir: str, resume: bool) -> None:
    """Refuse an output folder that cannot be written, or that holds checkpoints of another run
    (unless resuming), before any work starts. Nothing is created or changed (``train`` makes the
    folder).

    Raises:
        OutputInUse: checkpoints already there and not resuming; a live training holds its lock.
        OutputError (a ValueError): the folder cannot be written (``output_paths.check_output_dir``), or
            holds files but none of a training (``output_paths.check_not_foreign_dir``).
    """
    check_writable_dir(out_dir, "output folder")
    check_not_foreign_dir(out_dir, RUN_FILES, "output folder")
    if not os.path.isdir(out_dir):
        return
    lock = os.path.join(out_dir, LOCK)
    if os.path.exists(lock):
        try:
            pid = int(open(lock).read().strip() or 0)
            os.kill(pid, 0)
            alive = pid != os.getpid()
        except (ValueError, ProcessLookupError, PermissionError):
            alive = False
        if alive:
            raise OutputInUse(f"{out_dir!r} is in use by a running training (process {pid})")
    existing = [n for n in os.listdir(out_dir) if n.startswith("model_") and n.endswith(".pt")]
    if existing and not resume:
        count = f"{len(existing)} checkpoint{'s' if len(existing) != 1 else ''}"
        raise OutputInUse(f"{out_dir!r} already holds a training ({count}): resume it "
                          f"(--resume {os.path.join(out_dir, 'model_final.pt')}) or choose another --out")


class _Budget:
    """Where a training stands against its budgets (iterations, wall seconds, CPU seconds; None: no
    cap), and its learning-rate factor: linear warmup, then a cosine to 0 over the largest fraction
    of a budget spent. With ``split`` > 0 (``encoder_pretrain``), the fractions below and above
    ``split`` are two stages, each with its own schedule (the second warmed up over its first
    ``STAGE_WARMUP`` of the budget)."""

    STAGE_WARMUP = 0.02

    def __init__(self, warmup: int, iterations: int, max_wall_s: Optional[float], max_cpu_s: Optional[float],
                 split: float = 0.0):
        self.warmup, self.iterations, self.max_wall_s, self.max_cpu_s = warmup, iterations, max_wall_s, max_cpu_s
        self.split = split
        self.iteration, self.wall_s, self.cpu_s = 0, 0.0, 0.0

    def pretraining(self) -> bool:
        """In the first stage of a two-stage training."""
        return self.spent() < self.split

    def spent(self) -> float:
        done = self.iteration / self.iterations
        for used, cap in ((self.wall_s, self.max_wall_s), (self.cpu_s, self.max_cpu_s)):
            if cap:
                done = max(done, used / cap)
        return done

    def factor(self, _: int = 0) -> float:
        spent = min(self.spent(), 1.0)
        if self.split > 0 and spent >= self.split:   # the second stage
            position = (spent - self.split) / (1 - self.split)
            if position < self.STAGE_WARMUP:
                return max(position / self.STAGE_WARMUP, 1e-3)
            return 0.5 * (1 + math.cos(math.pi * position))
        if self.iteration < self.warmup:
            return (self.iteration + 1) / self.warmup
        return 0.5 * (1 + math.cos(math.pi * (spent / self.split if self.split > 0 else spent)))


def _acting_weights(policy, ema) -> dict:
    """The policy's state dict with the EMA's parameters in place of the trained ones."""
    params = list(policy.parameters())
    ema.store(params)
    ema.copy_to(params)
    weights = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    ema.restore(params)
    return weights


def train(demos: Demonstrations, config: ILConfig, out_dir: str, seed: int = 0, max_minutes: Optional[float] = None,
          checkpoint_every: int = 2000, resume: Optional[str] = None, progress: bool = True, log_every: int = 100,
          on_checkpoint: Optional[Callable[[str, int, float], Optional[dict]]] = None,
          max_cpu_minutes: Optional[float] = None) -> TrainResult:
    """Train ``config.policy`` on ``demos`` (see the module docstring).

    Args:
        demos: the demonstrations (validated here).
        config: hyperparameters; with ``resume``, the checkpoint's are used except ``iterations``.
        max_minutes / max_cpu_minutes: stop after this many minutes of training, wall-clock / CPU
            time of this process (None: no cap); a resumed run gets them anew.
        resume: a training checkpoint (``model_*.pt`` of a run) to continue from.
        on_checkpoint: called after each checkpoint with ``(path, iteration, wall_s)``; a dict it
            returns (e.g. ``{"success_rate": 0.9}``) is logged with that row.

    Raises:
        DemonstrationError: as ``Demonstrations.validate``. OutputInUse / OutputError: as
        ``check_output_dir``. CheckpointError: ``resume`` is not a training checkpoint, or was
        trained on another task, observation kind or action width than ``demos``. ValueError:
        ``max_minutes``, ``max_cpu_minutes`` or ``checkpoint_every`` not > 0; ``resume`` with a
        ``config.iterations`` the checkpoint has already done.
    """
    from diffusers.training_utils import EMAModel
    from torch.utils.tensorboard import SummaryWriter
    demos.validate()
    for name, value in (("max_minutes", max_minutes), ("max_cpu_minutes", max_cpu_minutes)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    if checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be >= 1, got {checkpoint_every}")
    raw = None
    if resume is not None:
        raw = read_checkpoint(resume)
        check_resumable(raw, resume)
        problem = spec_mismatch(PolicySpec.from_dict(raw["spec"]), demos.spec, what="dataset")
        trained = raw["demos"].get("seeds")
        if not problem and trained is not None and list(trained) != list(demos.seeds):
            problem = (f"the run trained on {len(trained)} episodes (seeds {_seed_text(trained)}), these are "
                       f"{len(demos.seeds)} (seeds {_seed_text(demos.seeds)}); resume on the run's dataset and "
                       f"--num-demos")
        if problem:
            raise CheckpointError(f"cannot resume {resume!r} on {demos.source}: {problem}")
        config = ILConfig.from_dict({**raw["config"], "iterations": config.iterations})
        if int(raw["iteration"]) >= config.iterations:
            raise ValueError(f"{resume!r} already trained {int(raw['iteration']):,} iterations, and the budget is "
                             f"{config.iterations:,}: a budget above {int(raw['iteration']):,} trains further")
    check_settings(demos.spec, config)
    if config.state_aux_weight > 0 and any(e.other is None for e in demos.episodes):
        raise ValueError(f"state_aux_weight needs demonstrations that carry the state the policy does not read; "
                         f"{demos.source} has none (record it with --obs-mode rgb+state)")
    check_output_dir(out_dir, resume=raw is not None)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, LOCK), "w") as handle:
        handle.write(str(os.getpid()))
    on_main_thread = threading.current_thread() is threading.main_thread()
    # Both stop signals get the handler, SIGINT too: a process started with SIGINT ignored (a
    # background job of a non-interactive shell) has no KeyboardInterrupt from Python's own handler.
    previous = {s: signal.signal(s, _interrupt) for s in STOP_SIGNALS} if on_main_thread else {}
    try:
        return _train(demos, config, out_dir, seed, (max_minutes, max_cpu_minutes), checkpoint_every, raw, progress,
                      log_every, on_checkpoint, EMAModel, SummaryWriter, resume)
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        os.unlink(os.path.join(out_dir, LOCK))


def _seed_text(seeds) -> str:
    """A list of episode seeds, shortened for a message."""
    seeds = list(seeds)
    return ", ".join(map(str, seeds[:4])) + (f", ... {seeds[-1]}" if len(seeds) > 4 else "")


def _interrupt(signum, frame):
    """SIGINT / SIGTERM handler during the training: stop it as a Ctrl-C does (its checkpoint saved)."""
    raise KeyboardInterrupt


def _train(demos, config, out_dir, seed, minutes, checkpoint_every, raw, progress, log_every, on_checkpoint,
           EMAModel, SummaryWriter, resume=None) -> TrainResult:
    torch.manual_seed(seed)
    windows = Windows(demos, config.obs_horizon, config.pred_horizon)
    policy = build_policy(demos.spec, config, Normalizer(windows.state, windows.actions))
    if config.state_aux_weight > 0:
        policy.fit_other_state(windows.other)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    caps = [m * 60 if m else None for m in minutes]
    budget = _Budget(config.lr_warmup, config.iterations, *caps, split=config.encoder_pretrain)
    ema = EMAModel(policy.parameters(), decay=config.ema_max_decay, use_ema_warmup=True, power=config.ema_power)
    sampler = torch.Generator().manual_seed(seed)
    iteration, wall_s, cpu_s, frozen = 0, 0.0, 0.0, False
    if raw is not None:
        state = raw["train_state"]
        policy.load_state_dict(state["weights"])
        optimizer.load_state_dict(state["optimizer"])
        ema.load_state_dict(state["ema"])
        sampler.set_state(state["sampler"])
        torch.set_rng_state(state["rng"])
        iteration, wall_s, cpu_s = int(raw["iteration"]), float(raw["wall_s"]), float(raw.get("cpu_s", 0.0))
        frozen = bool(state.get("encoder_frozen", False))
        budget.max_wall_s = None if caps[0] is None else caps[0] + wall_s   # the caps count from the resume
        budget.max_cpu_s = None if caps[1] is None else caps[1] + cpu_s
    budget.iteration, budget.wall_s, budget.cpu_s = iteration, wall_s, cpu_s
    if frozen:   # a resumed run whose encoder was frozen stays in its second stage, whatever its new budget
        budget.split = min(budget.split, budget.spent())
    for group in optimizer.param_groups:   # LambdaLR scales the configured rate, from the resumed point on
        group["lr"] = config.lr
        group.pop("initial_lr", None)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, budget.factor)
    record = provenance(env_id=demos.spec.env_id, env_kwargs=env_kwargs(demos.spec), seeds=[seed])
    demo_info = {"source": demos.source, "episodes": len(demos.episodes), "frames": demos.frames, "seeds": demos.seeds}

    def save(name: str) -> str:
        path = os.path.join(out_dir, name)
        save_checkpoint(path, {
            "spec": demos.spec.to_dict(), "config": config.to_dict(), "model": _acting_weights(policy, ema),
            "iteration": iteration, "wall_s": wall_s, "cpu_s": cpu_s, "seed": seed, "demos": demo_info,
            "checkpoint_every": checkpoint_every,
            "provenance": record,
            "train_state": {"weights": policy.state_dict(), "ema": ema.state_dict(), "optimizer": optimizer.state_dict(),
                            "sampler": sampler.get_state(), "rng": torch.get_rng_state(),
                            "encoder_frozen": frozen or stage is False}})
        return path

    writer = SummaryWriter(out_dir)
    log = _CsvLog(os.path.join(out_dir, "progress.csv"), ["iteration", "wall_s", "cpu_s", "loss", "lr", "it_per_s"])
    evaluations = None
    bar = ProgressBar(total=config.iterations, initial=iteration, unit="it", desc=f"{config.policy} {demos.spec.env_id}",
                      disable=not progress, deadline_s=min((c for c in caps if c is not None), default=None))
    bar_start = time.perf_counter()   # a CPU cap counts as wall time at one full core until the share is measured
    # the newest checkpoint with a training state: the one that stays resumable (a resumed run's own
    # checkpoint in this folder counts, so a resumed run keeps one training state too)
    periodic = resume if resume is not None and _same_folder(resume, out_dir) else None
    losses: list[float] = []
    last_loss, interrupted = None, False
    policy.train()
    stage = None   # encoder_pretrain runs: True while pretraining, False once frozen (spent() only grows)
    try:
        loop_started()   # Ctrl-C from here on stops at the next iteration, its checkpoint saved
        tick, cpu_tick, logged_iteration, logged_wall = time.perf_counter(), time.process_time(), iteration, wall_s
        cached = False
        while budget.spent() < 1.0:
            if config.encoder_pretrain > 0 and budget.pretraining() is not stage:
                stage = budget.pretraining()
                policy.set_stage(stage)
                if not stage:
                    if progress:
                        bar.write(f"iteration {iteration}: image encoder frozen; the denoiser trains on its features")
                    if config.feature_copies > 0:
                        policy.cache_features(windows.image, config.feature_copies)
                        cached = True
            rows = torch.randint(len(windows), (config.batch_size,), generator=sampler)
            loss = policy.loss(windows.batch(rows, images=not cached))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            ema.step(policy.parameters())
            iteration += 1
            losses.append(loss.item())
            now, cpu_now = time.perf_counter(), time.process_time()
            wall_s, tick, cpu_s, cpu_tick = wall_s + now - tick, now, cpu_s + cpu_now - cpu_tick, cpu_now
            budget.iteration, budget.wall_s, budget.cpu_s = iteration, wall_s, cpu_s
            lr_scheduler.step()
            bar.update(1)
            if iteration % log_every == 0 or iteration == config.iterations:
                last_loss = sum(losses) / len(losses)
                rate = (iteration - logged_iteration) / max(wall_s - logged_wall, 1e-9)
                row = {"iteration": iteration, "wall_s": round(wall_s, 2), "cpu_s": round(cpu_s, 2), "loss": last_loss,
                       "lr": optimizer.param_groups[0]["lr"], "it_per_s": round(rate, 2)}
                log.write(row)
                for key in ("loss", "lr", "it_per_s"):
                    writer.add_scalar(f"train/{key}", row[key], iteration)
                if caps[1] is not None and cpu_s > 0:   # the CPU cap, as wall seconds at this run's CPU share
                    left = (budget.max_cpu_s - cpu_s) * (wall_s / cpu_s)
                    bar.deadline_s = min(d for d in (caps[0], time.perf_counter() - bar_start + left) if d is not None)
                bar.set_postfix(loss=f"{last_loss:.4f}")
                losses, logged_iteration, logged_wall = [], iteration, wall_s
            if iteration % checkpoint_every == 0:
                path = save(f"model_{iteration}.pt")
                periodic = _keep_resumable(path, periodic)
                wall_s += time.perf_counter() - tick
                cpu_s += time.process_time() - cpu_tick
                metrics = on_checkpoint(path, iteration, wall_s) if on_checkpoint is not None else None
                if metrics:
                    if evaluations is None:
                        evaluations = _CsvLog(os.path.join(out_dir, "evaluations.csv"),
                                              ["iteration", "wall_s", "cpu_s", *metrics])
                    evaluations.write({"iteration": iteration, "wall_s": round(wall_s, 2), "cpu_s": round(cpu_s, 2),
                                       **metrics})
                    for key, value in metrics.items():
                        writer.add_scalar(f"eval/{key}", value, iteration)
                tick, cpu_tick, logged_wall = time.perf_counter(), time.process_time(), wall_s
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    if losses:   # iterations after the last logged window (a run stopped before its first): their mean
        last_loss = sum(losses) / len(losses)
    path = save(f"model_{iteration}.pt" if interrupted else "model_final.pt")
    _keep_resumable(path, periodic)
    writer.close()
    return TrainResult(path, iteration, wall_s, last_loss, interrupted)


def _same_folder(path: str, folder: str) -> bool:
    """``path`` lies directly in ``folder`` (a checkpoint of the run written there)."""
    return os.path.realpath(os.path.dirname(os.path.abspath(path))) == os.path.realpath(folder)


def _keep_resumable(newest: str, previous: Optional[str]) -> str:
    """``newest`` was just saved with its training state: ``previous`` (the periodic checkpoint
    before it, if any and another file) keeps its acting weights only (``export_policy``), so a
    run holds one resumable checkpoint. Returns ``newest``."""
    if previous is not None and previous != newest and os.path.exists(previous):
        export_policy(previous, previous)
    return newest


class _CsvLog:
    """A CSV file appended to row by row (a resumed run continues it), with fixed ``columns``."""

    def __init__(self, path: str, columns: list[str]):
        self.path, self.columns = path, columns
        if not os.path.exists(path):
            with open(path, "w", newline="") as handle:
                csv.writer(handle).writerow(columns)

    def write(self, row: dict) -> None:
        with open(self.path, "a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=self.columns, extrasaction="ignore").writerow(row)
