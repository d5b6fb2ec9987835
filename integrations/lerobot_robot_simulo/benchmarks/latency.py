"""Action-to-observation latency of the simulated SO-101 follower in LeRobot's teleoperation
loop, per camera resolution: the measurement behind the latency table of ``docs/lerobot.md``.

    .venv-lerobot/bin/python integrations/lerobot_robot_simulo/benchmarks/latency.py \
        [--sizes 480x640 240x320 120x160] [--seconds 10] [--picture docs/so101_follower_teleop.png]

For each size, a ``simulo_so101_follower`` in real time (``SO101PickPlace-v1``) with two cameras
of that size (``front``: the scene's ``base_camera``, ``wrist``: ``wrist_camera``) runs the loop of
LeRobot 0.6.1's ``lerobot-teleoperate`` (``teleop_loop`` in
``lerobot/scripts/lerobot_teleoperate.py``): ``get_observation``, the leader's action (here a
slow sweep of every joint), ``send_action``, then ``precise_sleep`` to the next period, at
``--fps`` (30). The first second is left out (warm-up). Printed, median and 95th percentile [ms]:

- ``act->obs``: from the call of ``send_action`` with an action to the return of the first
  ``get_observation`` whose joints and pictures were simulated with it (in real time the sim
  steps when the next observation is asked for; LeRobot's loop asks one period later);
- ``obs``: one ``get_observation`` (stepping to the wall clock, rendering both cameras);
- ``act``: one ``send_action``;
- ``obs cpu``: the CPU time of one ``get_observation`` (``time.process_time``, all threads): about
  its wall time on an idle machine with one core free for it (the renderer's threads may run
  on more), so a loaded machine's figures can be read against it;
- ``period``: one loop; ``Hz``: loops per second; ``dropped``: wall-clock time the sim skipped
  because a call came more than ``max_catch_up`` periods late [s].

Then, per size, the CPU time of one loop's work without the wall clock (lockstep, 60 loops):
``step cpu`` (``send_action``: one control period of physics) and ``render cpu``
(``get_observation``: both cameras), median and 95th percentile [ms]. Their sum under the
period (33.3 ms at 30 Hz) is what keeps the rate on a machine with a core free for the loop.

A size keeps the rate when ``Hz`` is the ``--fps`` and nothing is dropped. Not a test: the
figures depend on the machine and its load (print ``uptime`` beside them).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from lerobot.robots.utils import make_robot_from_config
from lerobot.utils.robot_utils import precise_sleep

from lerobot_robot_simulo import SimuloCameraConfig, SimuloSO101FollowerConfig


def sweep(rest: dict, limits: dict, t: float) -> dict:
    """A slow sweep of every joint around ``rest``: a quarter of its range at 0.25 Hz."""
    out = {}
    for j, (name, value) in enumerate(rest.items()):
        low, high = limits[name]
        out[name] = float(np.clip(value + 0.25 * (high - low) * math.sin(2 * math.pi * 0.25 * t + j), low, high))
    return out


def measure(height: int, width: int, fps: int, seconds: float, picture: str | None) -> dict:
    """Run the loop for ``seconds`` with two ``height`` x ``width`` cameras (module docstring)."""
    cameras = {name: SimuloCameraConfig(camera=camera, width=width, height=height)
               for name, camera in (("front", "base_camera"), ("wrist", "wrist_camera"))}
    robot = make_robot_from_config(SimuloSO101FollowerConfig(cameras=cameras, real_time=True, fps=fps))
    robot.connect()
    try:
        names = list(robot.action_features)
        limits = robot.sim.joint_limits
        obs = robot.get_observation()
        rest = {n: obs[n] for n in names}
        rows = []  # (loop start, obs start, obs end, act start, act end, obs cpu)
        pictured = not picture
        start = time.perf_counter()
        while (now := time.perf_counter()) - start < seconds:
            c0, o0 = time.process_time(), time.perf_counter()
            obs = robot.get_observation()
            o1, c1 = time.perf_counter(), time.process_time()
            action = sweep(rest, limits, o1 - start)
            a0 = time.perf_counter()
            robot.send_action(action)
            a1 = time.perf_counter()
            rows.append((now, o0, o1, a0, a1, c1 - c0))
            if not pictured and o1 - start >= seconds / 2:
                from PIL import Image

                Image.fromarray(np.concatenate([obs["front"], obs["wrist"]], axis=1)).save(picture)
                pictured = True
            precise_sleep(max(1 / fps - (time.perf_counter() - now), 0.0))
        dropped = robot.sim.trace()["obs_dropped"][-1]
    finally:
        robot.disconnect()
    t = np.asarray(rows)
    keep = t[:, 0] - start >= 1.0
    ms = {"act->obs": (t[1:, 2] - t[:-1, 3])[keep[:-1]], "obs": (t[:, 2] - t[:, 1])[keep],
          "act": (t[:, 4] - t[:, 3])[keep], "obs cpu": t[keep, 5], "period": np.diff(t[:, 0])[keep[:-1]]}
    out = {k: (1e3 * np.median(v), 1e3 * np.percentile(v, 95)) for k, v in ms.items()}
    out["Hz"] = (keep.sum() - 1) / (t[keep, 0][-1] - t[keep, 0][0])
    out["dropped"] = float(dropped)
    return out


def cpu_cost(height: int, width: int, fps: int, loops: int = 60) -> dict:
    """CPU time [ms] (median, 95th percentile) of ``send_action`` and ``get_observation`` in
    lockstep with two ``height`` x ``width`` cameras (module docstring)."""
    cameras = {name: SimuloCameraConfig(camera=camera, width=width, height=height)
               for name, camera in (("front", "base_camera"), ("wrist", "wrist_camera"))}
    robot = make_robot_from_config(SimuloSO101FollowerConfig(cameras=cameras, real_time=False, fps=fps))
    robot.connect()
    try:
        limits = robot.sim.joint_limits
        obs = robot.get_observation()
        rest = {n: obs[n] for n in robot.action_features}
        step, render = [], []
        for i in range(loops + 5):
            c0 = time.process_time()
            robot.send_action(sweep(rest, limits, i / fps))
            c1 = time.process_time()
            robot.get_observation()
            c2 = time.process_time()
            if i >= 5:  # warm-up
                step.append(c1 - c0)
                render.append(c2 - c1)
    finally:
        robot.disconnect()
    return {k: (1e3 * np.median(v), 1e3 * np.percentile(v, 95)) for k, v in (("step", step), ("render", render))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["480x640", "240x320", "120x160"], help="HxW of both cameras")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--picture", default=None, help="a PNG of both cameras halfway through the first size")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs; {args.fps} Hz, {args.seconds:.0f} s each")
    print(f"{'cameras':>16} | {'act->obs ms':>13} | {'obs ms':>13} | {'act ms':>11} | {'obs cpu ms':>13} | "
          f"{'period ms':>13} | {'Hz':>5} | dropped s")
    for i, size in enumerate(args.sizes):
        height, width = (int(v) for v in size.split("x"))
        r = measure(height, width, args.fps, args.seconds, args.picture if i == 0 else None)
        cell = lambda k: f"{r[k][0]:5.1f} / {r[k][1]:5.1f}"  # noqa: E731
        print(f"{'2 x ' + size:>16} | {cell('act->obs')} | {cell('obs')} | {r['act'][0]:4.1f} / {r['act'][1]:4.1f} "
              f"| {cell('obs cpu')} | {cell('period')} | {r['Hz']:5.1f} | {r['dropped']:.2f}", flush=True)
    print(f"{'cameras':>16} | {'step cpu ms':>13} | {'render cpu ms':>13}  (lockstep)")
    for size in args.sizes:
        height, width = (int(v) for v in size.split("x"))
        r = cpu_cost(height, width, args.fps)
        print(f"{'2 x ' + size:>16} | {r['step'][0]:5.1f} / {r['step'][1]:5.1f} | {r['render'][0]:5.1f} / "
              f"{r['render'][1]:5.1f}", flush=True)
    print(f"load: {os.getloadavg()[0]:.1f} (1 min) at the end")


if __name__ == "__main__":
    main()
