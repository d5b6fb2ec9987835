"""Evaluating a trained policy: success over episodes, and a video of it, from a checkpoint of
``scripts/train.py`` (rsl-rl-lib, ``model_*.pt``) or ``scripts/train_sb3.py`` (Stable-Baselines3's
PPO, SAC or TD3, ``model.zip``); shared by ``scripts/evaluate.py`` and the training scripts.

A checkpoint carries ``infos`` (env id, the task's module, the training config, env steps): all
that is needed to rebuild the task's env and the policy, in one process, whatever the number of
ranks or worker processes that trained it. Tensors are loaded onto the device asked for
(``map_location``), so a checkpoint trained on a GPU evaluates on a CPU.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import zipfile
from typing import Any, Callable, Optional, Union

import torch

from simulo_envs.datasets.scene_cli import check_policy_reads_cameras, check_policy_sees_randomization
from simulo_envs.envs.provenance import file_sha256, provenance
from simulo_envs.progress import ProgressBar
from simulo_envs.training.interrupt import note_finished
from simulo_envs.training.task_lookup import import_task_modules, registered_kwargs, resolve_task

__all__ = ["read_checkpoint", "is_sb3_checkpoint", "load_policy", "evaluate", "record_policy_video"]


def is_sb3_checkpoint(path: str) -> bool:
    """True for a Stable-Baselines3 ``model.zip`` (a zip with ``data`` and ``policy.pth``; a torch
    checkpoint is a zip too, laid out otherwise)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
    return {"data", "policy.pth"} <= names


def read_checkpoint(checkpoint: str, device: str = "cpu") -> dict:
    """The checkpoint's ``infos`` (``"library"``: ``"rsl-rl-lib"`` or ``"stable-baselines3"``), with
    its task importable (a task of the user's own module registers itself on import).

    Raises:
        FileNotFoundError: no such file. ValueError: not a checkpoint of the training scripts.
    """
    if not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"{checkpoint!r} is a folder, not a checkpoint file (a LeRobot policy folder "
                                "holds config.json and model.safetensors)" if os.path.isdir(checkpoint) else
                                f"no checkpoint file {checkpoint!r}")
    if is_sb3_checkpoint(checkpoint):
        from simulo_envs.training.saved_runs import read_sb3_infos

        infos = {**read_sb3_infos(checkpoint), "library": "stable-baselines3"}
    else:
        try:
            raw = torch.load(checkpoint, weights_only=False, map_location=device)
        except Exception as error:  # torch raises many kinds for a file that is not a checkpoint
            raise ValueError(f"{checkpoint!r} is not a torch checkpoint: {error}") from None
        infos = raw.get("infos") if isinstance(raw, dict) else None
        if not isinstance(infos, dict) or "env_id" not in infos or "train_config" not in infos:
            raise ValueError(f"{checkpoint!r} was not written by scripts/train.py (no env id and training config)")
        infos = {**infos, "library": "rsl-rl-lib"}
    from simulo_envs.envs.registration import REGISTERED

    module = infos.get("task_module")
    if infos["env_id"] not in REGISTERED and ":" not in infos["env_id"] and module:
        import_task_modules([module])
    return infos


_PROJECT_LIBRARIES = ("rsl_rl", "tensordict", "stable_baselines3")
"""What the checkpoints of scripts/train.py and scripts/train_sb3.py need to run: the project's venv
has them (``make setup``), the LeRobot venv does not."""


def _in_project_venv(function: Callable) -> Callable:
    """``function(checkpoint, ...)``, whose ``ModuleNotFoundError`` for one of ``_PROJECT_LIBRARIES``
    (in the LeRobot venv, say) becomes an ``ImportError`` saying what the checkpoint is and that it
    runs in the project's venv, as ``lerobot_policies.by_policy_folder`` says the opposite."""

    @functools.wraps(function)
    def run(checkpoint: str, *args, **kwargs):
        try:
            return function(checkpoint, *args, **kwargs)
        except ModuleNotFoundError as error:
            if (error.name or "").partition(".")[0] not in _PROJECT_LIBRARIES:
                raise
            kind = ("a Stable-Baselines3 checkpoint of scripts/train_sb3.py" if is_sb3_checkpoint(checkpoint) else
                    "a PPO checkpoint of scripts/train.py")
            raise ImportError(f"{checkpoint} is {kind}: evaluate it in the project's venv (`make setup`, then "
                              f"`.venv/bin/python scripts/evaluate.py --checkpoint {checkpoint}`); here: "
                              f"{error}") from None
    return run


