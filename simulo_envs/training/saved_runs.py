"""What a run in a log folder was trained with, and a resumed training's command line checked against it.

A resumed training (``scripts/train.py --resume``, ``scripts/train_sb3.py --resume``) continues with
what its checkpoint records: the task, the seed, the number of envs, the budget, the checkpoint
interval, the env's settings, a student's teacher and cameras, an SB3 run's algorithm and
``--terminations`` (``saved_run`` reads them into a ``SavedRun``, from either script's checkpoint;
``read_sb3_infos`` reads a ``model.zip``'s record, and ``SetupError`` is the error of a checkpoint
or request that does not fit). An option given
again must agree with the run (``take_saved_run``). Env settings are compared as the env resolves
them, the task's own defaults filled in (``resolved_env_kwargs``): a run that never named a
backend trained on the one ``"auto"`` picks, under its task's own randomization table, so
``--sim-backend physx_cpu --randomization default`` given again on a CPU machine agrees with it, and
a randomization compares by the table it resolves to (``same_env_setting``: ``none`` is ``default``
for a task whose own table is empty). ``scripts/train_il.py --resume`` compares its randomization
the same way. Messages name the options as the scripts spell them.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import torch

from simulo_envs.sim import resolve_backend_name
from simulo_envs.training.run_files import OutputError, latest_checkpoint, run_files_in
from simulo_envs.training.task_lookup import registered_kwargs, resolve_task

__all__ = ["SavedRun", "saved_run", "take_saved_run", "resolved_env_kwargs", "same_env_setting", "ENV_OPTIONS",
           "SetupError", "cannot_build", "read_sb3_infos", "sb3_classes"]


class SetupError(ValueError):
    """A training could not start from the request (a bad env keyword, a backend or device this
    machine lacks, a checkpoint that does not fit); the message says which and why. Raised before
    anything is trained."""


def cannot_build(env_id: str, keywords: Mapping, error: BaseException) -> SetupError:
    """The ``SetupError`` for envs of ``env_id`` that ``keywords`` could not build: the env's own
    reason first (its message as written), then the keywords tried."""
    reason = error.args[0] if error.args and isinstance(error.args[0], str) else repr(error)
    return SetupError(f"cannot build {env_id}: {reason} (keywords: {dict(keywords)})")


def sb3_classes() -> dict:
    """``{"ppo": PPO, "sac": SAC, "td3": TD3}``: the Stable-Baselines3 classes ``scripts/train_sb3.py``
    trains, by the name its ``model.zip`` records (Stable-Baselines3 is imported here, at first use:
    the training scripts' worker processes never load it)."""
    from stable_baselines3 import PPO, SAC, TD3

    return {"ppo": PPO, "sac": SAC, "td3": TD3}




ENV_OPTIONS = {"sim_backend": "--sim-backend", "randomization": "--randomization", "sensor_configs": "--camera-size",
               "robot_uids": "--robot-uids"}
"""The command-line option that sets each env keyword a training records (``scene_cli``, ``--sim-backend``)."""


@dataclass(frozen=True)
class SavedRun:
    """What a run in a log folder was trained with, read from its latest checkpoint: what a resumed
    training takes when the command line does not say it again."""

    checkpoint: str
    env_id: str
    num_envs: int
    total_timesteps: int                     # the budget the run was planned with (env steps, all ranks)
    env_kwargs: dict                         # the env the run trained in (task config and command-line settings)
    seed: int = 0
    teacher: Optional[str] = None            # a distilled student's teacher checkpoint
    cameras: Optional[list] = None           # the cameras a student reads
    checkpoint_every: Optional[int] = None   # train.py runs: iterations between checkpoints
    algo: Optional[str] = None               # train_sb3.py runs: "ppo", "sac" or "td3"
    terminations: Optional[bool] = None      # train_sb3.py runs: the training env kept the task's terminations


def _no_checkpoint(log_dir: str) -> None:
    """Raise the OutputError for a folder whose run stopped before it saved a checkpoint, if it holds one."""
    if run_files_in(log_dir) and not (latest_checkpoint(log_dir) or os.path.isfile(os.path.join(log_dir, "model.zip"))):
        raise OutputError(f"--resume: the run in {log_dir!r} stopped before its first iteration ended and saved no "
                          f"checkpoint: leave out --resume to start it again there")


def _read_rsl_rl(log_dir: str) -> tuple[str, dict]:
    path = latest_checkpoint(log_dir)
    if path is None:
        _no_checkpoint(log_dir)
        other = " (it holds a Stable-Baselines3 run: resume it with scripts/train_sb3.py)" if os.path.isfile(
            os.path.join(log_dir, "model.zip")) else ""
        raise OutputError(f"--resume: {log_dir!r} holds no checkpoint (model_<iteration>.pt) to continue from{other}; "
                          f"name the run's folder with --log-dir, or leave out --resume to start a new run")
    try:
        infos = torch.load(path, weights_only=False, map_location="cpu").get("infos") or {}
    except Exception as error:  # a file torch cannot read
        raise SetupError(f"--resume: {path!r} cannot be read: {error}") from None
    return path, infos


def _read_sb3(log_dir: str) -> tuple[str, dict]:
    path = os.path.join(log_dir, "model.zip")
    if not os.path.isfile(path):
        _no_checkpoint(log_dir)
        other = " (it holds a run of scripts/train.py: resume it there)" if latest_checkpoint(log_dir) else ""
        raise OutputError(f"--resume: {log_dir!r} holds no model.zip to continue from{other}; name the run's folder "
                          f"with --log-dir, or leave out --resume to start a new run")
    try:
        return path, read_sb3_infos(path)
    except ValueError as error:
        raise SetupError(f"--resume: {error}") from None


def saved_run(log_dir: str, library: str = "rsl_rl") -> SavedRun:
    """The settings of the run in ``log_dir``: a ``scripts/train.py`` run (``library="rsl_rl"``,
    its latest ``model_<iteration>.pt`` or ``model_final.pt``) or a ``scripts/train_sb3.py`` run
    (``"sb3"``, its ``model.zip``).

    Raises:
        OutputError: ``log_dir`` holds no such checkpoint (the message says when it holds the
            other script's). SetupError: the checkpoint cannot be read or does not record its
            training config (written by an older version). ValueError: an unknown ``library``.
    """
    if library not in ("rsl_rl", "sb3"):
        raise ValueError(f"library must be 'rsl_rl' or 'sb3', got {library!r}")
    path, infos = (_read_rsl_rl if library == "rsl_rl" else _read_sb3)(log_dir)
    config = infos.get("train_config")
    if not isinstance(config, dict) or "env_id" not in infos or "num_envs" not in config:
        raise SetupError(f"--resume: {path!r} does not record its training config (written by an older version)")
    teacher = config["teacher"].get("checkpoint") if isinstance(config.get("teacher"), dict) else None
    every = config.get("runner", {}).get("save_interval") if library == "rsl_rl" else None
    return SavedRun(path, infos["env_id"], int(config["num_envs"]), int(config["total_timesteps"]),
                    dict(config.get("env_kwargs", {})), int(infos.get("seed", 0)), teacher, config.get("cameras"),
                    None if every is None else int(every), infos.get("algo") if library == "sb3" else None,
                    bool(infos.get("terminations", False)) if library == "sb3" else None)


def _class_defaults(cls: type) -> dict:
    """The keyword defaults of ``cls.__init__`` and of its bases' (a subclass's own win)."""
    defaults: dict = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):   # a builtin's __init__
            continue
        defaults.update({p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty})
    return defaults


