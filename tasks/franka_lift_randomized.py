"""FrankaLiftRandomized-v1: FrankaLift-v1 with the cube, the robot, the lights and the camera
randomized per env (domain randomization for sim-to-real transfer).

Goal, spawn area, success, reward and observations are FrankaLift-v1's; the scripted
``LiftExpert`` runs unchanged. Randomized, per env, from each env's own seeded stream
(``simulo_envs/envs/randomization.py``), with the ranges of ``FrankaLiftRandomizedConfig``:

- cube edge: 0.05 m x U(0.8, 1.2), i.e. 0.04-0.06 m, drawn when the scene is built (at
  creation and on ``reset(options={"reconfigure": True})``) and when an env is reset with a
  seed (its cube alone is rebuilt): each env builds its own cube, resting on the ground
  (``Prop.set_scale``), so geometry never changes during an episode;
- cube mass U(0.03, 0.15) kg, friction (static = dynamic) U(0.5, 1.5), colour RGB U(0.1, 1.0)
  per channel: every reset;
- robot PD drives: stiffness and damping x LogUniform(0.7, 1.4), per joint: every reset;
- lighting: directional intensity U(0.5, 1.5), colour U(0.8, 1.0) per channel, direction
  default + U(-0.3, 0.3) per component (renormalised), ambient U(0.2, 0.4): every reset;
- sensor camera ``base_camera``: position jitter U(-0.02, 0.02) m and rotation jitter
  U(-0.05, 0.05) rad per axis (camera frame): every reset.

Visual entries only show where the env renders; they are drawn in every env all the same, so the
physical draws of a seed never depend on the obs mode. ``info["privileged"]`` (float32 (N, 40))
holds every env's current values (labels: ``env.randomization.privileged_names``) for an
asymmetric actor-critic's critic; the policy's observation does not include them.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulo_envs.envs.randomization import LogUniform, Randomize, Uniform
from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.franka_lift import FrankaLiftConfig, FrankaLiftEnv


@dataclass(frozen=True)
class FrankaLiftRandomizedConfig(FrankaLiftConfig):
    """FrankaLift-v1's config plus the randomization table (units in the comments)."""

    randomization: tuple = (
        Randomize("block.scale", Uniform(0.8, 1.2), when="startup"),          # x 0.05 m cube edge
        Randomize("block.mass", Uniform(0.03, 0.15)),                         # kg
        Randomize("block.friction", Uniform(0.5, 1.5)),                       # static = dynamic [-]
        Randomize("block.color", Uniform(0.1, 1.0)),                          # RGB
        Randomize("agent.robot.joint_stiffness", LogUniform(0.7, 1.4), operation="scale"),  # x 1e3 N/m, Nm/rad
        Randomize("agent.robot.joint_damping", LogUniform(0.7, 1.4), operation="scale"),    # x 1e2 Ns/m, Nms/rad
        Randomize("lights.intensity", Uniform(0.5, 1.5)),                     # x colour
        Randomize("lights.color", Uniform(0.8, 1.0)),                         # RGB
        Randomize("lights.direction", Uniform(-0.3, 0.3), operation="add"),   # world frame, renormalised
        Randomize("lights.ambient", Uniform(0.2, 0.4)),                       # RGB
        Randomize("sensor_cameras.base_camera.pose_jitter",                   # [m, m, m, rad, rad, rad]
                  Uniform([-0.02] * 3 + [-0.05] * 3, [0.02] * 3 + [0.05] * 3)),
    )


@register_env("FrankaLiftRandomized-v1", max_episode_steps=FrankaLiftRandomizedConfig.max_episode_steps)
class FrankaLiftRandomizedEnv(FrankaLiftEnv):
    """FrankaLift-v1 under domain randomization (see the module docstring)."""

    cfg = FrankaLiftRandomizedConfig()
    default_randomization = cfg.randomization
