"""Train Stable-Baselines3's PPO on a simulo_envs task through the SB3 adapter, then evaluate it.

    python scripts/train_sb3.py --env-id FrankaLift-v1 --seed 0 --max-minutes 10

The comparison run for ``scripts/train.py``: the same task, the same env settings and, where SB3
has them, the same PPO hyperparameters, read from the task's rsl-rl training config
(``simulo_envs.wrappers.training.train_config_for``) and mapped onto SB3's names (the mapping is
``sb3_ppo_kwargs`` below). Training stops at ``--total-timesteps`` or after ``--max-minutes`` of
wall-clock, whichever comes first (the clock starts at the first rollout, as in ``train.py``).

SB3 bootstraps truncated episodes from ``terminal_observation`` and treats terminations as the
end of the return; a task that terminates on success then pays success once, so by default the
training env ignores terminations (``--terminations`` keeps them), and episodes run to the time
limit. Evaluation is ``scripts/evaluate.py``'s: ``--eval-episodes`` episodes, one per env, seeds from
``--eval-seed``, deterministic actions, terminations on (success = success at some step).

Writes ``--log-dir`` (default ``runs/sb3/<env-id>/seed<seed>``): ``progress.csv`` (per rollout:
env_steps, wall_s, success_once over the last 100 training episodes),
``model.zip``, and ``eval.json``; prints the evaluation as one JSON line with ``--json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import time
from collections import deque

import numpy as np
import torch

import simulo_envs  # noqa: F401  (registers the tasks)


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


def evaluate_sb3(model, env_id: str, config: dict, episodes: int, seed: int) -> dict:
    """Success over ``episodes`` episodes (one per env, seeds ``seed..``), deterministic actions,
    terminations on; same fields as ``simulo_envs.wrappers.training.evaluate``."""
    from simulo_envs.wrappers.vector import make_vector_env

    venv = make_vector_env(env_id, num_envs=episodes, record_metrics=True, **config.get("env_kwargs", {}))
    obs, _ = venv.reset(seed=seed)
    finished = torch.zeros(episodes, dtype=torch.bool)
    result = {k: torch.zeros(episodes) for k in ("success_once", "success_at_end", "return", "length")}
    while not bool(finished.all()):
        actions, _ = model.predict(obs.cpu().numpy(), deterministic=True)
        obs, _, _, _, info = venv.step(torch.as_tensor(actions))
        if "_final_info" in info:
            new = info["_final_info"].cpu() & ~finished
            for key in result:
                result[key][new] = info["final_info"]["episode"][key].cpu()[new].to(torch.float32)
            finished |= new
    venv.close()
    return {"env_id": env_id, "episodes": episodes, "success_rate": float(result["success_once"].mean()),
            "success_at_end": float(result["success_at_end"].mean()), "mean_return": float(result["return"].mean()),
            "mean_length": float(result["length"].mean())}


def main() -> None:
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    from simulo_envs.wrappers.sb3 import SB3VecEnv
    from simulo_envs.wrappers.training import train_config_for
    from simulo_envs.wrappers.vector import make_vector_env

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="FrankaLift-v1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-envs", type=int, default=None, help="default: the task's train config")
    parser.add_argument("--total-timesteps", type=int, default=None, help="default: the task's train config")
    parser.add_argument("--max-minutes", type=float, default=None, help="wall-clock cap on training")
    parser.add_argument("--terminations", action="store_true", help="keep the task's terminations in training")
    parser.add_argument("--eval-episodes", type=int, default=100)
    parser.add_argument("--eval-seed", type=int, default=10_000)
    parser.add_argument("--log-dir", default=None)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.max_minutes is not None and not args.max_minutes > 0:
        parser.error("--max-minutes must be > 0")
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    config = train_config_for(args.env_id)
    num_envs = args.num_envs or config["num_envs"]
    total = args.total_timesteps or config["total_timesteps"]
    log_dir = args.log_dir or os.path.join("runs", "sb3", args.env_id, f"seed{args.seed}")
    os.makedirs(log_dir, exist_ok=True)

    venv = make_vector_env(args.env_id, num_envs=num_envs, ignore_terminations=not args.terminations,
                           **config.get("env_kwargs", {}))
    env = SB3VecEnv(venv)
    env.seed(args.seed)
    model = PPO("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0, **sb3_ppo_kwargs(config, num_envs))

    class Progress(BaseCallback):
        """Writes progress.csv per rollout; stops training at the wall-clock cap."""

        def __init__(self, handle):
            super().__init__()
            self.table = csv.writer(handle)
            self.handle = handle
            self.recent = deque(maxlen=100)  # success_once of the last 100 finished training episodes
            self.start = None

        def _on_training_start(self) -> None:
            self.start = time.perf_counter()
            self.table.writerow(["env_steps", "wall_s", "success_once"])

        def _on_step(self) -> bool:
            for entry in self.locals["infos"]:
                if "episode" in entry:
                    self.recent.append(float(entry.get("is_success", False)))
            return args.max_minutes is None or time.perf_counter() - self.start < args.max_minutes * 60

        def _on_rollout_end(self) -> None:
            rate = float(np.mean(self.recent)) if self.recent else float("nan")
            self.table.writerow([self.num_timesteps, f"{time.perf_counter() - self.start:.1f}", f"{rate:.4f}"])
            self.handle.flush()

    with open(os.path.join(log_dir, "progress.csv"), "w", newline="") as handle:
        callback = Progress(handle)
        model.learn(total_timesteps=total, callback=callback)
        wall = time.perf_counter() - callback.start
    model.save(os.path.join(log_dir, "model.zip"))
    env.close()
    summary = evaluate_sb3(model, args.env_id, config, args.eval_episodes, args.eval_seed)
    summary.update(train_env_steps=int(model.num_timesteps), train_wall_s=round(wall, 1), seed=args.seed,
                   library="stable-baselines3 PPO")
    with open(os.path.join(log_dir, "eval.json"), "w") as handle:
        json.dump(summary, handle)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"trained {summary['train_env_steps']:,} env steps in {wall:.0f} s; evaluation success "
              f"{summary['success_rate']:.1%} once, {summary['success_at_end']:.1%} at the end "
              f"({args.eval_episodes} episodes, seeds from {args.eval_seed})")


if __name__ == "__main__":
    main()
