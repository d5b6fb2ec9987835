"""PPO training on rsl-rl-lib 5.5.1: what ``scripts/train.py`` runs, in one process or as one
rank of a ``torchrun`` launch.

Why rsl-rl-lib: it is GPU-first and torch-native (batched torch tensors in, no numpy round trip,
the layout Isaac Lab trains its manipulation and locomotion tasks with), its PPO is small and
maintained by ETH/NVIDIA, and ``OnPolicyRunner`` saves and loads checkpoints and averages gradients
over ``torch.distributed`` ranks; skrl would work too but brings a larger API for the same PPO.

Tasks: a registered id (``"FrankaReach-v1"``), or a task in the user's own module, named
``"module:Class"`` (an entry-point string, as in ``gym.register``) or ``"module:EnvId-v1"``
(Gymnasium's ``gym.make("module:EnvId")`` form: the module is imported, then the id looked up);
see ``simulo_envs/training/task_lookup.py``.

Per-task hyperparameters live next to each task: a ``train_config`` class attribute of the env
(``tasks/franka_reach.py``'s ``TRAIN_CONFIG``) or a sibling module ``<task module>_ppo`` with a
``TRAIN_CONFIG`` (``tasks/franka_lift_ppo.py``); a subclass without one uses its parent task's.
Layout::

    {"num_envs": int, "total_timesteps": int, "env_kwargs": {...}, "vector_kwargs": {...},
     "runner": <rsl_rl OnPolicyRunner train_cfg>, "train_max_episode_steps": int (optional),
     "start_states": {"fraction": float, "expert_episodes": int} (optional)}

``train_max_episode_steps`` is the time limit of training episodes when it differs from the
task's; evaluation (``simulo_envs.training.evaluation``) always runs the task's own.
``start_states`` starts that fraction of the training episodes from states of the task's scripted
expert (``simulo_envs.training.start_states``); evaluation never does.

Budget: PPO trains whole iterations of ``num_envs x num_steps_per_env`` env steps, so
``total_timesteps`` is an upper bound, rounded down to whole iterations (``plan_training`` says by
how much); less than one iteration is an error.

Several processes (``torchrun``, ``simulo_envs.training.distributed``): ``num_envs`` counts the
envs of all ranks together and must divide evenly; rank ``r`` of ``P`` builds ``num_envs / P``
envs with the seeds a single process gives envs ``r * n ... r * n + n - 1``; rank 0 alone writes.

The log folder holds one run (``simulo_envs.training.run_files``): a folder with an earlier run
(one that saved a checkpoint; the leftovers of one that saved none are replaced)
is refused unless the training continues it (``resume``) or deletes it (``overwrite``).

Stopping: SIGINT (Ctrl-C) or SIGTERM stops the training at a safe point (the next env step in one
process; the end of the iteration on every rank together under ``torchrun``); rank 0 then saves
``model_<iteration>.pt`` of the last whole iteration, which ``evaluate.py`` and ``resume`` accept.

A checkpoint is ``OnPolicyRunner.save``'s dict with ``infos = {"env_id", "task_module",
"train_config", "seed", "world_size", "env_steps", "iterations", "episodes", "wall_s", "recent",
"provenance"}`` (``provenance``: ``simulo_envs.envs.provenance``, what reproduces it);
``simulo_envs.training.evaluation.load_policy`` rebuilds the policy from it alone, in one process,
whatever the number of ranks that trained it.
"""

from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

import numpy as np
import torch
import torch.distributed as dist

from simulo_envs.envs.provenance import provenance
from simulo_envs.training.distributed import check_device, close_process_group, rank_device, rank_info, rank_seeds
from simulo_envs.training.interrupt import StopOnSignals, TrainingInterrupted, nothing_saved
from simulo_envs.training.run_files import OutputError, claim_log_dir, delete_run_files, latest_checkpoint
from simulo_envs.training import saved_runs as _saved_runs
from simulo_envs.training.saved_runs import SetupError as _SetupError
from simulo_envs.training.saved_runs import cannot_build
from simulo_envs.training.start_states import check_start_states
from simulo_envs.training.task_lookup import import_task_modules, resolve_task, train_config_for
from simulo_envs.wrappers import warn_moved

__all__ = ["import_task_modules", "resolve_task", "train_config_for", "plan_training", "TrainPlan", "TrainResult",
           "train", "make_rsl_env", "resume_infos", "describe_result"]