def _policy(env, infos: dict, checkpoint: str, device: str) -> Callable:
    """The deterministic policy of ``checkpoint``: observations (the env's TensorDict) -> actions."""
    if infos["library"] == "stable-baselines3":
        from simulo_envs.training.sb3_train import sb3_policy

        return sb3_policy(checkpoint, device)
    if "student" in infos["train_config"].get("runner", {}):   # a distilled image student
        return _student_policy(env, infos, checkpoint, device)
    from simulo_envs.training.rsl_rl_runner import SimuloRunner

    runner = SimuloRunner(env, copy.deepcopy(infos["train_config"]["runner"]), device=device)
    # The policy is the actor alone: a checkpoint stripped of its critic and optimizer state still evaluates.
    runner.load(checkpoint, load_cfg={"actor": True}, map_location=device)
    return runner.get_inference_policy(device)


def _student_policy(env, infos: dict, checkpoint: str, device: str) -> Callable:
    """The student of a distillation checkpoint (``simulo_envs.training.distillation``), alone:
    built from its config on the env's observations and its saved weights; the teacher is not
    needed (nor present: the env runs ``obs_mode="rgb"``)."""
    from rsl_rl.utils import resolve_class

    runner = infos["train_config"]["runner"]
    cls, kwargs = resolve_class(runner["student"])
    student = cls(env.get_observations(), runner["obs_groups"], "student", env.num_actions, **kwargs).to(device)
    state = torch.load(checkpoint, weights_only=False, map_location=device)
    student.load_state_dict(state["student_state_dict"])
    return student.eval()


def _check_scene_options(infos: dict, env_kwargs: Optional[dict]) -> None:
    """Refuse a visual ``randomization`` or camera sizes (``sensor_configs``) in ``env_kwargs`` for
    a checkpoint whose policy reads no image (every one but a distilled student's and a pixel SAC's)."""
    reads_images = "student" in infos["train_config"].get("runner", {}) or bool(infos["train_config"].get("pixels"))
    check_policy_reads_cameras({"--camera-size": (env_kwargs or {}).get("sensor_configs")}, reads_images,
                               evaluating=True)
    check_policy_sees_randomization((env_kwargs or {}).get("randomization"), evaluating=True, reads_images=reads_images)


def _eval_config(config: dict) -> dict:
    """``config`` as an evaluation env is built from it: a distilled student's and a pixel SAC's
    in ``obs_mode="rgb"`` (what the student or the actor reads, without the state the teacher or
    the critics read)."""
    if config.get("pixels"):
        from simulo_envs.training.sb3_pixels import pixel_env_kwargs

        return {**config, "env_kwargs": {**config.get("env_kwargs", {}),
                                         **pixel_env_kwargs(config["pixels"], evaluation=True)}}
    if "student" not in config.get("runner", {}):
        return config
    from simulo_envs.training.distillation import student_env_kwargs

    return {**config, "env_kwargs": student_env_kwargs(config)}


def load_policy(checkpoint: str, num_envs: int, seed: int, device: str = "cpu", full_episodes: bool = False,
                num_workers: Union[int, str] = 1, env_kwargs: Optional[dict] = None, isolate: bool = False):
    """``(env, policy, infos)``: an evaluation env (terminations on; off with ``full_episodes``;
    its envs in ``num_workers`` processes; with ``isolate`` one PhysX system per env,
    ``sim_config.isolate_envs``) and the deterministic policy, in this process, from a
    checkpoint of any number of ranks and workers. ``env_kwargs`` override the task keywords the
    checkpoint was trained with (``variant="heldout"`` for a suite task's held-out variant).

    Raises:
        FileNotFoundError / ValueError: as ``read_checkpoint``; ValueError also for a visual
            ``randomization`` or camera sizes with a policy that reads no image (``_check_scene_options``).
            KeyError: its task is unknown here.
    """
    infos = read_checkpoint(checkpoint, device)
    _check_scene_options(infos, env_kwargs)
    from simulo_envs.training.rsl_rl_env import make_rsl_env   # rsl-rl-lib (and tensordict) when evaluating only

    config = _eval_config(infos["train_config"])
    trained = config.get("env_kwargs", {}).get("sensor_configs")
    if env_kwargs and env_kwargs.get("sensor_configs") and config is not infos["train_config"] \
            and env_kwargs["sensor_configs"] != trained:
        reader = "actor" if config.get("pixels") else "student"
        raise ValueError(f"the {reader} reads camera images of {trained}; it cannot be evaluated with "
                         f"{env_kwargs['sensor_configs']}")
    if env_kwargs:
        config = {**config, "env_kwargs": {**config.get("env_kwargs", {}), **env_kwargs}}
    if isolate:
        config = {**config, "env_kwargs": isolated_kwargs(config.get("env_kwargs", {}))}
    env = make_rsl_env(infos["env_id"], num_envs, config, seed, evaluation=True,
                       full_episodes=full_episodes, num_workers=num_workers)
    return env, _policy(env, infos, checkpoint, device), infos


