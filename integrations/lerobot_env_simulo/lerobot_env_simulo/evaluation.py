"""A LeRobot policy folder evaluated in our tasks by ``scripts/evaluate.py`` (run in the LeRobot venv).

A *policy folder* is what ``lerobot-train`` saves (``checkpoints/<step>/pretrained_model``:
``config.json``, ``model.safetensors`` and the processors; ``train_config.json`` beside them) or what
``PreTrainedPolicy.save_pretrained`` writes. The policy, its pre- and post-processors and the env's
processors are built by LeRobot's own factories (``lerobot/policies/factory.py: make_policy,
make_pre_post_processors``, ``lerobot/envs/factory.py: make_env_pre_post_processors``, 0.6.1), and
each batch of episodes runs through LeRobot's own ``rollout`` (``lerobot/scripts/lerobot_eval.py``),
as ``lerobot-eval`` does, so nothing about how the policy sees the env is ours.

**The env.** The task and its settings come from the folder: the ``env`` of ``train_config.json``
when the policy was trained with ``--env.type=simulo``; else the dataset it was trained on, when
that dataset was recorded here (its ``meta/simulo_env.json``: task, control rate, cameras with their
names and sizes, episode limit, control mode); else the folder is refused with the reason.

**Seeds and batches.** Batch ``b`` of ``n`` envs resets with seeds ``seed + b n`` ... ``seed + b n +
n - 1`` (``lerobot-eval``'s rule, so episode ``k`` runs seed ``seed + k``). With ``isolate=False``
(``--shared-physics``) all envs share one PhysX system and one env serves every batch, exactly as
``lerobot-eval`` builds and uses its env: with ``--max-envs`` equal to its ``--eval.batch_size``
the two give the same episodes. With ``isolate=True`` (the default) every env has a PhysX system of
its own, rebuilt for each batch, so an episode's physics does not depend on the batch; the policy
still acts on the whole batch in one call, so its floating-point rounding may.

The torch random generators are seeded with ``seed`` first, as ``lerobot-eval`` seeds them with its
``--seed``, so a policy that samples (Diffusion Policy's noise) draws the same numbers; the two
agree when torch runs with the same number of threads (``scripts/evaluate.py`` uses one).

**Success.** Once: the task reported success at some step of the episode (``lerobot-eval``'s
``pc_success``). At end: success at the episode's last step (its termination, or the time limit;
with ``full_episodes`` terminations are ignored, so every episode runs to the limit). Return and
length count the episode's own steps (``lerobot-eval``'s ``sum_reward`` also adds the first reward
after an episode's end, when the batch runs on).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import os
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from lerobot.configs.policies import PreTrainedConfig
from lerobot.envs.factory import make_env_pre_post_processors
from lerobot.policies import make_policy, make_pre_post_processors
from lerobot.scripts.lerobot_eval import rollout
from lerobot.utils.io_utils import write_video
from lerobot.utils.random_utils import set_seed

from simulo_envs import lerobot as simulo_lerobot
from simulo_envs.lerobot import policy_env, policy_folder

from lerobot_env_simulo.config import SimuloEnv

__all__ = ["env_config", "evaluate", "record_policy_video"]

_ENV_FIELDS = ("task", "fps", "robot", "cameras", "obs_type", "control_mode", "episode_length",
               "observation_width", "observation_height", "visualization_width", "visualization_height", "variant")


def env_config(folder: str) -> SimuloEnv:
    """The ``SimuloEnv`` (``--env.type=simulo``) a policy folder is evaluated in (module docstring;
    ``simulo_envs.training.lerobot_policies.policy_env`` finds its source).

    Raises:
        FileNotFoundError: not a policy folder. ValueError: the folder names no env of ours and no
            dataset recorded here; cameras of different sizes (one size per env).
    """
    source, settings = policy_env(folder)
    if source == "env":
        return SimuloEnv(**{key: settings[key] for key in _ENV_FIELDS if settings.get(key) is not None})
    return SimuloEnv(**_recorded_env(settings))


def _recorded_env(recorded: dict) -> dict:
    """``SimuloEnv`` fields from a dataset's ``meta/simulo_env.json``."""
    cameras = recorded.get("cameras") or {}
    sources = recorded.get("camera_sources") or {}
    sizes = {tuple(shape[:2]) for shape in cameras.values()}
    if len(sizes) > 1:
        raise ValueError(f"the dataset's cameras have different sizes {sorted(sizes)}; evaluate with one size")
    fields: dict[str, Any] = {"task": recorded["env_id"], "fps": recorded.get("fps"),
                              "control_mode": recorded.get("control_mode"),
                              "episode_length": recorded.get("max_episode_steps")}
    if cameras:
        fields["cameras"] = ",".join(f"{name}={sources.get(name, name)}" for name in cameras)
        (height, width), = sizes
        fields.update(observation_height=int(height), observation_width=int(width))
    else:
        fields["obs_type"] = "agent_pos"
    return {key: value for key, value in fields.items() if value is not None}


