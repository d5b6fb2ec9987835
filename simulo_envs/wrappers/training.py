"""PPO training and evaluation on rsl-rl-lib 5.5.1, shared by ``scripts/train.py`` and ``scripts/evaluate.py``.

Why rsl-rl-lib: it is GPU-first and torch-native (batched torch tensors in, no numpy round trip,
the layout Isaac Lab trains its manipulation and locomotion tasks with), its PPO is small and
maintained by ETH/NVIDIA, and ``OnPolicyRunner`` saves and loads checkpoints and averages gradients
over ``torch.distributed`` ranks; skrl would work too but brings a larger API for the same PPO.

Tasks: a registered id (``"FrankaReach-v1"``), or a task in the user's own module, named
``"module:Class"`` (an entry-point string, as in ``gym.register``) or ``"module:EnvId-v1"``
(Gymnasium's ``gym.make("module:EnvId")`` form: the module is imported, then the id looked up).

Per-task hyperparameters live next to each task: a ``train_config`` class attribute of the env
(``tasks/franka_reach.py``'s ``TRAIN_CONFIG``) or a sibling module ``<task module>_ppo`` with a
``TRAIN_CONFIG`` (``tasks/franka_lift_ppo.py``); a subclass without one uses its parent task's.
Layout::

    {"num_envs": int, "total_timesteps": int, "env_kwargs": {...}, "vector_kwargs": {...},
     "runner": <rsl_rl OnPolicyRunner train_cfg>}

Budget: PPO trains whole iterations of ``num_envs x num_steps_per_env`` env steps, so
``total_timesteps`` is an upper bound, rounded down to whole iterations (``plan_training`` says by
how much); less than one iteration is an error.

Several processes (``torchrun``, ``simulo_envs.wrappers.distributed``): ``num_envs`` counts the
envs of all ranks together and must divide evenly; rank ``r`` of ``P`` builds ``num_envs / P``
envs with the seeds a single process gives envs ``r * n ... r * n + n - 1``; rank 0 alone writes.

A checkpoint is ``OnPolicyRunner.save``'s dict with ``infos = {"env_id", "task_module",
"train_config", "env_steps", "seed", "world_size"}``; ``load_policy`` rebuilds the policy from it
alone, in one process, whatever the number of ranks that trained it.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import torch

__all__ = ["import_task_modules", "resolve_task", "train_config_for", "plan_training", "TrainPlan", "TrainResult",
           "SetupError", "train", "make_rsl_env", "load_policy", "evaluate", "record_policy_video"]


# -- which task, which config ---------------------------------------------------------------------
def import_task_modules(modules: Sequence[str]) -> None:
    """Import the user's task modules (each registers its tasks on import), searching the current
    directory first, as ``python -m`` does.

    Raises:
        ImportError: a module cannot be imported (the message names it).
    """
    import sys

    if modules and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise ImportError(f"task module {module!r} cannot be imported: {error}") from error


def resolve_task(spec: str) -> tuple[str, type]:
    """``(env_id, env class)`` for a registered id or a ``"module:Class"`` / ``"module:EnvId"`` string.

    ``env_id`` is the registered id when the class is registered, else ``spec`` itself (so a
    checkpoint names a task ``load_policy`` can find again).

    Raises:
        KeyError: an unknown id (the message lists the registered ids); a module without that name.
        ImportError: the module of ``"module:..."`` cannot be imported.
        TypeError: the name is not a simulo_envs task class.
    """
    from simulo_envs.envs.base_env import BaseEnv
    from simulo_envs.envs.registration import REGISTERED

    if spec in REGISTERED:
        return spec, REGISTERED[spec]
    if ":" not in spec:
        raise KeyError(f"unknown env id {spec!r}; registered: {', '.join(sorted(REGISTERED))} "
                       f"(a task of your own: import its module with --task-module, or name it 'module:Class')")
    module_name, name = spec.split(":", 1)
    import_task_modules([module_name])
    module = importlib.import_module(module_name)
    if name in REGISTERED:
        return name, REGISTERED[name]
    cls = getattr(module, name, None)
    if cls is None:
        raise KeyError(f"module {module_name!r} has neither a task class nor a registered id {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, BaseEnv)):
        raise TypeError(f"{spec!r} is not a simulo_envs task (a BaseEnv subclass), got {cls!r}")
    registered = [env_id for env_id, known in REGISTERED.items() if known is cls]
    return (registered[0] if registered else spec), cls


def train_config_for(env_id: str) -> dict:
    """The task's PPO hyperparameters (a deep copy): the class's ``train_config``, else
    ``<module>_ppo.TRAIN_CONFIG``, searched up the task's base classes.

    Raises:
        KeyError / ImportError / TypeError: as ``resolve_task``.
        LookupError: neither the task nor a parent task has a training config.
    """
    _, cls = resolve_task(env_id)
    for klass in cls.__mro__:
        config = klass.__dict__.get("train_config")
        if config is None and klass.__module__ != "builtins":
            sibling = f"{klass.__module__}_ppo"
            try:
                config = getattr(importlib.import_module(sibling), "TRAIN_CONFIG", None)
            except ModuleNotFoundError as error:
                if error.name != sibling:
                    raise
        if config is not None:
            return copy.deepcopy(config)
    raise LookupError(f"{env_id} has no PPO config: give {cls.__name__} a train_config dict, or add "
                      f"{cls.__module__}_ppo.TRAIN_CONFIG (layout: simulo_envs/wrappers/training.py)")


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
    def envs_per_rank(self) -> int:
        return self.num_envs // self.world_size

    @property
    def steps_per_iteration(self) -> int:
        return self.num_envs * self.steps_per_env

    @property
    def env_steps(self) -> int:
        return self.iterations * self.steps_per_iteration

    def summary(self) -> dict:
        """The plan as plain data (``run.json``)."""
        return {"env_id": self.env_id, "num_envs": self.num_envs, "world_size": self.world_size,
                "envs_per_rank": self.envs_per_rank, "steps_per_env": self.steps_per_env,
                "iterations": self.iterations, "env_steps": self.env_steps, "requested_steps": self.requested_steps}

    def describe(self) -> str:
        """One line: what will be trained, and how the budget was rounded."""
        ranks = f" on {self.world_size} ranks x {self.envs_per_rank} envs" if self.world_size > 1 else ""
        plural = "s" if self.iterations != 1 else ""
        text = (f"{self.env_id}: {self.env_steps:,} env steps = {self.iterations} PPO iteration{plural} x "
                f"{self.num_envs} envs x {self.steps_per_env} steps{ranks}")
        if self.env_steps != self.requested_steps:
            text += f" (budget {self.requested_steps:,} rounded down to whole iterations)"
        return text


def plan_training(env_id: str, num_envs: Optional[int] = None, total_timesteps: Optional[int] = None,
                  world_size: int = 1, env_kwargs: Optional[dict] = None,
                  vector_kwargs: Optional[dict] = None) -> TrainPlan:
    """Check a training request and size it; nothing is built.

    Raises:
        KeyError / ImportError / TypeError / LookupError: as ``train_config_for``.
        ValueError: ``num_envs`` < 1 or not divisible by ``world_size``; ``total_timesteps`` < 1 or
            less than one PPO iteration (``num_envs x num_steps_per_env``).
    """
    config = train_config_for(env_id)
    env_id, env_cls = resolve_task(env_id)
    num_envs = config["num_envs"] if num_envs is None else num_envs
    total = config["total_timesteps"] if total_timesteps is None else total_timesteps
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    if isinstance(total, bool) or not isinstance(total, (int, np.integer)) or total < 1:
        raise ValueError(f"total_timesteps must be an int >= 1, got {total!r}")
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


def make_rsl_env(env: Union[str, type], num_envs: int, config: dict, seed: Union[None, int, Sequence[int]],
                 evaluation: bool = False, full_episodes: bool = False,
                 num_workers: Union[None, int, str] = None):
    """An ``RslRlVecEnv`` over ``env`` (an id, a ``"module:Class"`` string or a class) built from ``config``.

    A registered id gets its registration's keywords (``max_episode_steps``), as ``gym.make`` would;
    ``config["env_kwargs"]`` override them.

    ``seed``: as ``BaseEnv.reset`` (an int ``s`` gives env ``i`` the seed ``s + i``; a list gives
    one seed per env). ``evaluation=True`` keeps the env's terminations (``ignore_terminations``
    off), so an episode ends at its first success: success then means "reached within
    ``max_episode_steps``"; with ``full_episodes=True`` as well, an evaluation env ignores
    terminations instead, so every episode runs to the time limit. ``num_workers``: the vector
    env's worker processes; ``None`` means the config's for training and 1 (this process) for
    evaluation (how many processes trained a policy does not change it).
    """
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
    from simulo_envs.wrappers.vector import make_vector_env

    env_kwargs = dict(config.get("env_kwargs", {}))
    if isinstance(env, str):
        env_id, cls = resolve_task(env)
        env_kwargs = {**_registered_kwargs(env_id), **env_kwargs}
    else:
        cls = env
    vector_kwargs = dict(config.get("vector_kwargs", {}))
    if evaluation:
        vector_kwargs["ignore_terminations"] = bool(full_episodes)
        vector_kwargs["num_workers"] = 1
    if num_workers is not None:
        vector_kwargs["num_workers"] = num_workers
    venv = make_vector_env(cls, num_envs=num_envs, record_metrics=True, **env_kwargs, **vector_kwargs)
    env = RslRlVecEnv(venv)
    env.reset(seed=seed)   # after the adapter's own unseeded reset, so episode 0 of env i uses seed s + i
    return env


def _registered_kwargs(env_id: str) -> dict:
    """What Gymnasium's registry holds for ``env_id`` as env keywords: the spec's ``kwargs`` and its
    ``max_episode_steps`` (the per-env limit ``gym.make`` gives); ``{}`` if unregistered."""
    import gymnasium as gym

    spec = gym.registry.get(env_id)
    if spec is None:
        return {}
    kwargs = {k: v for k, v in spec.kwargs.items() if v is not None}
    if spec.max_episode_steps is not None and "max_episode_steps" not in kwargs:
        kwargs["max_episode_steps"] = spec.max_episode_steps
    if kwargs.get("max_episode_steps") == -1:   # Gymnasium's "no limit": the class default applies
        del kwargs["max_episode_steps"]
    return kwargs


def _policy_seed(seed: int, rank: int) -> int:
    """Seed of rank ``rank``'s torch RNG (action noise, minibatch order): NumPy's ``SeedSequence``
    of ``(seed, rank)``, so ranks draw independent streams."""
    return int(np.random.SeedSequence([seed, rank]).generate_state(1, dtype=np.uint64)[0] % (2**63))


# -- training -------------------------------------------------------------------------------------
class SetupError(ValueError):
    """``train`` could not build the envs from the request (a bad env keyword, a backend this machine
    lacks, ...); the message says which and why. Raised before anything is trained."""


@dataclass
class TrainResult:
    """What ``train`` did. ``checkpoint`` is ``None`` on ranks > 0 (they write nothing)."""

    checkpoint: Optional[str]
    env_steps: int
    wall_s: float                   # the training loop alone (rollouts + PPO updates), not env construction
    episodes: int                   # finished training episodes, all ranks
    success_once: Optional[float]   # over the last 100 finished training episodes; None if none finished

    @property
    def steps_per_second(self) -> float:
        """Training throughput: env steps (all ranks) per second of rollouts and PPO updates."""
        return self.env_steps / self.wall_s


def train(env_id: str, num_envs: Optional[int] = None, total_timesteps: Optional[int] = None, seed: int = 0,
          log_dir: str = "runs", device: str = "cpu", checkpoint_every: Optional[int] = None, progress: bool = True,
          on_iteration: Optional[Callable[[dict], None]] = None, env_kwargs: Optional[dict] = None,
          vector_kwargs: Optional[dict] = None, plan: Optional[TrainPlan] = None,
          max_wall_s: Optional[float] = None) -> TrainResult:
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
        max_wall_s: a wall-clock cap [s] on the training loop: training stops before an iteration
            that would end past it (judged by the last iteration's duration), saves
            ``model_final.pt`` and returns; ``TrainResult.env_steps`` says what was trained.

    Raises:
        as ``plan_training``; ``ValueError`` for inconsistent ``torchrun`` variables, a plan for
        another number of ranks or a ``max_wall_s`` that is not > 0; ``SetupError`` when the envs
        cannot be built.
    """
    from simulo_envs.wrappers.distributed import close_process_group, rank_device, rank_info, rank_seeds
    from simulo_envs.wrappers.rsl_rl_runner import SimuloRunner

    from simulo_envs.wrappers.rsl_rl_runner import WallClockLimit

    if max_wall_s is not None and (isinstance(max_wall_s, bool) or not isinstance(max_wall_s, (int, float))
                                   or not max_wall_s > 0):
        raise ValueError(f"max_wall_s must be a number of seconds > 0, got {max_wall_s!r}")
    rank = rank_info()
    if plan is None:
        plan = plan_training(env_id, num_envs, total_timesteps, rank.world_size, env_kwargs, vector_kwargs)
    elif plan.world_size != rank.world_size:
        raise ValueError(f"the plan is for {plan.world_size} ranks, this launch has {rank.world_size}")
    config, device = plan.config, rank_device(device, rank)
    if checkpoint_every is not None:
        config["runner"]["save_interval"] = checkpoint_every
    infos = {"env_id": plan.env_id, "task_module": plan.env_cls.__module__, "train_config": config, "seed": seed,
             "world_size": rank.world_size}
    torch.manual_seed(seed)   # network initialisation; rank 0's weights are broadcast before training
    try:
        env = make_rsl_env(plan.env_id, plan.envs_per_rank, config, rank_seeds(seed, rank, plan.envs_per_rank))
    except (ValueError, TypeError, KeyError, RuntimeError) as error:
        keywords = {**config.get("env_kwargs", {}), **config.get("vector_kwargs", {})}
        raise SetupError(f"cannot build {plan.env_id} with {keywords}: "
                         f"{error.args[0] if error.args else error!r}") from error
    if rank.is_main:
        os.makedirs(log_dir, exist_ok=True)
        with open(os.path.join(log_dir, "run.json"), "w") as handle:
            json.dump({**plan.summary(), "seed": seed, "device": device}, handle, indent=1)
    try:
        runner = SimuloRunner(env, copy.deepcopy(config["runner"]), log_dir=log_dir, device=device,
                              rank_info=rank, infos=infos, desc=plan.env_id, on_iteration=on_iteration,
                              progress_total=plan.env_steps if progress else None, max_wall_s=max_wall_s)
        torch.manual_seed(_policy_seed(seed, rank.rank))
        start = time.perf_counter()
        try:
            runner.learn(plan.iterations)
        except WallClockLimit:
            runner.logger.stop_logging_writer()   # what learn() does after its last iteration
        wall = time.perf_counter() - start
        checkpoint = None
        if rank.is_main:
            checkpoint = os.path.join(log_dir, "model_final.pt")
            runner.save(checkpoint)
        logger = runner.logger
        success = logger.recent["success_once"]
        return TrainResult(checkpoint, logger.env_steps, wall, logger.episodes,
                           sum(success) / len(success) if success else None)
    finally:
        env.close()
        close_process_group()