def resolved_env_kwargs(env_id: str, env_kwargs: Mapping[str, Any]) -> dict:
    """``env_kwargs`` as the env of ``env_id`` resolves them: the env class's keyword defaults,
    then the registry's keywords (``registered_kwargs``), then ``env_kwargs``; ``sim_backend`` as
    ``simulo_envs.sim.resolve_backend_name`` names it (``"auto"`` -> the backend this machine
    picks, ``"physx_cuda"`` -> ``"physx_cuda:0"``) and ``randomization=None`` as ``"default"``
    (the task's own table, ``BaseEnv``'s docstring).

    Raises:
        KeyError / ImportError / LookupError: ``env_id`` names no task (as ``resolve_task``).
        ValueError: an unknown ``sim_backend``.
    """
    env_id, cls = resolve_task(env_id)
    resolved = {**_class_defaults(cls), **registered_kwargs(env_id), **env_kwargs}
    if "sim_backend" in resolved:
        resolved["sim_backend"] = resolve_backend_name(resolved["sim_backend"])
    if resolved.get("randomization", "default") is None:
        resolved["randomization"] = "default"
    return resolved


def _same_table(a: tuple, b: tuple) -> bool:
    """Two randomization tables hold the same entries (by value: an entry's distribution may hold arrays)."""
    return len(a) == len(b) and all(x is y or repr(x) == repr(y) for x, y in zip(a, b))


def same_env_setting(env_id: str, key: str, recorded: Any, given: Any) -> bool:
    """Whether the env keyword ``key`` set to ``given`` builds the env of ``env_id`` as ``recorded``
    did, both resolved (``resolved_env_kwargs``): a randomization compares by the table it
    resolves to (``randomization_presets.randomization_table``: ``"none"`` equals ``"default"`` for
    a task whose own table is empty, ``None`` equals ``"default"``), ``sim_backend`` by the backend
    picked, anything else by value. A task not importable here compares as recorded.

    Raises:
        ValueError: an unknown backend, or a visual preset for a task without a visual table.
    """
    from simulo_envs.envs.randomization_presets import randomization_table

    try:
        theirs = resolved_env_kwargs(env_id, {} if recorded is None else {key: recorded}).get(key)
        ours = resolved_env_kwargs(env_id, {} if given is None else {key: given}).get(key)
        cls = resolve_task(env_id)[1]
    except (LookupError, ImportError):   # the task is not importable here
        return recorded == given
    if key == "randomization":
        return theirs == ours or _same_table(randomization_table(cls, theirs), randomization_table(cls, ours))
    return theirs == ours