MOVED_TO_SAVED_RUNS = ("SetupError", "SavedRun", "saved_run")
"""Names this module held before ``simulo_envs.training.saved_runs`` (the one reader of a saved
run); read from here they still work for one release, with a ``DeprecationWarning``."""


def __getattr__(name: str):
    """``make_rsl_env``, imported on first use: rsl-rl-lib and tensordict load only when a training
    runs. The scripts import this module at the top, and each worker process of ``--num-workers``
    re-imports its script (the spawn start method), so an eager import cost every worker about 2 s
    of CPU for libraries it never uses. The names moved to ``saved_runs`` (``MOVED_TO_SAVED_RUNS``)
    come from there, with a warning."""
    if name == "make_rsl_env":
        from simulo_envs.training.rsl_rl_env import make_rsl_env

        return make_rsl_env
    if name in MOVED_TO_SAVED_RUNS:
        warn_moved(f"{__name__}.{name}", f"simulo_envs.training.saved_runs.{name}")
        return getattr(_saved_runs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class TrainPlan:
    """What ``train`` will run. ``env_steps = iterations * num_envs * steps_per_env`` (all ranks)."""

    env_id: str
    env_cls: type
    config: dict            # the task's TRAIN_CONFIG with num_envs / total_timesteps / overrides filled in
    num_envs: int           # all ranks together
    world_size: int
    steps_per_env: int      # rollout length per iteration (rsl_rl's num_steps_per_env)
    iterations: int
    requested_steps: int    # the budget asked for (or the task's default)

    @property
    def iteration_kind(self) -> str:
        """What one iteration runs, for messages: ``"distillation"`` for a student's training
        (``simulo_envs.training.distillation``), else ``"PPO"``."""
        algorithm = self.config.get("runner", {}).get("algorithm", {}).get("class_name", "")
        return "distillation" if "Distillation" in algorithm else "PPO"

    @property
    def envs_per_rank(self) -> int:
        """Envs each rank builds (``num_envs / world_size``)."""
        return self.num_envs // self.world_size

    @property
    def steps_per_iteration(self) -> int:
        """Env steps of one iteration, all ranks (``num_envs x steps_per_env``)."""
        return self.num_envs * self.steps_per_env

    @property
    def env_steps(self) -> int:
        """Env steps the plan trains, all ranks (whole iterations)."""
        return self.iterations * self.steps_per_iteration

    def summary(self) -> dict:
        """The plan as plain data (``run.json``)."""
        return {"env_id": self.env_id, "num_envs": self.num_envs, "world_size": self.world_size,
                "envs_per_rank": self.envs_per_rank, "steps_per_env": self.steps_per_env,
                "iterations": self.iterations, "env_steps": self.env_steps, "requested_steps": self.requested_steps}

    ROUNDED_TO: ClassVar[str] = "whole iterations"
    """What the budget is rounded down to, for messages."""

    def rounding(self) -> str:
        """``" (budget N rounded down to whole iterations)"`` when the budget asked for is not a
        whole number of them, else ``""``."""
        if self.env_steps == self.requested_steps:
            return ""
        return f" (budget {self.requested_steps:,} rounded down to {self.ROUNDED_TO})"

    def warning(self) -> Optional[str]:
        """A line to print after the plan when its budget cannot train anything useful, else None
        (a PPO budget always holds at least one whole iteration)."""
        return None

    def describe(self) -> str:
        """One line: what will be trained, and how the budget was rounded."""
        ranks = f" on {self.world_size} ranks x {self.envs_per_rank} envs" if self.world_size > 1 else ""
        plural = "s" if self.iterations != 1 else ""
        return (f"{self.env_id}: {self.env_steps:,} env steps = {self.iterations} {self.iteration_kind} iteration{plural} x "
                f"{self.num_envs} envs x {self.steps_per_env} steps{ranks}{self.rounding()}")

    def check_budget_left(self, path: str, infos: dict) -> None:
        """Refuse to resume the run saved in ``path`` (its ``infos``: ``iterations``, ``env_steps``)
        when it has trained this plan's iterations already.

        Raises:
            SetupError: the message says the budget as rounded and the least ``--total-timesteps``
                that trains one more iteration.
        """
        if infos["iterations"] < self.iterations:
            return
        done = max(int(infos["iterations"]), self.iterations)
        more = (done + 1) * (self.env_steps // max(self.iterations, 1))
        raise _SetupError(f"--resume: {path!r} already trained {infos['env_steps']:,} env steps, at least "
                         f"the budget of {self.env_steps:,}{self.rounding()}; give --total-timesteps {more:,} or more to "
                         f"train further")


def plan_training(env_id: str, num_envs: Optional[int] = None, total_timesteps: Optional[int] = None,
                  world_size: int = 1, env_kwargs: Optional[dict] = None,
                  vector_kwargs: Optional[dict] = None) -> TrainPlan:
    """Check a training request and size it; nothing is built.

    Raises:
        KeyError / ImportError / TypeError / LookupError: as ``train_config_for``.
        ValueError: ``num_envs`` < 1 or not divisible by ``world_size``; ``total_timesteps`` < 1 or
            less than one PPO iteration (``num_envs x num_steps_per_env``); the config's
            ``train_max_episode_steps`` not an int >= 1; a bad ``start_states`` (as
            ``simulo_envs.training.start_states.check_start_states``, which also raises KeyError).
    """
    config = train_config_for(env_id)
    env_id, env_cls = resolve_task(env_id)
    num_envs = config["num_envs"] if num_envs is None else num_envs
    total = config["total_timesteps"] if total_timesteps is None else total_timesteps
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    if isinstance(total, bool) or not isinstance(total, (int, np.integer)) or total < 1:
        raise ValueError(f"total_timesteps must be an int >= 1, got {total!r}")
    short = config.get("train_max_episode_steps")
    if short is not None and (isinstance(short, bool) or not isinstance(short, (int, np.integer)) or short < 1):
        raise ValueError(f"train_max_episode_steps must be an int >= 1 or absent, got {short!r}")
    check_start_states(env_cls, config.get("start_states"),
                       {**config.get("vector_kwargs", {}), **(vector_kwargs or {})}.get("num_workers", 1))
    if num_envs % world_size:
        raise ValueError(f"num_envs {num_envs} does not split evenly over {world_size} ranks; "
                         f"use a multiple of {world_size}")
    steps_per_env = int(config["runner"]["num_steps_per_env"])
    per_iteration = num_envs * steps_per_env
    iterations = int(total) // per_iteration
    if iterations < 1:
        raise ValueError(f"total_timesteps {total:,} is less than one PPO iteration of {env_id} "
                         f"({num_envs} envs x {steps_per_env} steps = {per_iteration:,} env steps): "
                         f"ask for at least {per_iteration:,}, or use fewer envs")
    config["num_envs"], config["total_timesteps"] = int(num_envs), iterations * per_iteration
    config["env_kwargs"] = {**config.get("env_kwargs", {}), **(env_kwargs or {})}
    config["vector_kwargs"] = {**config.get("vector_kwargs", {}), **(vector_kwargs or {})}
    return TrainPlan(env_id, env_cls, config, int(num_envs), world_size, steps_per_env, iterations, int(total))


def _policy_seed(seed: int, rank: int) -> int:
    """Seed of rank ``rank``'s torch RNG (action noise, minibatch order): NumPy's ``SeedSequence``
    of ``(seed, rank)``, so ranks draw independent streams."""
    return int(np.random.SeedSequence([seed, rank]).generate_state(1, dtype=np.uint64)[0] % (2**63))



@dataclass
class TrainResult:
    """What ``train`` did. ``checkpoint`` is ``None`` on ranks > 0 (they write nothing) and when a
    stop signal came before the first iteration of this session ended."""

    checkpoint: Optional[str]
    env_steps: int                  # all sessions of the run, all ranks
    wall_s: float                   # this session's training loop (rollouts + PPO updates), not env construction
    episodes: int                   # finished training episodes, all ranks
    success_once: Optional[float]   # over the last 100 finished training episodes; None if none finished
    iterations: int = 0             # PPO iterations done (all sessions)
    interrupted: Optional[str] = None   # the stop signal's name ("SIGINT", "SIGTERM"), if one stopped it
    session_steps: int = 0          # env steps trained by this session
    iteration_kind: str = "PPO"     # what an iteration ran ("PPO", "distillation"): TrainPlan.iteration_kind
    budget_steps: int = 0           # the plan's whole budget [env steps]; more than env_steps after a wall-clock stop

    @property
    def steps_per_second(self) -> float:
        """Training throughput of this session: env steps (all ranks) per second of rollouts and updates."""
        return self.session_steps / self.wall_s if self.wall_s > 0 else 0.0


def describe_result(result: TrainResult) -> str:
    """One line on what a training did: what it trained, how fast, its training success and its
    checkpoint (and, stopped by the wall-clock cap, how much of the budget is left); or, stopped by a
    signal, where it stopped, what it saved and how to go on."""
    plural = "s" if result.iterations != 1 else ""
    if result.interrupted is not None:
        kind = result.iteration_kind
        where = f"after {result.iterations} {kind} iteration{plural} ({result.env_steps:,} env steps)"
        if result.checkpoint is None:
            return nothing_saved(result.interrupted, f"before the first {kind} iteration ended")
        return f"interrupted by {result.interrupted} {where}: saved {result.checkpoint}; continue with --resume"
    success = ("no training episode finished" if result.success_once is None
               else f"training success (last 100 episodes) {result.success_once:.2f}")
    total = f", {result.env_steps:,} in all" if result.session_steps != result.env_steps else ""
    line = (f"trained {result.session_steps:,} env steps{total} in {result.wall_s:.0f} s "
            f"({result.steps_per_second:,.0f} steps/s); {success}; checkpoint {result.checkpoint}")
    return line + budget_left(result)


def budget_left(result: TrainResult) -> str:
    """``"; the wall-clock limit stopped it at N of the budget's M env steps: continue with --resume"``
    for a training the wall-clock cap ended before its budget (``train(max_wall_s=...)``, the SB3
    trainings' alike), else ``""``."""
    if result.interrupted is not None or result.env_steps >= result.budget_steps:
        return ""
    return (f"; the wall-clock limit stopped it at {result.env_steps:,} of the budget's {result.budget_steps:,} "
            f"env steps: continue with --resume")


def resume_infos(log_dir: str, plan: TrainPlan, device: str = "cpu") -> tuple[str, dict]:
    """``(checkpoint, infos)`` a resumed training of ``plan`` continues from: the latest checkpoint
    in ``log_dir``, checked against the plan.

    Raises:
        OutputError: no checkpoint in ``log_dir``.
        SetupError: it trained another task, another number of envs per iteration, networks on
            other inputs (a student's cameras, camera size, observation groups), or the plan's
            budget is already spent.
    """
    path = latest_checkpoint(log_dir)
    if path is None:
        raise OutputError(f"--resume: {log_dir!r} holds no checkpoint (model_<iteration>.pt) to continue from; "
                          f"--overwrite starts the run again")
    try:
        infos = torch.load(path, weights_only=False, map_location=device).get("infos") or {}
    except Exception as error:  # a file torch cannot read
        raise _SetupError(f"--resume: {path!r} cannot be read: {error}") from None
    config = infos.get("train_config", {})
    shape = (config.get("num_envs"), config.get("runner", {}).get("num_steps_per_env"))
    if infos.get("env_id") != plan.env_id:
        raise _SetupError(f"--resume: {path!r} trained {infos.get('env_id')}, not {plan.env_id}")
    if "iterations" not in infos:
        raise _SetupError(f"--resume: {path!r} does not record its iterations (written by an older version)")
    if shape != (plan.num_envs, plan.steps_per_env):
        raise _SetupError(f"--resume: {path!r} trained iterations of {shape[0]} envs x {shape[1]} steps; resume "
                         f"with the same --num-envs (asked for {plan.num_envs} x {plan.steps_per_env})")
    student = {"cameras": config.get("cameras"), "obs_groups": config.get("runner", {}).get("obs_groups"),
               "camera size": config.get("env_kwargs", {}).get("sensor_configs")}
    planned = {"cameras": plan.config.get("cameras"), "obs_groups": plan.config["runner"].get("obs_groups"),
               "camera size": plan.config.get("env_kwargs", {}).get("sensor_configs")}
    for what in ("cameras", "camera size", "obs_groups"):   # what the networks' inputs are made of
        if student[what] != planned[what]:
            raise _SetupError(f"--resume: {path!r} trained networks on {what} {student[what]}, not {planned[what]}; "
                             f"a resumed run keeps its inputs (leave out --cameras and --camera-size)")
    plan.check_budget_left(path, infos)
    return path, infos


def train(env_id: str, num_envs: Optional[int] = None, total_timesteps: Optional[int] = None, seed: int = 0,
          log_dir: str = "runs", device: str = "cpu", checkpoint_every: Optional[int] = None, progress: bool = True,
          on_iteration: Optional[Callable[[dict], None]] = None, env_kwargs: Optional[dict] = None,
          vector_kwargs: Optional[dict] = None, plan: Optional[TrainPlan] = None,
          max_wall_s: Optional[float] = None, resume: bool = False, overwrite: bool = False) -> TrainResult:
    """Train PPO on ``env_id``, in this process or as one rank of a ``torchrun`` launch.

    Rank 0 writes to ``log_dir``: ``run.json`` (the plan: env id, envs, ranks, iterations, seed),
    TensorBoard events, ``progress.csv`` (``ProgressLogger``),
    ``model_<iteration>.pt`` every ``checkpoint_every`` iterations (default: the config's
    ``save_interval``) and ``model_final.pt``; other ranks write nothing.

    Args:
        num_envs / total_timesteps: override the task's defaults (``plan_training``).
        device: the networks' device; ``"cuda"`` under ``torchrun`` means ``cuda:<LOCAL_RANK>``.
        env_kwargs / vector_kwargs: added to the config's (e.g. ``{"sim_backend": ...}``); they are
            saved in the checkpoint, so evaluation rebuilds the same env.
        on_iteration: called on every rank after each PPO update with the iteration's
            ``progress.csv`` row as a dict (episode means ``None`` until an episode finishes).
        plan: a ``plan_training`` result, if the caller checked the request already (it then
            replaces ``env_id``, ``num_envs``, ``total_timesteps``, ``env_kwargs`` and ``vector_kwargs``).
        max_wall_s: a wall-clock cap [s] on this session's training loop: training stops before an
            iteration that would end past it (judged by the last iteration's duration), saves
            ``model_final.pt`` and returns; ``TrainResult.env_steps`` says what was trained.
        resume: continue the run in ``log_dir`` from its latest checkpoint (``resume_infos``):
            networks, optimizer, iteration, env steps and log; the envs start new episodes.
        overwrite: delete an earlier run's files in ``log_dir`` first (once the envs are built).

    A stop signal (SIGINT, SIGTERM) ends the training at a safe point; rank 0 saves
    ``model_<last iteration>.pt`` and ``TrainResult.interrupted`` names the signal.

    Raises:
        as ``plan_training``; ``ValueError`` for inconsistent ``torchrun`` variables, a plan for
        another number of ranks or a ``max_wall_s`` that is not > 0; ``OutputError`` (rank 0) for a
        log folder that cannot be written or holds an earlier run without ``resume``/``overwrite``;
        ``SetupError`` when the device, the envs or the resumed checkpoint do not fit. All before
        anything is written.
    """
    if max_wall_s is not None and (isinstance(max_wall_s, bool) or not isinstance(max_wall_s, (int, float))
                                   or not max_wall_s > 0):
        raise ValueError(f"max_wall_s must be a number of seconds > 0, got {max_wall_s!r}")
    rank = rank_info()
    if plan is None:
        plan = plan_training(env_id, num_envs, total_timesteps, rank.world_size, env_kwargs, vector_kwargs)
    elif plan.world_size != rank.world_size:
        raise ValueError(f"the plan is for {plan.world_size} ranks, this launch has {rank.world_size}")
    try:
        device = check_device(rank_device(check_device(device), rank))
    except ValueError as error:
        raise _SetupError(str(error)) from None
    earlier, resumed = [], None
    if rank.is_main:
        earlier = claim_log_dir(log_dir, resume=resume, overwrite=overwrite)
        if resume:
            resumed = resume_infos(log_dir, plan, device)
    config = plan.config
    if checkpoint_every is not None:
        config["runner"]["save_interval"] = checkpoint_every
    infos = {"env_id": plan.env_id, "task_module": plan.env_cls.__module__, "train_config": config, "seed": seed,
             "world_size": rank.world_size}
    from simulo_envs.training.rsl_rl_env import make_rsl_env  # at first use (see __getattr__)

    with StopOnSignals() as stop:
        torch.manual_seed(seed)   # network initialisation; rank 0's weights are broadcast before training
        try:
            env = make_rsl_env(plan.env_id, plan.envs_per_rank, config, rank_seeds(seed, rank, plan.envs_per_rank))
        except (ValueError, TypeError, KeyError, RuntimeError) as error:
            keywords = {**config.get("env_kwargs", {}), **config.get("vector_kwargs", {})}
            raise cannot_build(plan.env_id, keywords, error) from error
        # What reproduces the checkpoint: versions, commit, the env's settings, the training seed.
        infos["provenance"] = provenance(env, env_id=plan.env_id, env_kwargs=config.get("env_kwargs", {}), seeds=[seed])
        try:
            return _train_built(env, plan, rank, device, log_dir, infos, stop, earlier, resumed,
                                progress=progress, on_iteration=on_iteration, max_wall_s=max_wall_s)
        finally:
            env.close()
            close_process_group()


def _train_built(env, plan: TrainPlan, rank, device: str, log_dir: str, infos: dict, stop: StopOnSignals,
                 delete: list, resumed: Optional[tuple], *, progress: bool, on_iteration, max_wall_s) -> TrainResult:
    """``train`` once its env is built: the run's files, the runner, the loop, the last checkpoint."""
    from simulo_envs.training.rsl_rl_runner import SimuloRunner, WallClockLimit

    if rank.is_main:
        delete_run_files(log_dir, delete)
        os.makedirs(log_dir, exist_ok=True)
        summary = {**plan.summary(), "seed": infos["seed"], "device": device}
        if resumed:
            summary["resumed_from"] = os.path.basename(resumed[0])
        with open(os.path.join(log_dir, "run.json"), "w") as handle:
            json.dump(summary, handle, indent=1)
    runner = SimuloRunner(env, copy.deepcopy(plan.config["runner"]), log_dir=log_dir, device=device,
                          rank_info=rank, infos=infos, desc=plan.env_id, on_iteration=on_iteration,
                          progress_total=plan.env_steps if progress else None, max_wall_s=max_wall_s)
    runner.logger.stop_signals = stop
    if plan.world_size > 1 or resumed:
        _resume_state(runner, resumed, rank)
    start_steps = runner.logger.env_steps
    torch.manual_seed(_policy_seed(infos["seed"] + runner.logger.iterations_done, rank.rank))
    start = time.perf_counter()
    interrupted = None
    try:
        stop.check()   # a signal while the envs were built: stop before the first rollout
        runner.learn(plan.iterations - runner.logger.iterations_done)
    except WallClockLimit:
        runner.logger.stop_logging_writer()   # what learn() does after its last iteration
    except TrainingInterrupted as error:
        interrupted = error.signal_name
        runner.logger.stop_logging_writer()
    wall = time.perf_counter() - start
    logger = runner.logger
    checkpoint = None
    if rank.is_main and logger.iterations_done > 0 and (interrupted is None or logger.env_steps > start_steps):
        name = "model_final.pt" if interrupted is None else f"model_{logger.iterations_done - 1}.pt"
        runner.current_learning_iteration = logger.iterations_done - 1
        checkpoint = os.path.join(log_dir, name)
        runner.save(checkpoint)
    elif rank.is_main and interrupted is not None and resumed:
        checkpoint = resumed[0]   # nothing new since the checkpoint this session started from: the same
        if resumed[1].get("train_config") != infos["train_config"]:   # state, saved again with this session's
            runner.current_learning_iteration = logger.iterations_done - 1   # budget, so --resume keeps it
            runner.save(checkpoint)
    success = logger.recent["success_once"]
    return TrainResult(checkpoint, logger.env_steps, wall, logger.episodes,
                       sum(success) / len(success) if success else None, logger.iterations_done, interrupted,
                       logger.env_steps - start_steps, plan.iteration_kind, plan.env_steps)


def _resume_state(runner, resumed: Optional[tuple], rank) -> None:
    """Load the resumed checkpoint (rank 0 reads it; under ``torchrun`` every rank gets rank 0's
    copy, so the ranks' optimizers and logs agree) into ``runner``: networks, optimizer, the next
    iteration's index and the log's counts."""
    state = [None]
    if rank.is_main and resumed:   # on the CPU: every rank moves it to its own device when loading
        state = [torch.load(resumed[0], weights_only=False, map_location="cpu")]
    if rank.distributed:
        dist.broadcast_object_list(state, src=0)
    if state[0] is None:
        return
    runner.alg.load(state[0], None, strict=True)
    runner.logger.restore(state[0]["infos"])
    runner.current_learning_iteration = runner.logger.iterations_done
