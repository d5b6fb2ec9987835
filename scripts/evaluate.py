"""Evaluate a checkpoint of ``scripts/train.py``: success rate over ``--episodes`` episodes.

    python scripts/evaluate.py --checkpoint runs/FrankaReach-v1/seed0/model_final.pt --episodes 100

The deterministic policy (the Gaussian's mean) runs one episode per env, in batches of at most
``--max-envs`` envs, with the task's terminations on: an episode counts as a success when the
task reports success at some step. Prints the summary; ``--json`` prints it as one JSON line.

``--video-dir DIR`` also films the policy for one episode in 4 envs (tiled) and writes
``DIR/<env_id>.mp4`` (needs a Vulkan driver; ``make`` installs a software one).
"""

from __future__ import annotations

import argparse
import json

import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.wrappers.training import evaluate, record_policy_video


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=10_000, help="evaluation seeds differ from training's")
    parser.add_argument("--max-envs", type=int, default=100)
    parser.add_argument("--video-dir", default=None, help="also write a video of the policy (4 envs, tiled) here")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    summary = evaluate(args.checkpoint, args.episodes, seed=args.seed, max_envs=args.max_envs, device=args.device)
    if args.video_dir:
        path = record_policy_video(args.checkpoint, args.video_dir, seed=args.seed, device=args.device)
        summary["video"] = path
        print(f"video: {path}")
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['env_id']}: success rate {summary['success_rate']:.1%} over {summary['episodes']} episodes "
              f"(success at end {summary['success_at_end']:.1%}, mean return {summary['mean_return']:.2f}, "
              f"mean length {summary['mean_length']:.1f})")


if __name__ == "__main__":
    main()
