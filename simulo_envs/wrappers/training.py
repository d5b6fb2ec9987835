"""PPO training and evaluation on rsl-rl-lib 5.5.1, shared by ``scripts/train.py`` and ``scripts/evaluate.py``.

Why rsl-rl-lib: it is GPU-first and torch-native (batched torch tensors in, no numpy round trip,
the layout Isaac Lab trains its manipulation and locomotion tasks with), its PPO is small and
maintained by ETH/NVIDIA, and ``OnPolicyRunner`` saves and loads checkpoints; skrl would work too
but brings a larger API for the same PPO.

Per-task hyperparameters live next to each task: a ``train_config`` class attribute of the env
(``tasks/franka_reach.py``'s ``TRAIN_CONFIG``) or a sibling module ``<task module>_ppo`` with a
``TRAIN_CONFIG`` (``tasks/franka_lift_ppo.py``). Layout::

    {"num_envs": int, "total_timesteps": int, "env_kwargs": {...}, "vector_kwargs": {...},
     "runner": <rsl_rl OnPolicyRunner train_cfg>}

A checkpoint is ``OnPolicyRunner.save``'s dict with ``infos = {"env_id", "train_config",
"env_steps", "seed"}``; ``load_policy`` rebuilds the policy from it alone.
"""

from __future__ import annotations

import copy
import csv
import importlib
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch


def train_config_for(env_id: str) -> dict:
    """The task's PPO hyperparameters (a deep copy).

    Raises:
        KeyError: an unknown id; LookupError: the task has no training config.
    """
    from simulo_envs.envs.registration import REGISTERED

    if env_id not in REGISTERED:
        raise KeyError(f"unknown env id {env_id!r}; registered: {sorted(REGISTERED)}")
    cls = REGISTERED[env_id]
    config = getattr(cls, "train_config", None)
    if config is None:
        try:
            config = importlib.import_module(f"{cls.__module__}_ppo").TRAIN_CONFIG
        except ModuleNotFoundError:
            raise LookupError(f"{env_id} has no training config: give {cls.__name__} a train_config, "
                              f"or add {cls.__module__}_ppo.TRAIN_CONFIG") from None
    return copy.deepcopy(config)


def make_rsl_env(env_id: str, num_envs: int, config: dict, seed: Optional[int], evaluation: bool = False):
    """An ``RslRlVecEnv`` over ``env_id`` built from ``config``.

    ``evaluation=True`` keeps the env's terminations (``ignore_terminations`` off), so an episode
    ends at its first success: success then means "reached within ``max_episode_steps``".
    """
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
    from simulo_envs.wrappers.vector import make_vector_env

    vector_kwargs = dict(config.get("vector_kwargs", {}))
    if evaluation:
        vector_kwargs["ignore_terminations"] = False
    venv = make_vector_env(env_id, num_envs=num_envs, record_metrics=True,
                           **config.get("env_kwargs", {}), **vector_kwargs)
    venv.reset(seed=seed)
    return RslRlVecEnv(venv)


def _runner(env, config: dict, device: str):
    from rsl_rl.runners import OnPolicyRunner

    return OnPolicyRunner(env, copy.deepcopy(config["runner"]), log_dir=None, device=device)


@dataclass
class TrainResult:
    checkpoint: str
    env_steps: int
    wall_s: float
    success_once: float   # over the last 100 finished training episodes