def _with_time_limit(env_kwargs: Optional[dict], max_episode_steps: Optional[int]) -> Optional[dict]:
    """``env_kwargs`` with ``max_episode_steps`` (``BaseEnv``'s keyword: the episode's time limit
    [env steps]) when it is given, else as they are.

    Raises:
        ValueError: ``max_episode_steps`` is not an int >= 1.
    """
    if max_episode_steps is None:
        return env_kwargs
    if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1:
        raise ValueError(f"max_episode_steps must be an int >= 1, got {max_episode_steps!r}")
    return {**(env_kwargs or {}), "max_episode_steps": max_episode_steps}


def isolated_kwargs(env_kwargs: dict) -> dict:
    """``env_kwargs`` with ``sim_config.isolate_envs`` on (a ``sim_config`` dict or ``SimConfig``
    kept otherwise as it is)."""
    sim_config = env_kwargs.get("sim_config") or {}
    if dataclasses.is_dataclass(sim_config):
        sim_config = dataclasses.replace(sim_config, isolate_envs=True)
    else:
        sim_config = {**sim_config, "isolate_envs": True}
    return {**env_kwargs, "sim_config": sim_config}


def row_by_row(policy: Callable) -> Callable:
    """``policy`` applied to one env's observation at a time (a batch of 1 each), the rows
    concatenated: each env's action then does not depend on how many envs run together. A
    batched matrix product rounds differently with the batch size (torch 2.13 on a CPU: an MLP's
    outputs for the same row differ by about 1e-7 between batches of 20 and 7), which would let
    the batch change an episode."""

    def act(obs):
        count = obs.batch_size[0] if hasattr(obs, "batch_size") else len(obs)
        return torch.cat([policy(obs[i:i + 1]) for i in range(count)])

    return act


