"""A picture of each SO-101 suite task: its ``render()`` view at reset and once the scripted
expert has done the task, beside what its sensor cameras see at reset.

    python scripts/task_pictures.py                                   # every SO-101 suite task -> docs/task_pictures/
    python scripts/task_pictures.py --tasks SO101Sort-v1 --variant heldout --out /tmp/pictures

Each task runs one env (``--seed``, the task's ``--variant``) with its scripted expert
(``simulo_envs.policies.EXPERTS``, on ``pd_ee_delta_pos``) until it first reports success, or to
its time limit. The picture, ``<out>/<env id>.png`` (``<env id>_<variant>.png`` for a variant
other than ``train``), is one row: ``render()`` at reset and at that step (256 x 256 each), then
every sensor camera at reset (128 x 128 each, stacked two to a column: the task's ``base_camera``
and the arm's ``wrist_camera``), saved as a 256-colour PNG (a few tens of KB).
"""

from __future__ import annotations

import argparse
import os
import sys

import gymnasium as gym
import numpy as np
import torch
from PIL import Image

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.output_paths import check_output_dir
from simulo_envs.policies import EXPERTS
from simulo_envs.tasks.so_suite import VARIANTS
from simulo_envs.training.suite_benchmark import suite_tasks

RENDER_SIZE = 256
"""Side of each ``render()`` frame in the picture [px]."""
SENSOR_SIZE = 128
"""Side of each sensor frame [px] (the suite's ``base_camera`` resolution)."""


def _rgb(image) -> np.ndarray:
    """uint8 (H, W, 3) from one env's frame (a tensor or array, batched or not)."""
    array = image.detach().cpu().numpy() if isinstance(image, torch.Tensor) else np.asarray(image)
    array = array[0] if array.ndim == 4 else array
    return array[..., :3].astype(np.uint8)


def picture(env_id: str, variant: str = "train", seed: int = 0) -> tuple[Image.Image, dict]:
    """The picture of ``env_id`` (module docstring) and a summary: ``instruction``, ``success``
    (the expert finished the task), ``step`` (the step pictured), ``sensors`` (camera names).

    Raises:
        KeyError: a task without a scripted expert. ValueError: an unknown variant (the task's).
    """
    if env_id not in EXPERTS:
        raise KeyError(f"{env_id} has no scripted expert; tasks with one: {sorted(EXPERTS)}")
    env = gym.make(env_id, num_envs=1, obs_mode="rgb", control_mode="pd_ee_delta_pos", render_mode="rgb_array",
                   variant=variant, human_render_camera_configs=dict(width=RENDER_SIZE, height=RENDER_SIZE))
    try:
        base = env.unwrapped
        expert = EXPERTS[env_id](env)
        obs, info = env.reset(seed=seed)
        instruction = base.instructions()[0]
        sensors = {name: _rgb(data["rgb"]) for name, data in obs["sensor_data"].items() if "rgb" in data}
        frames = [_rgb(env.render())]
        step, success = 0, False
        for step in range(1, base.default_max_episode_steps + 1):
            _, _, _, _, info = env.step(expert.act())
            if bool(info["success"][0]):
                success = True
                break
        frames.append(_rgb(env.render()))
    finally:
        env.close()
    width = RENDER_SIZE * len(frames) + SENSOR_SIZE * ((len(sensors) + 1) // 2)
    canvas = Image.new("RGB", (width, RENDER_SIZE), (255, 255, 255))
    for i, frame in enumerate(frames):
        canvas.paste(Image.fromarray(frame).resize((RENDER_SIZE, RENDER_SIZE)), (i * RENDER_SIZE, 0))
    for i, frame in enumerate(sensors.values()):
        x = RENDER_SIZE * len(frames) + (i // 2) * SENSOR_SIZE
        canvas.paste(Image.fromarray(frame).resize((SENSOR_SIZE, SENSOR_SIZE)), (x, (i % 2) * SENSOR_SIZE))
    return canvas, {"instruction": instruction, "success": success, "step": step, "sensors": list(sensors)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=None, metavar="ENV_ID",
                        help="tasks to picture (default: every SO-101 suite task)")
    parser.add_argument("--variant", default="train", choices=VARIANTS, help="the tasks' variant (default train)")
    parser.add_argument("--seed", type=int, default=0, help="the episode's seed")
    parser.add_argument("--out", default=os.path.join("docs", "task_pictures"),
                        help="folder for the pictures (made with its parents if missing)")
    return parser


def main(argv=None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    known = suite_tasks()
    tasks = args.tasks or known
    unknown = [task for task in tasks if task not in known]
    if unknown:
        parser.error(f"not SO-101 suite tasks: {unknown}; the suite: {known}")
    if not 0 <= args.seed < 2 ** 63:
        parser.error(f"--seed must be >= 0 and < 2**63, got {args.seed}")
    try:
        check_output_dir(args.out, "output folder")
    except ValueError as error:
        parser.error(str(error))
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for env_id in tasks:
        image, summary = picture(env_id, args.variant, args.seed)
        suffix = "" if args.variant == "train" else f"_{args.variant}"
        path = os.path.join(args.out, f"{env_id}{suffix}.png")
        image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
        done = f"done at step {summary['step']}" if summary["success"] else f"not done in {summary['step']} steps"
        print(f"{path}: {summary['instruction']!r}, expert {done}, sensors {summary['sensors']}, "
              f"{os.path.getsize(path) / 1024:.0f} KB", flush=True)


if __name__ == "__main__":
    sys.exit(main())
