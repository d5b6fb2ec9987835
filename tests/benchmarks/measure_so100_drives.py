"""Step responses of the SO-100's joint drives for candidate PD gains: the measurement behind
``agents/so100.py``'s ``ARM_DRIVE`` and ``GRIPPER_DRIVE``.

    python tests/benchmarks/measure_so100_drives.py [--stiffness 100 300 1000 3000] [--ratio 10 30 100]

For each stiffness ``k`` [Nm/rad] and ratio ``k / d`` (``d`` the damping [Nms/rad]), with the
force limits and joint speed limit of the agent (the servo's stall torque and rated speed; pass
``--no-speed-limit`` to measure without it), gravity on, at 100 Hz physics and 20 Hz
control, from the rest pose:

- ``step@1``: fraction of a 0.05 rad target step (the largest ``pd_joint_delta_pos`` step) done
  one control period (50 ms) later, worst arm joint, from the pose the arm settled in at rest;
  ``step@2`` two periods later;
- ``over``: largest overshoot of that step over 1 s, in % of the step;
- ``sag``: largest gap between target and joint angle [deg] after 1 s holding the rest pose
  (gravity against the drive), and holding the arm stretched out (shoulder_lift +0.6 rad);
- ``v1rad``: peak joint speed [rad/s] on a 1 rad step of the shoulder (the servo's rated no-load
  speed is 5.45 rad/s at 7.4 V, the agent's joint speed limit);
- ``grip``: control periods the gripper takes from open to within 0.05 rad of closed (no
  object), for the gripper drive of the same ``k`` and ratio.

Not a test: it prints one row per candidate.
"""

from __future__ import annotations

import argparse
import math

import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents import so100
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.robot import JointDrive


class _Bench(BaseEnv):
    """The SO-100 alone on the ground, in ``pd_joint_pos``."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
    default_control_mode = "pd_joint_pos"

    def _load_scene(self, options: dict) -> None:
        self.scene.add_ground()

    def _initialize_episode(self, env_idx, options: dict) -> None:
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        return {"success": torch.zeros(self.num_envs, dtype=torch.bool)}


def measure(stiffness: float, ratio: float, speed_limit: bool = True, armature: float = so100.ARMATURE) -> dict:
    """The figures of the module docstring for one candidate."""
    damping = stiffness / ratio
    speed = so100.SERVO_SPEED if speed_limit else None
    arm = JointDrive(stiffness, damping, so100.ARM_DRIVE.force_limit, speed, armature)
    grip = JointDrive(stiffness, damping, so100.GRIPPER_DRIVE.force_limit, speed, armature)
    saved = so100.SO100.drives
    so100.SO100.drives = (arm,) * len(so100.ARM_JOINTS) + (grip,)
    try:
        env = _Bench(num_envs=1, reward_mode="none")
    finally:
        so100.SO100.drives = saved
    robot = env.agent.robot
    rest = torch.tensor([so100.REST_QPOS])

    def run(target, steps):
        env.reset(seed=0)
        for _ in range(20):  # settle at rest under gravity first
            env.step(rest)
        out = [(robot.state.qpos[0].clone(), robot.state.qvel[0].clone())]
        for _ in range(steps):
            env.step(target)
            out.append((robot.state.qpos[0].clone(), robot.state.qvel[0].clone()))
        return out

    done1, done2, over = 1.0, 1.0, 0.0
    for j in range(len(so100.ARM_JOINTS)):
        target = rest.clone()
        target[0, j] += 0.05
        trace = run(target, 20)
        start = trace[0][0][j]  # the settled angle (a little below rest where gravity pulls)
        frac = [float((q[j] - start) / 0.05) for q, _ in trace[1:]]
        done1, done2 = min(done1, frac[0]), min(done2, frac[1])
        over = max(over, 100 * (max(frac) - 1))
    sag = 0.0
    for pose in (rest, rest + torch.tensor([[0.0, 0.6, 0.0, 0.0, 0.0, 0.0]])):
        env.reset(seed=0)
        env.agent.reset(qpos=pose)
        for _ in range(20):
            env.step(pose)
        sag = max(sag, math.degrees(float((robot.state.qpos[0, :5] - pose[0, :5]).abs().max())))
    target = rest.clone()
    target[0, 1] += 1.0
    speed = max(float(v[1].abs()) for _, v in run(target, 20))
    target = rest.clone()
    target[0, 5] = so100.GRIPPER_CLOSED
    trace = run(target, 20)[1:]
    grip_steps = next((k + 1 for k, (q, _) in enumerate(trace) if abs(float(q[5]) - so100.GRIPPER_CLOSED) < 0.05), None)
    env.close()
    return {"k": stiffness, "d": damping, "armature": armature, "step@1": done1, "step@2": done2, "over": over, "sag": sag,
            "v1rad": speed, "grip": grip_steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stiffness", type=float, nargs="+", default=[100.0, 300.0, 1000.0, 3000.0])
    parser.add_argument("--ratio", type=float, nargs="+", default=[10.0, 30.0, 100.0])
    parser.add_argument("--no-speed-limit", action="store_true", help="PhysX's default joint speed limit (100 rad/s)")
    parser.add_argument("--armature", type=float, nargs="+", default=[so100.ARMATURE],
                        help="joint armature [kg m^2] (the agent's: the servo's reflected rotor inertia)")
    args = parser.parse_args()
    print(f"force limits: arm {so100.ARM_DRIVE.force_limit} Nm, gripper {so100.GRIPPER_DRIVE.force_limit} Nm; "
          f"joint speed limit: {'none' if args.no_speed_limit else so100.SERVO_SPEED} rad/s")
    print(f"{'k':>7} {'d':>7} {'armat.':>7} {'step@1':>7} {'step@2':>7} {'over%':>6} {'sag deg':>8} {'v1rad':>7} {'grip':>5}")
    for k, ratio, armature in ((k, r, a) for k in args.stiffness for r in args.ratio for a in args.armature):
        m = measure(k, ratio, not args.no_speed_limit, armature)
        if True:
            print(f"{m['k']:7.0f} {m['d']:7.2f} {m['armature']:7.3f} {m['step@1']:7.3f} {m['step@2']:7.3f} {m['over']:6.1f} "
                  f"{m['sag']:8.3f} {m['v1rad']:7.2f} {m['grip']!s:>5}")


if __name__ == "__main__":
    main()