def train(env_id: str, num_envs: Optional[int], total_timesteps: Optional[int], seed: int, log_dir: str,
          device: str = "cpu", checkpoint_every: int = 50, progress: bool = True,
          on_iteration: Optional[Callable[[dict], None]] = None) -> TrainResult:
    """Train PPO on ``env_id``; TensorBoard events, ``progress.csv`` and checkpoints go to ``log_dir``.

    ``progress.csv`` has one row per iteration: env_steps, wall_s, episodes (finished so far),
    success_once / success_at_end / return / length (means over the last 100 finished episodes).
    Checkpoints: ``log_dir/model_<iteration>.pt`` every ``checkpoint_every`` iterations and
    ``log_dir/model_final.pt``.
    """
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    config = train_config_for(env_id)
    num_envs = num_envs or config["num_envs"]
    total_timesteps = total_timesteps or config["total_timesteps"]
    config["num_envs"], config["total_timesteps"] = num_envs, total_timesteps
    torch.manual_seed(seed)
    os.makedirs(log_dir, exist_ok=True)
    env = make_rsl_env(env_id, num_envs, config, seed)
    runner = _runner(env, config, device)
    alg, steps_per_iter = runner.alg, config["runner"]["num_steps_per_env"]
    iterations = max(1, -(-total_timesteps // (steps_per_iter * num_envs)))
    writer = SummaryWriter(log_dir=log_dir, flush_secs=10)
    recent = {k: deque(maxlen=100) for k in ("success_once", "success_at_end", "return", "length")}
    finished_episodes, env_steps, start = 0, 0, time.perf_counter()
    infos = {"env_id": env_id, "train_config": config, "seed": seed}
    csv_path = os.path.join(log_dir, "progress.csv")
    with open(csv_path, "w", newline="") as handle:
        table = csv.writer(handle)
        table.writerow(["iteration", "env_steps", "wall_s", "episodes", *recent])
        bar = tqdm(total=iterations * steps_per_iter * num_envs, unit="step", desc=env_id, disable=not progress)
        obs = env.get_observations().to(device)
        alg.train_mode()
        for it in range(iterations):
            with torch.inference_mode():
                for _ in range(steps_per_iter):
                    actions = alg.act(obs)
                    obs, rewards, dones, extras = env.step(actions.to(env.device))
                    obs, rewards, dones = obs.to(device), rewards.to(device), dones.to(device)
                    alg.process_env_step(obs, rewards, dones, extras)
                    for key, values in extras.get("episode", {}).items():
                        if key in recent:
                            recent[key].extend(values.tolist())
                    finished_episodes += int(dones.sum())
                alg.compute_returns(obs)
            losses = alg.update()
            env_steps += steps_per_iter * num_envs
            row = {k: (sum(v) / len(v) if v else float("nan")) for k, v in recent.items()}
            wall = time.perf_counter() - start
            for key, value in row.items():
                writer.add_scalar(f"episode/{key}", value, env_steps)
            for key, value in losses.items():
                writer.add_scalar(f"loss/{key}", value, env_steps)
            writer.add_scalar("policy/action_std", alg.get_policy().output_std.mean().item(), env_steps)
            writer.add_scalar("perf/steps_per_second", env_steps / wall, env_steps)
            table.writerow([it, env_steps, f"{wall:.1f}", finished_episodes, *(f"{v:.4f}" for v in row.values())])
            handle.flush()
            bar.update(steps_per_iter * num_envs)
            bar.set_postfix(success=f"{row['success_once']:.2f}", ret=f"{row['return']:.2f}")
            runner.current_learning_iteration = it
            if checkpoint_every and it % checkpoint_every == 0:
                runner.save(os.path.join(log_dir, f"model_{it}.pt"), {**infos, "env_steps": env_steps})
            if on_iteration is not None:
                on_iteration({"iteration": it, "env_steps": env_steps, "wall_s": wall, **row})
        bar.close()
    final = os.path.join(log_dir, "model_final.pt")
    runner.save(final, {**infos, "env_steps": env_steps})
    writer.close()
    env.close()
    return TrainResult(final, env_steps, time.perf_counter() - start, row["success_once"])


def load_policy(checkpoint: str, num_envs: int, seed: int, device: str = "cpu"):
    """``(env, policy, infos)``: an evaluation env (terminations on) and the deterministic policy."""
    raw = torch.load(checkpoint, weights_only=False, map_location=device)
    infos = raw["infos"]
    env = make_rsl_env(infos["env_id"], num_envs, infos["train_config"], seed, evaluation=True)
    runner = _runner(env, infos["train_config"], device)
    runner.load(checkpoint, map_location=device)
    return env, runner.get_inference_policy(device), infos


def evaluate(checkpoint: str, episodes: int, seed: int = 10_000, max_envs: int = 100,
             device: str = "cpu") -> dict[str, Any]:
    """Run ``episodes`` episodes (one per env, in batches of at most ``max_envs``) with the
    deterministic policy; returns ``{"success_rate", "success_at_end", "episodes", "mean_return",
    "mean_length", "env_id"}``. Success = the task's success at some step of the episode (the
    episode terminates there)."""
    successes, at_end, returns, lengths = [], [], [], []
    env_id = None
    while len(successes) < episodes:
        batch = min(max_envs, episodes - len(successes))
        env, policy, infos = load_policy(checkpoint, batch, seed + len(successes), device)
        env_id = infos["env_id"]
        obs = env.get_observations()
        finished = torch.zeros(batch, dtype=torch.bool)
        with torch.inference_mode():
            while not bool(finished.all()):
                obs, _, dones, _ = env.step(policy(obs))
                info = env.last_info
                if "_final_info" in info:
                    new = info["_final_info"].cpu() & ~finished
                    episode = info["final_info"]["episode"]
                    for i in new.nonzero().flatten().tolist():
                        successes.append(bool(episode["success_once"][i]))
                        at_end.append(bool(episode["success_at_end"][i]))
                        returns.append(float(episode["return"][i]))
                        lengths.append(int(episode["length"][i]))
                    finished |= new
        env.close()
    n = len(successes)
    return {"env_id": env_id, "episodes": n, "success_rate": sum(successes) / n,
            "success_at_end": sum(at_end) / n, "mean_return": sum(returns) / n, "mean_length": sum(lengths) / n}


def record_policy_video(checkpoint: str, video_dir: str, num_envs: int = 4, seed: int = 10_000,
                        device: str = "cpu", size: int = 256) -> str:
    """Film the deterministic policy of ``checkpoint`` for one episode per env (``num_envs`` envs
    tiled, ``size`` px each) and write ``<video_dir>/<env_id>.mp4``; returns the path."""
    from simulo_envs.envs.registration import REGISTERED
    from simulo_envs.wrappers.record import RecordEpisode
    from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
    from simulo_envs.wrappers.vector import SimuloVectorEnv

    raw = torch.load(checkpoint, weights_only=False, map_location=device)
    infos = raw["infos"]
    config = infos["train_config"]
    base = REGISTERED[infos["env_id"]](num_envs=num_envs, render_mode="rgb_array",
                                       human_render_camera_configs=dict(width=size, height=size),
                                       **config.get("env_kwargs", {}))
    recorder = RecordEpisode(base, video_dir, save_on_reset=False)
    vector_kwargs = {k: v for k, v in config.get("vector_kwargs", {}).items() if k != "ignore_terminations"}
    venv = SimuloVectorEnv(recorder, ignore_terminations=False, record_metrics=True, **vector_kwargs)
    venv.reset(seed=seed)
    env = RslRlVecEnv(venv)
    runner = _runner(env, config, device)
    runner.load(checkpoint, map_location=device)
    policy = runner.get_inference_policy(device)
    obs = env.get_observations()
    finished = torch.zeros(num_envs, dtype=torch.bool)
    with torch.inference_mode():
        while not bool(finished.all()):
            obs, _, _, _ = env.step(policy(obs))
            info = env.last_info
            if "_final_info" in info:
                finished |= info["_final_info"].cpu()
    path = recorder.flush_video(name=infos["env_id"])
    env.close()
    return path
