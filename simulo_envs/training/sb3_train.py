"""Stable-Baselines3's PPO on a simulo_envs task (``scripts/train_sb3.py``): the comparison run for
``scripts/train.py``, with the same plan, progress bar, ``progress.csv``, stop signals, log-folder
rules and result, and a ``model.zip`` that ``scripts/evaluate.py`` evaluates and films. SAC and
TD3 train through the same ``train_sb3`` with their own plan and callback
(``simulo_envs/training/sb3_off_policy.py``).

Hyperparameters: the task's rsl-rl training config mapped onto SB3's names (``sb3_ppo_kwargs``).
SB3 bootstraps truncated episodes from ``terminal_observation`` and treats terminations as the
end of the return; a task that terminates on success then pays success once, so by default the
training env ignores terminations (``terminations=True`` keeps them).

Counting: SB3 collects a rollout of ``n_steps`` per env, then updates; a rollout cut short (a
stop signal, the wall-clock cap) is dropped by SB3 without an update, so the env steps reported
(summary, ``progress.csv``, the saved ``num_timesteps``) are those of whole, trained rollouts.

``model.zip`` is SB3's own file with one attribute added, ``simulo_infos``: the algorithm
(``algo``: ``"ppo"``, ``"sac"`` or ``"td3"``; absent in files written before SAC and TD3, all PPO),
``terminations`` (whether the training env kept the task's terminations; absent: it did not), the env id, the task's module, the training config, the seed and the log's state (``env_steps``,
``iterations``, ``episodes``, ``wall_s``, ``recent``; SAC and TD3 add ``gradient_steps``), which
evaluation and a resumed training read.
"""

from __future__ import annotations

import math
import json
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.callbacks import BaseCallback

from simulo_envs.envs.provenance import provenance
from simulo_envs.training.distributed import check_device
from simulo_envs.training.interrupt import StopOnSignals
from simulo_envs.progress import ProgressBar
from simulo_envs.training.run_files import (OutputError, claim_log_dir, delete_run_files, open_progress_csv,
                                            progress_row)
from simulo_envs.wrappers.sb3 import SB3VecEnv
from simulo_envs.training.task_lookup import registered_kwargs
from simulo_envs.training.rsl_rl_train import TrainPlan, TrainResult
from simulo_envs.training import saved_runs as _saved_runs
from simulo_envs.training.saved_runs import SetupError, cannot_build, sb3_classes
from simulo_envs.wrappers import warn_moved
from simulo_envs.training.start_states import start_states_wrapper
from simulo_envs.vector.vector_env import make_vector_env

__all__ = ["sb3_ppo_kwargs", "train_sb3", "sb3_resume_infos", "sb3_policy", "SB3Run", "SB3Algorithm", "SB3Result",
           "PPO_ALGORITHM", "SB3_CLASSES"]

EPISODE_KEYS = ("success_once", "success_at_end", "return", "length")
MOVED_TO_SAVED_RUNS = ("read_sb3_infos",)
"""Names this module held before ``simulo_envs.training.saved_runs``; read from here they still
work for one release, with a ``DeprecationWarning``."""