def _load(folder: str, env_cfg: SimuloEnv, device: str):
    """LeRobot's policy and processors for ``folder``, built as ``lerobot-eval`` builds them."""
    policy_cfg = PreTrainedConfig.from_pretrained(folder)
    policy_cfg.pretrained_path = Path(folder)
    policy_cfg.device = device
    with contextlib.redirect_stdout(sys.stderr):   # LeRobot prints its loading notes; stdout is the report's
        policy = make_policy(cfg=policy_cfg, env_cfg=env_cfg)
    policy.eval()
    preprocessor, postprocessor = make_pre_post_processors(
        policy_cfg=policy_cfg, pretrained_path=folder, preprocessor_overrides={"device_processor": {"device": device}})
    env_processors = make_env_pre_post_processors(env_cfg=env_cfg, policy_cfg=policy_cfg)
    return policy, (*env_processors, preprocessor, postprocessor)


def _make_env(env_cfg: SimuloEnv, n_envs: int, isolate: bool, full_episodes: bool, num_workers, env_kwargs):
    kwargs = dict(env_cfg.gym_kwargs)
    extra = dict(env_kwargs or {})
    sizes = extra.pop("sensor_configs", None)
    if sizes and kwargs.get("sensor_configs") and any(dict(v) != kwargs["sensor_configs"] for v in sizes.values()):
        raise ValueError(f"the policy reads camera images of {kwargs['sensor_configs']}; it cannot be evaluated "
                         f"with {sizes}")
    kwargs.update(extra)
    if isolate:
        kwargs["sim_config"] = {**(kwargs.get("sim_config") or {}), "isolate_envs": True}
    if full_episodes:
        kwargs["ignore_terminations"] = True
    if num_workers != 1:
        kwargs["num_workers"] = num_workers
    return simulo_lerobot.make_env(env_cfg.task, n_envs=n_envs, **kwargs)


def _episodes(data: dict, seeds: list[int]) -> list[list]:
    """``[seed, success, success at end, return, length]`` per env of one ``rollout``."""
    done = data["done"].to(torch.int64)
    last = torch.argmax(done, dim=1)   # the first done step (the rollout marks the last step done)
    rows = []
    for env, seed in enumerate(seeds):
        end = int(last[env])
        success = data["success"][env, : end + 1]
        rows.append([seed, bool(success.any()), bool(success[end]),
                     float(data["reward"][env, : end + 1].sum()), end + 1])
    return rows