@_in_project_venv
def evaluate(checkpoint: str, episodes: int, seed: int = 10_000, max_envs: int = 100, device: str = "cpu",
             progress: bool = False, full_episodes: bool = False,
             num_workers: Union[int, str] = 1, env_kwargs: Optional[dict] = None,
             isolate: bool = True, max_episode_steps: Optional[int] = None) -> dict[str, Any]:
    """Run ``episodes`` episodes with the deterministic policy, one per env, in batches of at most
    ``max_envs`` envs (batch ``b`` reseeds the envs with ``seed + episodes done so far``, so episode
    ``k`` always uses seed ``seed + k``).

    ``isolate`` (the default): every env in a PhysX system of its own
    (``sim_config.isolate_envs``), the scene rebuilt before each batch (fresh physics: PhysX
    carries contact caches over from a system's earlier episodes) and the policy applied env by
    env (``row_by_row``), so each episode, and so the summary, is the same bit for bit whatever
    ``max_envs`` and ``num_workers``. ``isolate=False``: all envs in one PhysX system and one
    batched policy call (faster); episodes then differ with the batch at float-rounding level,
    which can change a contact-rich episode's outcome.

    Returns ``{"env_id", "episodes", "success_rate", "success_at_end", "mean_return", "mean_length",
    "env_steps", "full_episodes"}``. Success = the task's success at some step of the episode (it
    terminates there). ``full_episodes=True`` ignores terminations, so every episode runs to the time
    limit: ``success_rate`` is still success at some step (the same episodes up to it), and
    ``success_at_end`` says whether the success still holds at the last step (a lifted cube still up).
    ``num_workers``: worker processes of the evaluation env (``make_vector_env``); ``env_kwargs``:
    as ``load_policy``; ``max_episode_steps``: the time limit of each episode [env steps] (None:
    the one the checkpoint's task was trained with; ``BaseEnv``'s keyword). ``"per_episode"``
    lists ``(seed, success_once, success_at_end, return, length)`` of each episode, in seed order;
    ``"provenance"`` is what reproduces the result (``simulo_envs.envs.provenance``: software
    versions, repository commit, the env's settings, the seeds, the checkpoint's SHA-256). A
    ``KeyboardInterrupt`` (or ``StopSignal``) passing through carries the successes of the
    episodes finished before it (``interrupt.note_finished``).

    Raises:
        ValueError: ``episodes``, ``max_envs`` or ``max_episode_steps`` < 1; as ``load_policy``.
        ImportError: rsl-rl-lib or Stable-Baselines3 is not installed here (the LeRobot venv): the
            message says what the checkpoint is and how to run it in the project's venv.
    """
    for name, value in (("episodes", episodes), ("max_envs", max_envs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    env_kwargs = _with_time_limit(env_kwargs, max_episode_steps)
    results: list[tuple[bool, bool, float, int]] = []
    env, policy, infos = load_policy(checkpoint, min(max_envs, episodes), seed, device, full_episodes, num_workers,
                                     env_kwargs, isolate=isolate)
    if isolate:
        policy = row_by_row(policy)
    used = {**_eval_config(infos["train_config"]).get("env_kwargs", {}), **(env_kwargs or {})}
    record = provenance(env, env_id=infos["env_id"], env_kwargs=isolated_kwargs(used) if isolate else used,
                        seeds=range(seed, seed + episodes), checkpoint=os.path.abspath(checkpoint),
                        checkpoint_sha256=file_sha256(checkpoint), max_envs=max_envs, num_workers=num_workers,
                        full_episodes=bool(full_episodes))
    tally: list[bool] = []   # success of each finished episode, in the order they end
    bar = None
    try:
        bar = ProgressBar(total=episodes, unit="episode", desc=f"evaluating {infos['env_id']}",
                          disable=not progress)
        while len(results) < episodes:
            if results:
                env.reset(seed=seed + len(results), options={"reconfigure": True} if isolate else None)
            batch = min(env.num_envs, episodes - len(results))
            results.extend(_run_episodes(env, policy, batch, bar, tally))
    except KeyboardInterrupt as stop:   # Ctrl-C, or a script's StopSignal: what was done so far
        note_finished(stop, tally)
        raise
    finally:
        if bar is not None:
            bar.close()
        env.close()
    n = len(results)
    columns = list(zip(*results))
    return {"env_id": infos["env_id"], "episodes": n, "success_rate": sum(columns[0]) / n,
            "success_at_end": sum(columns[1]) / n, "mean_return": sum(columns[2]) / n,
            "mean_length": sum(columns[3]) / n, "env_steps": infos.get("env_steps"),
            "full_episodes": bool(full_episodes), "isolate_envs": bool(isolate),
            "per_episode": [[seed + k, *row] for k, row in enumerate(results)], "provenance": record}


def _run_episodes(env, policy, count: int, bar, tally: list) -> list[tuple[bool, bool, float, int]]:
    """Step until envs ``0 .. count-1`` have each finished one episode; their statistics in env
    order. ``tally`` gets the success of each episode as it ends."""
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
                    tally.append(rows[i][0])
                finished |= info["_final_info"].cpu()
                bar.update(int(new.sum()))
    return [rows[i] for i in range(count)]


@_in_project_venv
def record_policy_video(checkpoint: str, video_dir: str, num_envs: int = 4, seed: int = 10_000,
                        device: str = "cpu", size: int = 256, full_episodes: bool = False,
                        env_kwargs: Optional[dict] = None, max_episode_steps: Optional[int] = None) -> str:
    """Film the deterministic policy of ``checkpoint`` for one episode per env (``num_envs`` envs
    tiled, ``size`` px each) and write ``<video_dir>/<env_id>.mp4``; returns the path.
    ``full_episodes``: ignore terminations, so every episode runs to the time limit (shows whether
    a success holds, e.g. a lifted cube kept up); else the clip ends when every env has finished
    its episode (envs that finish earlier start the next one meanwhile). ``env_kwargs`` override
    the checkpoint's (``randomization="visual"``), and ``max_episode_steps`` its time limit, as in
    ``evaluate``."""
    env_kwargs = _with_time_limit(env_kwargs, max_episode_steps)
    from simulo_envs.wrappers.record import RecordEpisode
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
    from simulo_envs.vector.vector_env import SimuloVectorEnv

    infos = read_checkpoint(checkpoint, device)
    _check_scene_options(infos, env_kwargs)
    config = _eval_config(infos["train_config"])
    env_id, cls = resolve_task(infos["env_id"])
    base = cls(num_envs=num_envs, render_mode="rgb_array", human_render_camera_configs=dict(width=size, height=size),
               **{**registered_kwargs(env_id), **config.get("env_kwargs", {}), **(env_kwargs or {})})
    recorder = RecordEpisode(base, video_dir, save_on_reset=False)
    vector_kwargs = {k: v for k, v in config.get("vector_kwargs", {}).items()
                     if k not in ("ignore_terminations", "num_workers")}   # filmed in this process
    venv = SimuloVectorEnv(recorder, ignore_terminations=full_episodes, record_metrics=True, **vector_kwargs)
    venv.reset(seed=seed)
    env = RslRlVecEnv(venv)
    try:
        policy = _policy(env, infos, checkpoint, device)
        obs = env.get_observations()
        finished = torch.zeros(num_envs, dtype=torch.bool)
        with torch.inference_mode():
            while not bool(finished.all()):
                obs, _, _, _ = env.step(policy(obs))
                info = env.last_info
                if "_final_info" in info:
                    finished |= info["_final_info"].cpu()
        return recorder.flush_video(name=infos["env_id"].replace(":", "."))
    except BaseException:   # an error or Ctrl-C midway: close() writes no partial video
        recorder.discard()
        raise
    finally:
        env.close()