# -- evaluation -----------------------------------------------------------------------------------
def _read_checkpoint(checkpoint: str, device: str) -> dict:
    """The checkpoint's ``infos``, with its task importable.

    Raises:
        FileNotFoundError: no such file. ValueError: not a checkpoint of ``train``.
    """
    if not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"no checkpoint file {checkpoint!r}")
    try:
        raw = torch.load(checkpoint, weights_only=False, map_location=device)
    except Exception as error:  # torch raises many kinds for a file that is not a checkpoint
        raise ValueError(f"{checkpoint!r} is not a torch checkpoint: {error}") from None
    infos = raw.get("infos") if isinstance(raw, dict) else None
    if not isinstance(infos, dict) or "env_id" not in infos or "train_config" not in infos:
        raise ValueError(f"{checkpoint!r} was not written by scripts/train.py (no env id and training config)")
    from simulo_envs.envs.registration import REGISTERED

    module = infos.get("task_module")
    if infos["env_id"] not in REGISTERED and ":" not in infos["env_id"] and module:
        import_task_modules([module])   # a user's task registers itself on import
    return infos


def _evaluation_runner(env, infos: dict, checkpoint: str, device: str):
    from simulo_envs.wrappers.rsl_rl_runner import SimuloRunner

    runner = SimuloRunner(env, copy.deepcopy(infos["train_config"]["runner"]), device=device)
    # The policy is the actor alone: a checkpoint stripped of its critic and optimizer state still evaluates.
    runner.load(checkpoint, load_cfg={"actor": True}, map_location=device)
    return runner.get_inference_policy(device)