def evaluate(checkpoint: str, episodes: int, seed: int = 10_000, max_envs: int = 100, device: str = "cpu",
             progress: bool = False, full_episodes: bool = False, num_workers=1, isolate: bool = True,
             env_kwargs: Optional[dict] = None, max_episode_steps: Optional[int] = None) -> dict[str, Any]:
    """Success of a LeRobot policy folder over ``episodes`` episodes (module docstring), in batches of
    at most ``max_envs`` envs; the signature of ``simulo_envs.training.evaluation.evaluate``.

    Returns ``{"env_id", "episodes", "success_rate", "success_at_end", "mean_return",
    "mean_length", "env_steps", "full_episodes", "isolate_envs", "policy", "library", "env",
    "per_episode"}``: ``per_episode`` holds ``[seed, success, success at end, return, length]``;
    ``env`` the ``--env.*`` settings (``lerobot-eval`` takes the same); ``env_steps`` is None (not
    recorded in the folder).

    Raises:
        FileNotFoundError / ValueError: as ``env_config``; ValueError: ``episodes``/``max_envs`` < 1,
            a camera size other than the policy's. As LeRobot's factories for a folder they cannot load.
    """
    for name, value in (("episodes", episodes), ("max_envs", max_envs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    folder = policy_folder(checkpoint)
    env_cfg = env_config(folder)
    if max_episode_steps is not None:
        env_cfg = dataclasses.replace(env_cfg, episode_length=max_episode_steps)
    set_seed(seed)   # as lerobot-eval: a policy that samples (Diffusion's noise) draws the same numbers
    policy, processors = _load(folder, env_cfg, device)
    n = min(max_envs, episodes)
    rows: list[list] = []
    env = None
    try:
        for batch in range(math.ceil(episodes / n)):
            if env is None or isolate:   # isolated: fresh physics per batch; shared: lerobot-eval's one env
                if env is not None:
                    env.close()
                env = _make_env(env_cfg, n, isolate, full_episodes, num_workers, env_kwargs)
            seeds = list(range(seed + batch * n, seed + (batch + 1) * n))
            with torch.no_grad():
                data = rollout(env, policy, *processors, seeds=seeds)
            rows.extend(_episodes(data, seeds))
    finally:
        if env is not None:
            env.close()
    rows = rows[:episodes]
    columns = list(zip(*rows))
    return {"env_id": env_cfg.task, "episodes": episodes, "success_rate": sum(columns[1]) / episodes,
            "success_at_end": sum(columns[2]) / episodes, "mean_return": sum(columns[3]) / episodes,
            "mean_length": sum(columns[4]) / episodes, "env_steps": None, "full_episodes": bool(full_episodes),
            "isolate_envs": bool(isolate), "policy": policy.config.type, "library": "lerobot",
            "env": {key: getattr(env_cfg, key) for key in _ENV_FIELDS if getattr(env_cfg, key) is not None},
            "per_episode": rows}


def record_policy_video(checkpoint: str, video_dir: str, num_envs: int = 4, seed: int = 10_000, device: str = "cpu",
                        full_episodes: bool = False, env_kwargs: Optional[dict] = None,
                        max_episode_steps: Optional[int] = None) -> str:
    """Film one episode of the policy in ``num_envs`` envs (seeds ``seed`` ...), tiled side by side
    from the render camera, each env's frames until its episode ends (then its last frame); write
    ``video_dir/<env_id>.mp4`` at the control rate with LeRobot's ``write_video``. Returns the path.

    Raises:
        as ``evaluate``; OSError: the video cannot be written.
    """
    folder = policy_folder(checkpoint)
    env_cfg = env_config(folder)
    if max_episode_steps is not None:
        env_cfg = dataclasses.replace(env_cfg, episode_length=max_episode_steps)
    policy, processors = _load(folder, env_cfg, device)
    env = _make_env(env_cfg, num_envs, True, full_episodes, 1, env_kwargs)
    frames: list[np.ndarray] = []
    try:
        with torch.no_grad():
            data = rollout(env, policy, *processors, seeds=list(range(seed, seed + num_envs)),
                           render_callback=lambda e: frames.append(np.stack(e.call("render"))))
        fps = env.metadata["render_fps"]
    finally:
        env.close()
    ends = torch.argmax(data["done"].to(torch.int64), dim=1).tolist()
    tiled = [np.concatenate([frames[min(step, ends[i] + 1)][i] for i in range(num_envs)], axis=1)
             for step in range(len(frames))]
    os.makedirs(video_dir, exist_ok=True)
    path = os.path.join(video_dir, f"{env_cfg.task}.mp4")
    write_video(path, tiled, fps)
    return path
