"""Train PPO (rsl-rl-lib) on a simulo_envs task, batched on one process.

    python scripts/train.py --env-id FrankaReach-v1 --num-envs 64 --total-timesteps 1000000 --seed 0

Hyperparameters come from the task (``train_config`` next to it; see
``simulo_envs/wrappers/training.py``); ``--num-envs`` / ``--total-timesteps`` override its defaults.
Writes to ``--log-dir`` (default ``runs/<env-id>/seed<seed>``): TensorBoard events
(``tensorboard --logdir runs``), ``progress.csv`` (success rate against env steps), checkpoints
``model_<iteration>.pt`` and ``model_final.pt``. A progress bar shows the success rate of the last
100 finished training episodes. Evaluate with ``scripts/evaluate.py --checkpoint .../model_final.pt``.
"""

from __future__ import annotations

import argparse
import os

import torch

import simulo_envs  # noqa: F401  (registers the tasks)
import simulo_envs.tasks.franka_reach  # noqa: F401  (until tasks/__init__ imports it)
from simulo_envs.wrappers.training import train


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="FrankaReach-v1")
    parser.add_argument("--num-envs", type=int, default=None, help="default: the task's train config")
    parser.add_argument("--total-timesteps", type=int, default=None, help="env steps, all envs together")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-dir", default=None)
    parser.add_argument("--device", default="cpu", help="where the networks run")
    parser.add_argument("--checkpoint-every", type=int, default=50, help="iterations between checkpoints")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch CPU threads (physics uses the main one)")
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.torch_threads)
    log_dir = args.log_dir or os.path.join("runs", args.env_id, f"seed{args.seed}")
    result = train(args.env_id, args.num_envs, args.total_timesteps, args.seed, log_dir, device=args.device,
                   checkpoint_every=args.checkpoint_every, progress=not args.no_progress)
    print(f"trained {result.env_steps} env steps in {result.wall_s:.0f} s; training success "
          f"(last 100 episodes) {result.success_once:.2f}; checkpoint {result.checkpoint}")


if __name__ == "__main__":
    main()