def load_policy(checkpoint: str, num_envs: int, seed: int, device: str = "cpu", full_episodes: bool = False,
                num_workers: Union[int, str] = 1):
    """``(env, policy, infos)``: an evaluation env (terminations on; off with ``full_episodes``;
    its envs in ``num_workers`` processes) and the deterministic policy, in this process, from a
    checkpoint of any number of ranks and workers.

    Raises:
        FileNotFoundError / ValueError: as ``_read_checkpoint``; KeyError: its task is unknown here.
    """
    infos = _read_checkpoint(checkpoint, device)
    env = make_rsl_env(infos["env_id"], num_envs, infos["train_config"], seed, evaluation=True,
                       full_episodes=full_episodes, num_workers=num_workers)
    return env, _evaluation_runner(env, infos, checkpoint, device), infos


def evaluate(checkpoint: str, episodes: int, seed: int = 10_000, max_envs: int = 100, device: str = "cpu",
             progress: bool = False, full_episodes: bool = False,
             num_workers: Union[int, str] = 1) -> dict[str, Any]:
    """Run ``episodes`` episodes with the deterministic policy, one per env, in batches of at most
    ``max_envs`` envs (batch ``b`` reseeds the envs with ``seed + episodes done so far``, so episode
    ``k`` always uses seed ``seed + k``).

    Returns ``{"env_id", "episodes", "success_rate", "success_at_end", "mean_return", "mean_length",
    "env_steps", "full_episodes"}``. Success = the task's success at some step of the episode (it
    terminates there). ``full_episodes=True`` ignores terminations, so every episode runs to the time
    limit: ``success_rate`` is still success at some step (the same episodes up to it), and
    ``success_at_end`` says whether the success still holds at the last step (a lifted cube still up).
    ``num_workers``: worker processes of the evaluation env (``make_vector_env``).

    Raises:
        ValueError: ``episodes`` or ``max_envs`` < 1; as ``load_policy``.
    """
    from tqdm import tqdm

    for name, value in (("episodes", episodes), ("max_envs", max_envs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    results: list[tuple[bool, bool, float, int]] = []
    env, policy, infos = load_policy(checkpoint, min(max_envs, episodes), seed, device, full_episodes, num_workers)
    bar = tqdm(total=episodes, unit="episode", desc=f"evaluating {infos['env_id']}", disable=not progress)
    try:
        while len(results) < episodes:
            if results:
                env.reset(seed=seed + len(results))
            batch = min(env.num_envs, episodes - len(results))
            results.extend(_run_episodes(env, policy, batch, bar))
    finally:
        bar.close()
        env.close()
    n = len(results)
    columns = list(zip(*results))
    return {"env_id": infos["env_id"], "episodes": n, "success_rate": sum(columns[0]) / n,
            "success_at_end": sum(columns[1]) / n, "mean_return": sum(columns[2]) / n,
            "mean_length": sum(columns[3]) / n, "env_steps": infos.get("env_steps"),
            "full_episodes": bool(full_episodes)}


def _run_episodes(env, policy, count: int, bar) -> list[tuple[bool, bool, float, int]]:
    """Step until envs ``0 .. count-1`` have each finished one episode; their statistics in env order."""
    finished = torch.zeros(env.num_envs, dtype=torch.bool)
    wanted = torch.arange(env.num_envs) < count
    rows: dict[int, tuple[bool, bool, float, int]] = {}
    obs = env.get_observations()
    with torch.inference_mode():
        while not bool(finished[wanted].all()):
            obs, _, _, _ = env.step(policy(obs))
            info = env.last_info
            if "_final_info" in info:
                new = info["_final_info"].cpu() & ~finished & wanted
                episode = info["final_info"]["episode"]
                for i in new.nonzero().flatten().tolist():
                    rows[i] = (bool(episode["success_once"][i]), bool(episode["success_at_end"][i]),
                               float(episode["return"][i]), int(episode["length"][i]))
                finished |= info["_final_info"].cpu()
                bar.update(int(new.sum()))
    return [rows[i] for i in range(count)]


def record_policy_video(checkpoint: str, video_dir: str, num_envs: int = 4, seed: int = 10_000,
                        device: str = "cpu", size: int = 256, full_episodes: bool = False) -> str:
    """Film the deterministic policy of ``checkpoint`` for one episode per env (``num_envs`` envs
    tiled, ``size`` px each) and write ``<video_dir>/<env_id>.mp4``; returns the path.
    ``full_episodes``: ignore terminations, so every episode runs to the time limit (shows whether
    a success holds, e.g. a lifted cube kept up)."""
    from simulo_envs.wrappers.record import RecordEpisode
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
    from simulo_envs.wrappers.vector import SimuloVectorEnv

    infos = _read_checkpoint(checkpoint, device)
    config = infos["train_config"]
    env_id, cls = resolve_task(infos["env_id"])
    base = cls(num_envs=num_envs, render_mode="rgb_array", human_render_camera_configs=dict(width=size, height=size),
               **{**_registered_kwargs(env_id), **config.get("env_kwargs", {})})
    recorder = RecordEpisode(base, video_dir, save_on_reset=False)
    vector_kwargs = {k: v for k, v in config.get("vector_kwargs", {}).items()
                     if k not in ("ignore_terminations", "num_workers")}   # filmed in this process
    venv = SimuloVectorEnv(recorder, ignore_terminations=full_episodes, record_metrics=True, **vector_kwargs)
    venv.reset(seed=seed)
    env = RslRlVecEnv(venv)
    policy = _evaluation_runner(env, infos, checkpoint, device)
    obs = env.get_observations()
    finished = torch.zeros(num_envs, dtype=torch.bool)
    with torch.inference_mode():
        while not bool(finished.all()):
            obs, _, _, _ = env.step(policy(obs))
            info = env.last_info
            if "_final_info" in info:
                finished |= info["_final_info"].cpu()
    path = recorder.flush_video(name=infos["env_id"].replace(":", "."))
    env.close()
    return path