def __getattr__(name: str):
    """The names moved to ``saved_runs`` (``MOVED_TO_SAVED_RUNS``), from there, with a warning."""
    if name in MOVED_TO_SAVED_RUNS:
        warn_moved(f"{__name__}.{name}", f"simulo_envs.training.saved_runs.{name}")
        return getattr(_saved_runs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

SB3_CLASSES = sb3_classes()
"""The algorithms ``scripts/train_sb3.py`` trains, by the name ``model.zip`` records."""


def episode_stats(infos: list) -> list[list[float]]:
    """``[success once, success at end, return, length]`` (``EPISODE_KEYS``) of each episode that
    ended in this step, from SB3's per-env ``infos``."""
    return [[float(entry.get("is_success", False)), float(entry.get("success_at_end", False)),
             float(entry["episode"]["r"]), float(entry["episode"]["l"])] for entry in infos if "episode" in entry]


def sb3_ppo_kwargs(config: dict, num_envs: int) -> dict:
    """SB3 ``PPO`` keyword arguments equivalent to an rsl-rl training config (where SB3 has one).

    rsl_rl's value loss is ``value_loss_coef * MSE``, SB3's ``vf_coef * MSE``: the same number.
    rsl_rl's ``desired_kl`` drives an adaptive learning rate; SB3's ``target_kl`` stops an update's
    epochs early instead (ManiSkill's baseline's choice): passed as is only with the ``fixed`` schedule.
    """
    runner = config["runner"]
    alg, actor = runner["algorithm"], runner["actor"]
    batch = num_envs * runner["num_steps_per_env"]
    activation = {"tanh": torch.nn.Tanh, "elu": torch.nn.ELU, "relu": torch.nn.ReLU}[actor.get("activation", "elu")]
    init_std = actor.get("distribution_cfg", {}).get("init_std", 1.0)
    return {
        "n_steps": runner["num_steps_per_env"],
        "batch_size": batch // alg.get("num_mini_batches", 4),
        "n_epochs": alg.get("num_learning_epochs", 5),
        "gamma": alg.get("gamma", 0.99),
        "gae_lambda": alg.get("lam", 0.95),
        "clip_range": alg.get("clip_param", 0.2),
        "vf_coef": alg.get("value_loss_coef", 1.0),
        "ent_coef": alg.get("entropy_coef", 0.0),
        "learning_rate": alg.get("learning_rate", 1e-3),
        "max_grad_norm": alg.get("max_grad_norm", 1.0),
        "target_kl": alg.get("desired_kl") if alg.get("schedule", "adaptive") == "fixed" else None,
        "policy_kwargs": {"net_arch": {"pi": list(actor["hidden_dims"]), "vf": list(runner["critic"]["hidden_dims"])},
                          "activation_fn": activation, "log_std_init": math.log(init_std), "ortho_init": True},
    }


class SB3Run(BaseCallback):
    """SB3 callback: the progress bar, ``progress.csv`` (one row per rollout, written once its
    update is done), the run's counts, and stopping at a stop signal or before a rollout that would
    end past ``max_wall_s``.

    Args:
        log_dir: where ``progress.csv`` goes. bar: a ``ProgressBar`` or None.
        stop: the ``StopOnSignals`` of the training. max_wall_s: wall-clock cap [s] or None.
        infos: a resumed run's ``simulo_infos`` (counts and clock continue) or None.
    """

    def __init__(self, log_dir: str, bar: Optional[ProgressBar], stop: StopOnSignals,
                 max_wall_s: Optional[float], infos: Optional[dict] = None):
        super().__init__()
        infos = infos or {}
        self.log_dir, self.bar, self.stop, self.max_wall_s = log_dir, bar, stop, max_wall_s
        self.env_steps, self.iterations = int(infos.get("env_steps", 0)), int(infos.get("iterations", 0))
        self.episodes, self.wall_offset = int(infos.get("episodes", 0)), float(infos.get("wall_s", 0.0))
        self.recent = {key: deque(infos.get("recent", {}).get(key, []), maxlen=100) for key in EPISODE_KEYS}
        self.resumed = bool(infos)
        self.late = False
        self._episode: list[list[float]] = []   # finished in the rollout under way: success once, at end, return, length
        self._pending: Optional[dict] = None
        self._csv = None
        self._start = self._rollout_start = self._rollout_end = time.perf_counter()

    def state(self) -> dict:
        """The counts a checkpoint keeps (``ProgressLogger.state``'s keys)."""
        return {"env_steps": self.env_steps, "iterations": self.iterations, "episodes": self.episodes,
                "wall_s": self.wall_offset + (time.perf_counter() - self._start),
                "recent": {key: list(values) for key, values in self.recent.items()}}

    def _on_training_start(self) -> None:
        self._start = time.perf_counter()
        self._csv = open_progress_csv(os.path.join(self.log_dir, "progress.csv"),
                                      self.iterations if self.resumed else None)

    def _on_rollout_start(self) -> None:
        now = time.perf_counter()
        if self._pending is not None:   # the previous rollout's update is done: its row is complete
            last = self._flush(now)
            session = now - self._start
            self.late = self.max_wall_s is not None and session + last > self.max_wall_s
        self._rollout_start = now

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        self._episode.extend(episode_stats(self.locals["infos"]))
        return self.stop.requested is None and not self.late

    def _on_rollout_end(self) -> None:
        """A whole rollout: it is trained next (SB3 updates right after it)."""
        self._rollout_end = time.perf_counter()
        self.env_steps += self.model.n_steps * self.training_env.num_envs
        self.iterations += 1
        self.episodes += len(self._episode)
        for stats in self._episode:
            for key, value in zip(EPISODE_KEYS, stats):
                self.recent[key].append(value)
        self._episode.clear()
        means = self._means()
        self._pending = {"iteration": self.iterations - 1, "env_steps": self.env_steps, "episodes": self.episodes,
                         **means, "collect_s": self._rollout_end - self._rollout_start}
        if self.bar is not None:
            self._show_means(means)

    def _means(self) -> dict:
        """The means over the last 100 finished episodes, per ``EPISODE_KEYS`` (None while none)."""
        return {key: (sum(v) / len(v) if v else None) for key, v in self.recent.items()}

    def _show_means(self, means: dict) -> None:
        if means["success_once"] is None:
            self.bar.set_postfix_str("no finished episode yet", refresh=False)
        else:
            self.bar.set_postfix(success=f"{means['success_once']:.2f}", ret=f"{means['return']:.2f}", refresh=False)

    def _on_training_end(self) -> None:
        if self._pending is not None:
            self._flush(time.perf_counter())
        if self._csv is not None:
            self._csv[0].close()
            self._csv = None
        if self.bar is not None:
            self.bar.close()

    def _flush(self, now: float) -> float:
        """Write the pending row (its update ended at ``now``); returns the iteration's seconds."""
        row, self._pending = self._pending, None
        row["learn_s"] = now - self._rollout_end
        row["wall_s"] = self.wall_offset + (now - self._start)
        handle, table = self._csv
        table.writerow(progress_row(row))
        handle.flush()
        return row["collect_s"] + row["learn_s"]


def sb3_policy(path: str, device: str = "cpu"):
    """The deterministic policy of an SB3 ``model.zip`` (PPO, SAC or TD3, as ``read_sb3_infos``
    finds it): the evaluation env's observations (a TensorDict with ``"policy"``) -> float32
    actions on the observations' device. PPO: the Gaussian's mean; SAC: the squashed mean; TD3:
    the actor's action, without exploration noise; a pixel SAC's actor reads the camera groups and
    ``"proprio"`` (``sb3_pixels.pixel_policy``)."""
    infos = _saved_runs.read_sb3_infos(path)
    model = SB3_CLASSES[infos["algo"]].load(path, device=device)
    if infos["train_config"].get("pixels"):   # the image actor alone (sb3_pixels.py)
        from simulo_envs.training.sb3_pixels import pixel_policy

        return pixel_policy(model)

    def act(obs) -> torch.Tensor:
        flat = obs["policy"]
        actions, _ = model.predict(flat.cpu().numpy(), deterministic=True)
        return torch.as_tensor(np.asarray(actions, dtype=np.float32), device=flat.device)

    return act


@dataclass(frozen=True)
class SB3Algorithm:
    """How ``train_sb3`` trains one SB3 algorithm."""

    name: str          # a key of SB3_CLASSES: run.json's and model.zip's "algo"
    cls: type          # the SB3 class (PPO, SAC, TD3)
    kwargs: Callable   # (training config, num_envs, one env's action space) -> the class's keyword arguments
    callback: type     # SB3Run or a subclass: counts, progress.csv, stopping


PPO_ALGORITHM = SB3Algorithm("ppo", PPO, lambda config, num_envs, space: sb3_ppo_kwargs(config, num_envs), SB3Run)


@dataclass
class SB3Result(TrainResult):
    """``TrainResult`` with the algorithm and, for SAC and TD3, the gradient steps done (all sessions)."""

    algo: str = "ppo"
    gradient_steps: Optional[int] = None


def sb3_resume_infos(log_dir: str, plan: TrainPlan, algo: str) -> dict:
    """The ``simulo_infos`` of the ``model.zip`` in ``log_dir`` that a resumed training of ``plan``
    with ``algo`` (a key of ``SB3_CLASSES``) continues, checked against them; nothing is built.

    Raises:
        OutputError: no ``model.zip`` in ``log_dir``. SetupError: it cannot be read, or trained
            another algorithm, task or number of envs, or ``plan``'s budget is already spent.
    """
    path = os.path.join(log_dir, "model.zip")
    if not os.path.isfile(path):
        raise OutputError(f"--resume: {log_dir!r} holds no model.zip to continue from")
    try:
        infos = _saved_runs.read_sb3_infos(path)
    except ValueError as error:
        raise SetupError(f"--resume: {error}") from None
    if infos["algo"] != algo:
        raise SetupError(f"--resume: {path!r} trained {infos['algo'].upper()}, not {algo.upper()}; "
                         f"resume with --algo {infos['algo']}")
    if infos["env_id"] != plan.env_id or infos["train_config"]["num_envs"] != plan.num_envs:
        raise SetupError(f"--resume: {path!r} trained {infos['env_id']} with {infos['train_config']['num_envs']} "
                         f"envs; resume with the same --env-id and --num-envs")
    plan.check_budget_left(path, infos)
    return infos


def train_sb3(plan: TrainPlan, seed: int = 0, log_dir: str = "runs/sb3", device: str = "cpu", progress: bool = True,
              max_wall_s: Optional[float] = None, terminations: bool = False, resume: bool = False,
              overwrite: bool = False, algorithm: SB3Algorithm = PPO_ALGORITHM) -> SB3Result:
    """Train SB3's PPO (or ``algorithm``: SAC and TD3 with an ``OffPolicyPlan``,
    ``simulo_envs/training/sb3_off_policy.py``) for ``plan`` (one process) into ``log_dir``:
    ``progress.csv``, ``run.json`` and ``model.zip``; the rules of
    ``simulo_envs.training.rsl_rl_train.train`` for the log folder, ``resume``, ``max_wall_s`` and stop
    signals (the checkpoint is always ``model.zip``).

    Raises:
        OutputError: the log folder cannot be written or holds an earlier run (without ``resume``
            or ``overwrite``), or ``resume`` without a ``model.zip``. SetupError: the device, the
            envs or the resumed model do not fit (another task, number of envs or algorithm). All
            before anything is written.
    """
    try:
        device = check_device(device)
    except ValueError as error:
        raise SetupError(str(error)) from None
    earlier = claim_log_dir(log_dir, resume=resume, overwrite=overwrite)
    path = os.path.join(log_dir, "model.zip")
    infos = sb3_resume_infos(log_dir, plan, algorithm.name) if resume else None
    config = plan.config
    with StopOnSignals() as stop:
        torch.manual_seed(seed)
        env_kwargs = {**registered_kwargs(plan.env_id), **config.get("env_kwargs", {})}
        vector_kwargs = {**config.get("vector_kwargs", {}), "ignore_terminations": not terminations}
        try:
            if config.get("start_states") is not None:   # the recipe starts some episodes from expert states
                vector_kwargs["env_wrapper"] = start_states_wrapper(plan.env_cls, config["start_states"], seed,
                                                                    env_kwargs, vector_kwargs.get("num_workers", 1))
            venv = make_vector_env(plan.env_cls, num_envs=plan.num_envs, **vector_kwargs, **env_kwargs)
        except (ValueError, TypeError, KeyError, RuntimeError) as error:
            raise cannot_build(plan.env_id, env_kwargs, error) from error
        if config.get("pixels"):   # SAC from camera images: Dict observations (sb3_pixels.py)
            from simulo_envs.training.sb3_pixels import SB3PixelVecEnv

            env = SB3PixelVecEnv(venv)
        else:
            env = SB3VecEnv(venv)
        try:
            env.seed(seed)
            kwargs = algorithm.kwargs(config, plan.num_envs, env.action_space)
            policy = kwargs.pop("policy", "MlpPolicy")
            if infos is None:
                model = algorithm.cls(policy, env, seed=seed, device=device, verbose=0, **kwargs)
            else:
                model = algorithm.cls.load(path, env=env, device=device)
            delete_run_files(log_dir, earlier)
            os.makedirs(log_dir, exist_ok=True)
            extra = {} if algorithm is PPO_ALGORITHM else {"hyperparameters": _jsonable(kwargs)}
            with open(os.path.join(log_dir, "run.json"), "w") as handle:
                json.dump({**plan.summary(), "algo": algorithm.name, **extra, "seed": seed, "device": device,
                           "library": "stable-baselines3", **({"resumed_from": "model.zip"} if infos else {})},
                          handle, indent=1)
            bar = ProgressBar(total=plan.env_steps, unit="step", unit_scale=True, desc=plan.env_id,
                              deadline_s=max_wall_s, initial=int(infos["env_steps"]) if infos else 0) if progress else None
            run = algorithm.callback(log_dir, bar, stop, max_wall_s, infos)
            start = time.perf_counter()
            done = run.env_steps
            if stop.requested is None:
                model.learn(total_timesteps=plan.env_steps - done, callback=run, reset_num_timesteps=infos is None)
            wall = time.perf_counter() - start
            interrupted = stop.requested if run.env_steps < plan.env_steps else None
            checkpoint = None
            state = run.state()
            if run.env_steps > done or (infos is not None and infos["train_config"] != config):
                # (a resumed session stopped before its first rollout saves its budget: --resume keeps it)
                model.num_timesteps = run.env_steps   # whole, trained rollouts / stored env steps only
                model.simulo_infos = {"algo": algorithm.name, "env_id": plan.env_id, "terminations": terminations,
                                      "task_module": plan.env_cls.__module__, "train_config": config, "seed": seed,
                                      "world_size": 1, **state,
                                      "provenance": provenance(venv, env_id=plan.env_id, env_kwargs=env_kwargs,
                                                               seeds=[seed])}
                model.save(f"{path}.partial")
                os.replace(f"{path}.partial", path)
                checkpoint = path
            elif infos is not None:
                checkpoint = path
        finally:
            env.close()
    success = run.recent["success_once"]
    return SB3Result(checkpoint, run.env_steps, wall, run.episodes,
                     sum(success) / len(success) if success else None, run.iterations,
                     interrupted, run.env_steps - done, "PPO", plan.env_steps, algo=algorithm.name,
                     gradient_steps=state.get("gradient_steps"))


def _jsonable(kwargs: dict) -> dict:
    """Keyword arguments for ``run.json``: what JSON cannot hold (TD3's noise object) as its text."""
    def plain(value):
        try:
            json.dumps(value)
            return value
        except TypeError:
            return repr(value)
    return {key: plain(value) for key, value in kwargs.items()}
