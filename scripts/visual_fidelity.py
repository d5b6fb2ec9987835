"""How close ``visual_detail="fast"`` images are to ``"full"`` ones, per task, on expert episodes.

    python scripts/visual_fidelity.py                       # every task with an expert, 128x128
    python scripts/visual_fidelity.py --env-id FrankaLift-v1 --num-envs 4 --steps 75 --png docs/x.png --json
    python scripts/visual_fidelity.py --env-id SO101Lift-v1 --size 128 640x480   # each size in turn

Two copies of the task are made, one per setting, with the same seed. The scripted expert drives
the ``"full"`` copy; after every step the ``"fast"`` copy is put in the same state
(``set_state``), so both cameras see the same scene. Per frame and env, from the sensor camera
(``rgb+depth+segmentation``):

- robot IoU: pixels whose segmentation id is one of the robot's links, intersection over union
  of the two masks, pooled over all frames (``iou``) and the worst frame (``iou_min``);
- mean absolute RGB difference over every pixel, 0-255 levels (``rgb_mad``);
- depth error at the robot's silhouette: ``|depth_fast - depth_full|`` [mm] on the outline of the
  full robot mask (mask pixels with a non-robot 4-neighbour), median and mean; inside the mask
  too (``depth_inner_mm``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.envs.registration import REGISTERED, make
from simulo_envs.policies import EXPERTS


def robot_ids(env) -> list[int]:
    """Segmentation ids of the robot's links (entries of ``segmentation_id_map`` under its path)."""
    path = env.agent.robot.path
    return [i for i, name in env.segmentation_id_map.items() if isinstance(name, str) and name.split(":")[0] == path]


def outline(mask: np.ndarray) -> np.ndarray:
    """Pixels of ``mask`` (..., H, W) with at least one 4-neighbour outside it."""
    padded = np.pad(mask, [(0, 0)] * (mask.ndim - 2) + [(1, 1), (1, 1)], constant_values=False)
    inner = padded[..., :-2, 1:-1] & padded[..., 2:, 1:-1] & padded[..., 1:-1, :-2] & padded[..., 1:-1, 2:]
    return mask & ~inner


def parse_size(text: str) -> tuple[int, int]:
    """``"128"`` -> (128, 128); ``"640x480"`` -> (640, 480) (width, height [px]).

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    try:
        width, _, height = text.partition("x")
        size = (int(width), int(height or width))
    except ValueError:
        size = (0, 0)
    if min(size) < 1:
        raise argparse.ArgumentTypeError(f"a size is WIDTH or WIDTHxHEIGHT in pixels, got {text!r}")
    return size


def measure(env_id: str, num_envs: int = 4, steps: int = 75, size=128, seed: int = 0,
            png: str = None) -> dict:
    """Fidelity figures of ``env_id`` over ``num_envs * steps`` frames (module docstring), from
    its first sensor camera at ``size`` (an int, or ``(width, height)``) [px]."""
    width, height = (size, size) if isinstance(size, int) else size
    task = REGISTERED[env_id]
    camera = task._default_sensor_configs.fget(task)[0].name  # the task's own (front) camera
    kwargs = dict(num_envs=num_envs, obs_mode="rgb+depth+segmentation", control_mode="pd_ee_delta_pos",
                  sensor_configs={camera: dict(width=width, height=height)})
    envs = {detail: make(env_id, visual_detail=detail, **kwargs) for detail in ("full", "fast")}
    full, fast = envs["full"], envs["fast"]
    expert = EXPERTS[env_id](full)
    full.reset(seed=seed)
    fast.reset(seed=seed)
    ids = torch.tensor(robot_ids(full))
    inter = union = 0
    iou_min, mad, edge, inner, shown = 1.0, [], [], [], None
    for step in range(steps):
        full.step(expert.act())
        fast.set_state(full.get_state())
        pics = {d: e.get_obs()["sensor_data"][camera] for d, e in envs.items()}
        masks = {d: torch.isin(p["segmentation"][..., 0], ids).numpy() for d, p in pics.items()}
        i = (masks["full"] & masks["fast"]).sum((1, 2))
        u = (masks["full"] | masks["fast"]).sum((1, 2))
        inter, union = inter + int(i.sum()), union + int(u.sum())
        iou_min = min(iou_min, float((i / np.maximum(u, 1))[u > 0].min()) if (u > 0).any() else 1.0)
        rgb = {d: p["rgb"].numpy().astype(np.int16) for d, p in pics.items()}
        mad.append(np.abs(rgb["fast"] - rgb["full"]).mean())
        depth = np.abs(pics["fast"]["depth"][..., 0].numpy() - pics["full"]["depth"][..., 0].numpy()) * 1000.0
        rim = outline(masks["full"])
        edge.append(depth[rim])
        inner.append(depth[masks["full"] & ~rim])
        if step == steps // 2:
            shown = np.concatenate([pics["full"]["rgb"][0].numpy(), pics["fast"]["rgb"][0].numpy(),
                                    np.abs(rgb["fast"][0] - rgb["full"][0]).clip(0, 255).astype(np.uint8) * 4], axis=1)
    for env in envs.values():
        env.close()
    if png and shown is not None:
        import imageio.v3 as iio

        iio.imwrite(png, np.repeat(np.repeat(shown, 2, axis=0), 2, axis=1))
    edge, inner = np.concatenate(edge), np.concatenate(inner)
    return {"env_id": env_id, "frames": num_envs * steps, "size": f"{width}x{height}", "iou": inter / max(union, 1),
            "iou_min": iou_min, "rgb_mad": float(np.mean(mad)), "depth_edge_mm_median": float(np.median(edge)),
            "depth_edge_mm_mean": float(edge.mean()), "depth_inner_mm": float(inner.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", nargs="+", default=list(dict.fromkeys(EXPERTS)), choices=list(EXPERTS))
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=75, help="env steps per task (frames = num_envs * steps)")
    parser.add_argument("--size", type=parse_size, nargs="+", default=[(128, 128)],
                        help="sensor sizes: WIDTH (square) or WIDTHxHEIGHT [px], each measured in turn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", default=None, help="side-by-side picture (full | fast | 4x difference) of the first task")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    print(f"{'task':26s} {'size':>8s} {'frames':>6s} {'robot IoU':>9s} {'worst':>6s} {'RGB MAD':>7s} {'edge depth mm (median/mean)':>28s}")
    for k, (env_id, size) in enumerate((e, s) for e in args.env_id for s in args.size):
        start = time.perf_counter()
        row = measure(env_id, args.num_envs, args.steps, size, args.seed, args.png if k == 0 else None)
        rows.append(row)
        print(f"{env_id:26s} {row['size']:>8s} {row['frames']:6d} {row['iou']:9.4f} {row['iou_min']:6.3f} {row['rgb_mad']:7.2f} "
              f"{row['depth_edge_mm_median']:13.1f} / {row['depth_edge_mm_mean']:6.1f}   ({time.perf_counter() - start:.0f} s)",
              flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
