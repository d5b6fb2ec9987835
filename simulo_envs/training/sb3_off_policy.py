"""Stable-Baselines3's off-policy algorithms SAC and TD3 on a simulo_envs task
(``scripts/train_sb3.py --algo sac|td3``), through ``train_sb3`` with the plan, progress bar,
``progress.csv``, stop signals, log-folder rules and ``model.zip`` of the PPO run.

The env is the one the PPO run trains on: the task's training config's env keywords (every
built-in task: Cartesian control ``pd_ee_delta_pos``, ``normalized_dense`` reward) and full
episodes (terminations ignored unless ``terminations=True``, so every episode end is a time-out
that SB3 bootstraps from ``terminal_observation``), ``num_envs`` envs stepped together.

Hyperparameters (``OFF_POLICY_DEFAULTS``, ``sb3_off_policy_kwargs``). Source: ManiSkill 3's
state-based SAC baseline (``examples/baselines/sac/sac.py`` at commit 38c2974 and its README's
commands), sized down for a 2-core CPU where marked:

- 32 envs (the README's ``--num_envs=32``); discount: the task's own (its PPO config's ``gamma``:
  0.8 for FrankaLift-v1, the baseline's value); target update ``tau`` 0.01 every gradient step;
  learning rate 3e-4 (actor, critics and, for SAC, the entropy coefficient); replay buffer 1M
  transitions; updates start after 4,000 env steps of uniformly random actions; actor and two
  critics 256 x 256 x 256, ReLU.
- CPU sizing: minibatches of 512 (the baseline's 1,024; an update's cost grows about linearly
  with it on one core) and 0.25 gradient steps per env step (the README's 0.5): after every step
  of the envs SB3 takes ``round(0.25 * num_envs)`` gradient steps (8 for 32 envs).
- SAC: entropy coefficient learned, starting at 1.0, target entropy ``-action_dim`` (the
  baseline's autotune; SB3's ``"auto"``). SB3 bounds the policy's log std to [-20, 2] where the
  baseline squashes it into [-5, 2].
- TD3 (the baseline has none): the settings above, plus the TD3 paper's (Fujimoto et al. 2018,
  "Addressing Function Approximation Error in Actor-Critic Methods"; SB3's defaults): Gaussian
  exploration noise of std 0.1, actor and targets updated every 2nd critic update, target policy
  noise 0.2 clipped at 0.5.

Counting: an iteration is one step of every env (``num_envs`` env steps, stored in the replay
buffer) followed by its gradient steps; ``progress.csv`` gets one row every ``ROW_STEPS`` (50)
iterations, with ``train.py``'s columns (``iteration`` is the row's last iteration; ``collect_s``
and ``learn_s`` are the row's seconds of env steps and of gradient steps) and a last row when the
training ends or stops. ``--max-minutes`` and stop signals are checked after every step of the
envs, before SB3 stores it: the step taken once the time is up, or under way when the signal
came, is dropped, and ``model.zip`` counts the stored env steps only.

``--resume`` loads ``model.zip`` (networks, optimizers, entropy coefficient, counts) and goes on.
The replay buffer is not saved (1M transitions, about 300 MB): a resumed run refills it with
``learning_starts`` env steps of random actions, as at the start, before its updates go on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Optional

import gymnasium as gym
import numpy as np
from stable_baselines3 import SAC, TD3
from stable_baselines3.common.noise import NormalActionNoise

from simulo_envs.training.sb3_pixels import pixel_env_kwargs, pixel_sac_kwargs
from simulo_envs.training.sb3_train import EPISODE_KEYS, SB3Algorithm, SB3Result, SB3Run, episode_stats
from simulo_envs.training.interrupt import nothing_saved
from simulo_envs.training.run_files import progress_row
from simulo_envs.training.task_lookup import resolve_task, train_config_for
from simulo_envs.training.rsl_rl_train import TrainPlan, budget_left

__all__ = ["OFF_POLICY_ALGORITHMS", "OFF_POLICY_DEFAULTS", "OFF_POLICY_NUM_ENVS", "ROW_STEPS",
           "sb3_off_policy_kwargs", "plan_off_policy", "OffPolicyPlan", "OffPolicyRun", "describe_off_policy_result"]

OFF_POLICY_NUM_ENVS = 32   # default --num-envs for SAC and TD3 (the task's config sizes PPO's)
ROW_STEPS = 50             # progress.csv: one row per 50 steps of every env
OFF_POLICY_DEFAULTS = {
    "buffer_size": 1_000_000,      # transitions
    "learning_starts": 4_000,      # env steps of random actions before the first update
    "batch_size": 512,             # transitions per gradient step
    "tau": 0.01,                   # target network update rate, every gradient step
    "learning_rate": 3e-4,
    "updates_per_env_step": 0.25,  # gradient steps per env step (update-to-data ratio)
    "net_arch": (256, 256, 256),   # actor and each critic, ReLU
    "td3_action_noise_std": 0.1,   # TD3 exploration: Gaussian, in units of the action bounds [-1, 1]
}
"""The SAC and TD3 settings (the module docstring gives their sources)."""


def sb3_off_policy_kwargs(algo: str, config: dict, num_envs: int, action_space: gym.spaces.Box) -> dict:
    """SB3 ``SAC`` / ``TD3`` keyword arguments for a task's training config (its discount) and
    ``num_envs`` envs (the gradient steps after each step of the envs) with ``action_space``
    (one env's; TD3's noise has its size).

    Raises:
        ValueError: ``algo`` neither ``"sac"`` nor ``"td3"``.
    """
    d = OFF_POLICY_DEFAULTS
    common = {
        "buffer_size": d["buffer_size"], "learning_starts": d["learning_starts"], "batch_size": d["batch_size"],
        "tau": d["tau"], "gamma": config["runner"]["algorithm"].get("gamma", 0.8), "learning_rate": d["learning_rate"],
        "train_freq": (1, "step"), "gradient_steps": gradient_steps_per_iteration(num_envs),
        "policy_kwargs": {"net_arch": list(d["net_arch"])},
    }
    if algo == "sac" and config.get("pixels"):   # SAC from camera images (sb3_pixels.py)
        return {**pixel_sac_kwargs(common, config["pixels"], num_envs), "ent_coef": "auto", "target_entropy": "auto"}
    if algo == "sac":
        return {**common, "ent_coef": "auto", "target_entropy": "auto"}
    if algo == "td3":
        size = int(np.prod(action_space.shape))
        noise = NormalActionNoise(np.zeros(size), np.full(size, d["td3_action_noise_std"]))
        return {**common, "action_noise": noise, "policy_delay": 2, "target_policy_noise": 0.2,
                "target_noise_clip": 0.5}
    raise ValueError(f"off-policy algo must be 'sac' or 'td3', got {algo!r}")


def gradient_steps_per_iteration(num_envs: int, updates_per_env_step: Optional[float] = None) -> int:
    """Gradient steps after each step of ``num_envs`` envs: ``updates_per_env_step`` (default
    ``OFF_POLICY_DEFAULTS``') times ``num_envs``, rounded, at least 1."""
    ratio = OFF_POLICY_DEFAULTS["updates_per_env_step"] if updates_per_env_step is None else updates_per_env_step
    return max(1, round(ratio * num_envs))


@dataclass(frozen=True)
class OffPolicyPlan(TrainPlan):
    """What ``train_sb3`` runs for SAC or TD3: ``iterations`` steps of the ``num_envs`` envs
    (``steps_per_env`` is 1), each followed by its gradient steps."""

    algo: str = "sac"
    ROUNDED_TO: ClassVar[str] = "whole steps of the envs"

    def summary(self) -> dict:
        """The plan as plain data (``run.json``), with the algorithm."""
        return {**super().summary(), "algo": self.algo}

    def describe(self) -> str:
        """One line: what will be trained, and how the budget was rounded."""
        d = {**OFF_POLICY_DEFAULTS, **(self.config.get("pixels") or {})}
        g = gradient_steps_per_iteration(self.num_envs, d["updates_per_env_step"])
        pixels = self.config.get("pixels")
        what = "" if not pixels else (f" from {'x'.join(map(str, pixels['camera_size']))} camera images"
                                      f"{' (critics on the state)' if pixels['asymmetric_critic'] else ''}")
        text = (f"{self.env_id}{what}: {self.env_steps:,} env steps = {self.iterations:,} steps of {self.num_envs} "
                f"envs, "
                f"each followed by {g} gradient step{'s' if g != 1 else ''} of {d['batch_size']} transitions from "
                f"env step {d['learning_starts']:,} on")
        return text + self.rounding()

    def warning(self) -> Optional[str]:
        """For a budget that ends before the first gradient step (a smoke test): that it learns
        nothing, and the budget that would; else None."""
        starts = {**OFF_POLICY_DEFAULTS, **(self.config.get("pixels") or {})}["learning_starts"]
        if self.env_steps > starts:
            return None
        return (f"warning: this budget ends before the first gradient step (env step {starts:,}): random actions "
                f"only, nothing learned; give --total-timesteps above {starts:,} to train")


def plan_off_policy(algo: str, env_id: str, num_envs: Optional[int] = None, total_timesteps: Optional[int] = None,
                    env_kwargs: Optional[dict] = None, vector_kwargs: Optional[dict] = None,
                    pixels: Optional[dict] = None) -> OffPolicyPlan:
    """Check a SAC / TD3 training request and size it; nothing is built. ``num_envs`` defaults to
    ``OFF_POLICY_NUM_ENVS``, ``total_timesteps`` to the task's config's budget (rounded down to
    whole steps of the envs). ``pixels`` (``sb3_pixels.pixel_settings``; SAC only): train from
    camera images; it goes into the config as ``"pixels"``, with its ``obs_mode`` and camera size
    in the env keywords.

    Raises:
        ValueError: ``algo`` not ``"sac"`` / ``"td3"``; ``num_envs`` or ``total_timesteps`` not an
            int >= 1, or fewer env steps than one step of the envs; ``pixels`` with TD3, or with
            ``obs_mode`` or camera sizes in ``env_kwargs``.
        KeyError / ImportError / TypeError / LookupError: as ``train_config_for``.
    """
    if algo not in OFF_POLICY_ALGORITHMS:
        raise ValueError(f"off-policy algo must be one of {', '.join(OFF_POLICY_ALGORITHMS)}, got {algo!r}")
    if pixels and algo != "sac":
        raise ValueError(f"training from camera images is built for SAC only, not {algo.upper()}")
    clash = sorted({"obs_mode", "sensor_configs"} & set(env_kwargs or {})) if pixels else []
    if clash:
        raise ValueError(f"the pixel settings choose the env's {' and '.join(clash)}; do not give them as well")
    config = train_config_for(env_id)
    env_id, env_cls = resolve_task(env_id)
    num_envs = OFF_POLICY_NUM_ENVS if num_envs is None else num_envs
    total = config["total_timesteps"] if total_timesteps is None else total_timesteps
    for name, value in (("num_envs", num_envs), ("total_timesteps", total)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    iterations = int(total) // int(num_envs)
    if iterations < 1:
        raise ValueError(f"total_timesteps {total:,} is less than one step of the {num_envs} envs: ask for at "
                         f"least {num_envs:,}, or use fewer envs")
    config["num_envs"], config["total_timesteps"] = int(num_envs), iterations * int(num_envs)
    config["env_kwargs"] = {**config.get("env_kwargs", {}), **(env_kwargs or {})}
    if pixels:
        config["pixels"] = dict(pixels)
        config["env_kwargs"].update(pixel_env_kwargs(pixels))
    config["vector_kwargs"] = {**config.get("vector_kwargs", {}), **(vector_kwargs or {})}
    return OffPolicyPlan(env_id, env_cls, config, int(num_envs), 1, 1, iterations, int(total), algo)


class OffPolicyRun(SB3Run):
    """SB3 callback for SAC / TD3: the progress bar, ``progress.csv`` (one row per ``ROW_STEPS``
    iterations and a last one at the end), the counts (``state()`` adds ``gradient_steps``), and
    stopping at a stop signal or once ``max_wall_s`` of this session have passed (checked before
    each env step is stored). Arguments as ``SB3Run``'s."""

    def __init__(self, log_dir, bar, stop, max_wall_s, infos=None):
        super().__init__(log_dir, bar, stop, max_wall_s, infos)
        self._seconds = {"collect_s": 0.0, "learn_s": 0.0}   # of the row under way
        self._since_row = 0
        self._phase, self._mark = "learn_s", time.perf_counter()
        self._learning_starts: Optional[int] = None
        self._gradient_steps = int((infos or {}).get("gradient_steps", 0))   # until training starts

    def state(self) -> dict:
        """``SB3Run.state()`` and the gradient steps done (all sessions)."""
        model = getattr(self, "model", None)   # set when training starts
        done = self._gradient_steps if model is None else int(model._n_updates)
        return {**super().state(), "gradient_steps": done}

    def _on_training_start(self) -> None:
        super()._on_training_start()
        self._phase, self._mark = "learn_s", self._start
        if self.resumed:   # the replay buffer starts empty: refill it before updating (module docstring)
            self._learning_starts = self.model.learning_starts
            self.model.learning_starts = self.model.num_timesteps + self._learning_starts

    def _switch(self, phase: str) -> float:
        now = time.perf_counter()
        self._seconds[self._phase] += now - self._mark
        self._phase, self._mark = phase, now
        return now

    def _on_rollout_start(self) -> None:
        now = self._switch("collect_s")   # the previous iteration's gradient steps are done
        if self._since_row >= ROW_STEPS:
            self._write_row(now)

    def _on_step(self) -> bool:
        if self.stop.requested is not None:
            return False
        if self.max_wall_s is not None and time.perf_counter() - self._start >= self.max_wall_s:
            return False
        episodes = episode_stats(self.locals["infos"])
        for stats in episodes:
            for key, value in zip(EPISODE_KEYS, stats):
                self.recent[key].append(value)
        self.episodes += len(episodes)
        self.env_steps += self.training_env.num_envs
        self.iterations += 1
        self._since_row += 1
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return True

    def _on_rollout_end(self) -> None:
        self._switch("learn_s")
        if self.bar is not None:
            self._show_means(self._means())

    def _on_training_end(self) -> None:
        now = self._switch("learn_s")
        if self._since_row:
            self._write_row(now)
        if self._learning_starts is not None:   # model.zip keeps the setting, not this session's shift
            self.model.learning_starts = self._learning_starts
        super()._on_training_end()

    def _write_row(self, now: float) -> None:
        row = {"iteration": self.iterations - 1, "env_steps": self.env_steps, "episodes": self.episodes,
               **self._means(), **self._seconds, "wall_s": self.wall_offset + (now - self._start)}
        handle, table = self._csv
        table.writerow(progress_row(row))
        handle.flush()
        self._seconds = {"collect_s": 0.0, "learn_s": 0.0}
        self._since_row = 0


def describe_off_policy_result(result: SB3Result) -> str:
    """One line on what a SAC / TD3 training did (env steps, gradient steps, throughput, training
    success, checkpoint), or where a stop signal stopped it and what it saved."""
    grads = f"{result.gradient_steps:,} gradient steps"
    if result.interrupted is not None:
        if result.checkpoint is None:
            return nothing_saved(result.interrupted, "before the first env step was stored")
        return (f"interrupted by {result.interrupted} after {result.env_steps:,} env steps ({grads}): saved "
                f"{result.checkpoint}; continue with --resume (the replay buffer is refilled first)")
    success = ("no training episode finished" if result.success_once is None
               else f"training success (last 100 episodes) {result.success_once:.2f}")
    total = f" ({result.env_steps:,} and {grads} in all)" if result.session_steps != result.env_steps else f" and {grads}"
    return (f"trained {result.session_steps:,} env steps{total} in {result.wall_s:.0f} s "
            f"({result.steps_per_second:,.0f} env steps/s); {success}; checkpoint {result.checkpoint}"
            + budget_left(result))


OFF_POLICY_ALGORITHMS = {
    name: SB3Algorithm(name, cls, partial(sb3_off_policy_kwargs, name), OffPolicyRun)
    for name, cls in (("sac", SAC), ("td3", TD3))
}
"""``--algo`` name -> how ``train_sb3`` trains it."""