def _spelled(key: str, value) -> str:
    """An env keyword's value as its option is written (``--camera-size W H``)."""
    if key == "sensor_configs" and isinstance(value, dict) and {"width", "height"} <= set(value):
        return f"{value['width']} {value['height']}"
    if value is None:
        return "(the task's own)"
    return " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def take_saved_run(log_dir: str, given: Mapping[str, Any], env_kwargs: dict, library: str = "rsl_rl") -> SavedRun:
    """Check a resumed training's command line against the run in ``log_dir`` (``saved_run``) and
    return the run; ``env_kwargs`` (the env keywords the command line gave) becomes the run's.
    Nothing is written.

    Args:
        given: option (as spelled: ``"--env-id"``, ``"--seed"``, ``"--num-envs"``, ``"--algo"``,
            ``"--teacher"``, ``"--cameras"``, ``"--terminations"``) -> the value given, ``None`` for
            left out.
        env_kwargs: env keywords given (``ENV_OPTIONS``' keys); compared resolved
            (``resolved_env_kwargs``), so the value a run used by default agrees with it.

    Raises:
        as ``saved_run``; ValueError: an option given again that disagrees with the run (the
        message names the option, the run's value and the one given).
    """
    run = saved_run(log_dir, library)
    saved = {"--env-id": run.env_id, "--seed": run.seed, "--num-envs": run.num_envs, "--algo": run.algo,
             "--teacher": run.teacher, "--cameras": run.cameras, "--terminations": run.terminations}
    for option, value in given.items():
        if value is None:
            continue
        if option == "--teacher" and run.teacher is None:
            raise ValueError(f"--resume: the run in {log_dir!r} is a PPO run, not a student: leave out --teacher")
        same = (os.path.realpath(value) == os.path.realpath(run.teacher) if option == "--teacher"
                else list(value) == list(saved[option] or []) if option == "--cameras" else value == saved[option])
        if not same and isinstance(value, bool):
            raise ValueError(f"--resume: the run in {log_dir!r} trained {'with' if saved[option] else 'without'} "
                             f"{option}: a resumed run keeps its settings (leave {option} out)")
        if not same:
            raise ValueError(f"--resume: the run in {log_dir!r} trained with {option} "
                             f"{_spelled(option, saved[option])}, not {_spelled(option, value)}: a resumed run keeps "
                             f"its settings (leave {option} out)")
    if env_kwargs:
        try:
            theirs, ours = resolved_env_kwargs(run.env_id, run.env_kwargs), resolved_env_kwargs(run.env_id, env_kwargs)
        except (LookupError, ImportError):   # the task is not importable here: compare as recorded
            theirs, ours = dict(run.env_kwargs), dict(env_kwargs)
        for key in env_kwargs:
            if not same_env_setting(run.env_id, key, theirs.get(key), ours.get(key)):
                option = ENV_OPTIONS.get(key, key)
                raise ValueError(f"--resume: the run in {log_dir!r} trained with {option} {_spelled(key, theirs.get(key))}, "
                                 f"not {_spelled(key, ours.get(key))}: a resumed run keeps its env (leave {option} out)")
    env_kwargs.clear()
    env_kwargs.update(run.env_kwargs)
    return run


def read_sb3_infos(path: str) -> dict:
    """The ``simulo_infos`` of an SB3 ``model.zip`` written by ``train_sb3``, with ``"algo"`` (a
    key of ``sb3_classes()``) checked against the policy class the file holds (a file without it,
    written before SAC and TD3, must hold PPO's).

    Raises:
        ValueError: a zip SB3 cannot read; one without ``simulo_infos`` (not from ``train_sb3``);
            an algorithm other than PPO, SAC and TD3, or a policy class that is not its own.
    """
    from stable_baselines3.common.save_util import load_from_zip_file   # SB3 loads for its runs only

    classes = sb3_classes()
    try:
        data, _, _ = load_from_zip_file(path, device="cpu", load_data=True)
    except Exception as error:  # SB3 raises many kinds for a file it cannot read
        raise ValueError(f"{path!r} is not a Stable-Baselines3 model: {error}") from None
    infos = (data or {}).get("simulo_infos")
    if not isinstance(infos, dict) or "env_id" not in infos or "train_config" not in infos:
        raise ValueError(f"{path!r} was not written by scripts/train_sb3.py (no env id and training config)")
    algo = infos.get("algo", "ppo")
    if algo not in classes:
        raise ValueError(f"{path!r} holds an algorithm {algo!r} that scripts/train_sb3.py does not train "
                         f"(known: {', '.join(classes)})")
    policy, expected = data.get("policy_class"), classes[algo].policy_aliases["MlpPolicy"]
    if not (isinstance(policy, type) and issubclass(policy, expected)):
        name = getattr(policy, "__name__", repr(policy))
        raise ValueError(f"{path!r} says {algo.upper()} but holds a {name} policy, not {expected.__name__}: "
                         f"not a model.zip of scripts/train_sb3.py")
    return {**infos, "algo": algo}
