"""End-effector (Cartesian) control by batched damped-least-squares differential IK.

Each env step: the controller keeps a target TCP pose per env (world frame), moves it by the
action (delta modes) or sets it (absolute mode), and turns the TCP pose error into arm joint
targets with one damped-least-squares step over all envs at once (torch, batched):

    dq = J^T (J J^T + lambda^2 I)^-1 e        (Wampler 1986; Buss, "Introduction to inverse
                                               kinematics with Jacobian transpose, pseudoinverse
                                               and damped least squares methods", 2004, eq. 11)

``e`` is the position error [m] (and, unless the orientation is free, the rotation error as a
rotation vector [rad], world frame), ``J`` the TCP Jacobian in the world frame (``Robot.tcp_jacobian``:
the TCP link's Jacobian, moved to the TCP point when the robot's TCP is offset from its link). Joint targets are clipped to the
URDF limits. The Jacobian comes from the backend: on physx_cpu, SAPIEN's bundled Pinocchio
model, one C++ call per env. Measured on this 2-core machine
(``python tests/benchmarks/bench_jacobian.py``, microseconds per batched TCP Jacobian):

    num_envs   Pinocchio   pytorch_kinematics
           1         5.4               3697
          16        63.8               4089
          64       160.6               2745

``pytorch_kinematics`` pays a fixed ~3 ms of Python per call whatever the batch, which alone
would cap one env near 300 steps/s; Pinocchio is 17x (64 envs) to 680x (1 env) faster, so the
CPU backend uses it. A GPU backend would batch the Jacobian on the device instead.

Frames and actions (``normalize_action``: the action space is [-1, 1] mapped onto the bounds):

- ``pd_ee_delta_pos``: 3 numbers, a TCP translation in the world frame, at most ``pos_bound``
  (0.1 m) per step. With ``orientation="hold"`` the TCP orientation is held at its orientation
  at the last reset (the IK solves for the full pose); with ``orientation="free"`` the IK solves
  for the position only (the three position rows of ``J`` and ``e``), for arms with fewer than
  six joints that cannot hold every orientation anywhere: the DLS step is the minimum-norm joint
  motion that moves the TCP point, so the orientation changes only as that motion carries it
  (no null-space drift: the step lies in the row space of the position Jacobian).
- ``pd_ee_delta_pose``: 6 numbers, the translation as above, then a rotation vector of at most
  ``rot_bound`` (0.1 rad) per axis expressed in the TCP frame (the rotation is applied about the
  TCP's own current target axes: ``R_target <- R_target * exp(r)``).
- ``pd_ee_pose``: 6 numbers, the absolute TCP target: position in the env-local frame [m], then
  orientation as a rotation vector in the world frame [rad]; not normalised. An arm with fewer
  than six joints reaches such a target only where its joints allow it; elsewhere the DLS step
  converges to the least-squares compromise between position [m] and rotation [rad] errors.

The target is accumulated from step to step (so a constant action gives a constant TCP speed
despite PD tracking lag) but never leads the measured TCP by more than ``max_lead``
(position, m) so a blocked arm does not wind up. Rotation targets have no such bound: rotating
into a joint limit leaves a constant orientation error (no runaway), which the next opposite
rotation action removes. ``reset(env_ids)`` re-anchors the target of
those envs on their current TCP pose; every ``Robot.set_qpos`` does it for the envs it writes
(resets, ``set_state``, a user's teleport), so a target never describes the arm before a write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from simulo_envs.controllers.joint import joint_columns
from simulo_envs.geometry import quat_conj, quat_mul, quat_to_rotvec, rotvec_to_quat


@dataclass(frozen=True)
class EEPoseConfig:
    """Cartesian control of ``joint_names`` (the arm) through the robot's TCP.

    Attributes:
        ee_link: None (the robot's TCP, ``RobotSpec.tcp_link`` moved by ``tcp_offset``) or the
            name of the link whose origin is controlled.
        mode: ``"delta_pos"``, ``"delta_pose"`` or ``"pose"`` (see the module docstring).
        orientation: ``"hold"`` (the IK solves for the full pose) or ``"free"`` (position only;
            ``delta_pos`` mode, see the module docstring).
        pos_bound: max translation per step [m] (delta modes).
        rot_bound: max rotation per axis per step [rad] (``delta_pose``).
        damping: DLS damping lambda (same units as the error); 0.05 keeps steps bounded near
            singularities without visibly slowing tracking.
        max_lead: how far [m] the accumulated position target may run ahead of the TCP.
        pos_limit: bound [m] on absolute ``pose`` positions (env-local), and ``pi`` on rotations.
    """

    joint_names: Sequence[str]
    ee_link: Optional[str] = None
    mode: str = "delta_pos"
    pos_bound: float = 0.1
    rot_bound: float = 0.1
    damping: float = 0.05
    max_lead: float = 0.1
    pos_limit: float = 2.0
    orientation: str = "hold"

    def __post_init__(self) -> None:
        if self.mode not in ("delta_pos", "delta_pose", "pose"):
            raise ValueError(f"EEPoseConfig.mode must be 'delta_pos', 'delta_pose' or 'pose', got {self.mode!r}")
        if self.orientation not in ("hold", "free"):
            raise ValueError(f"EEPoseConfig.orientation must be 'hold' or 'free', got {self.orientation!r}")
        if self.orientation == "free" and self.mode != "delta_pos":
            raise ValueError(f"EEPoseConfig: orientation='free' applies to mode 'delta_pos' only, got {self.mode!r}")


class EEPoseController:
    """Runtime of an ``EEPoseConfig`` on an attached robot (see the module docstring)."""

    def __init__(self, config: EEPoseConfig, robot, env_origins: torch.Tensor):
        self.config = config
        self.robot = robot
        self.joint_index, self.qlim_low, self.qlim_high = joint_columns(robot, config.joint_names)
        self.origins = env_origins
        if config.mode == "delta_pos":
            self.action_low, self.action_high = -torch.ones(3), torch.ones(3)
        elif config.mode == "delta_pose":
            self.action_low, self.action_high = -torch.ones(6), torch.ones(6)
        else:
            p, r = config.pos_limit, torch.pi
            self.action_low = torch.tensor([-p, -p, -p, -r, -r, -r])
            self.action_high = torch.tensor([p, p, p, r, r, r])
        self.action_dim = self.action_low.shape[0]
        if config.ee_link is None:
            self._pose_fn, self._jacobian_fn = robot._tcp_raw, robot._tcp_jacobian_raw
        else:
            index = robot.link_index(config.ee_link)
            self._pose_fn = lambda: robot._raw("link_pose", index)
            self._jacobian_fn = lambda: robot._raw("link_jacobian", index)
        self.target = self._ee_pose(torch)
        robot._add_qpos_listener(self._on_qpos_write)
        # numpy views of the constant parameters and of the target, for the CPU path
        self._np = {"origins": self.origins.numpy() if self.origins is not None and self.origins.device.type == "cpu" else None,
                    "joint_index": self.joint_index.numpy(), "qlim_low": self.qlim_low.numpy(),
                    "qlim_high": self.qlim_high.numpy(),
                    "target": self.target.numpy() if self.target.device.type == "cpu" else None}
        device = self.target.device  # the robot's: constants for the torch path (physx_cuda)
        self._dev = {"joint_index": self.joint_index.to(device), "qlim_low": self.qlim_low.to(device),
                     "qlim_high": self.qlim_high.to(device)}

    def _ee_pose(self, xp):
        """The controlled frame's world pose (N, 7), fresh: a numpy array (``xp`` np) or a tensor
        on the robot's device."""
        pose = self._pose_fn()
        if xp is np:
            return pose.numpy() if isinstance(pose, torch.Tensor) else pose
        return torch.as_tensor(pose).to(self.robot._device)

    def _ee_jacobian(self, xp):
        jacobian = self._jacobian_fn()
        if xp is np:
            return jacobian.numpy() if isinstance(jacobian, torch.Tensor) else jacobian
        return torch.as_tensor(jacobian).to(self.robot._device)

    def reset(self, env_ids: torch.Tensor) -> None:
        """Re-anchor the target of ``env_ids`` (int64 (k,)) on their current TCP pose."""
        self.target[env_ids] = self._ee_pose(torch)[env_ids].to(self.target.device)

    def _on_qpos_write(self, env_ids: np.ndarray) -> None:
        self.reset(torch.from_numpy(env_ids))  # a teleported arm moves the anchor

    def targets(self, action, qpos):
        """Arm joint targets ``(N, len(joint_names))`` for a clipped action slice and the current
        qpos, numpy arrays (the CPU path) or torch tensors (returned as the same kind).

        The numpy path runs the same math as the torch one (``geometry`` takes both): on (N, 6)
        arrays a numpy call costs a fraction of a torch call, and the IK step is ~60 calls.
        """
        if isinstance(action, np.ndarray):
            return self._solve(action, qpos, self._np["target"], self._ee_pose(np), lambda: self._ee_jacobian(np), np)
        return self._solve(action, qpos, self.target, self._ee_pose(torch), lambda: self._ee_jacobian(torch), torch)

    def _solve(self, action, qpos, target, tcp, jacobian_fn, xp):
        """One DLS step, written against operations numpy and torch share; ``target`` (N, 7) is
        updated in place."""
        cfg = self.config
        if cfg.mode == "pose":
            target[:, :3] = action[:, :3] + self._origins(xp)
            target[:, 3:] = rotvec_to_quat(action[:, 3:6])
        else:
            lead = cfg.max_lead
            position = target[:, :3] + action[:, :3] * cfg.pos_bound
            target[:, :3] = xp.minimum(xp.maximum(position, tcp[:, :3] - lead), tcp[:, :3] + lead)
            if cfg.mode == "delta_pose":
                target[:, 3:] = quat_mul(target[:, 3:], rotvec_to_quat(action[:, 3:6] * cfg.rot_bound))
        columns = self._columns(xp)
        if cfg.orientation == "free":  # position rows only
            error = target[:, :3] - tcp[:, :3]
            jacobian = jacobian_fn()[:, :3][:, :, columns]
        else:  # the full pose: delta_pos keeps the orientation it had at reset
            rot_error = quat_to_rotvec(quat_mul(target[:, 3:], quat_conj(tcp[:, 3:])))
            error = xp.concatenate([target[:, :3] - tcp[:, :3], rot_error], 1)
            jacobian = jacobian_fn()[:, :, columns]
        # Contiguous rows: numpy picks its matmul kernel by strides, and the strides of a column
        # selection depend on the batch size; the IK of an env must not depend on its batch.
        jacobian = np.ascontiguousarray(jacobian) if xp is np else jacobian.contiguous()
        dq = dls_step(jacobian, error, cfg.damping)
        low, high = self._limits(xp)
        return xp.clip(qpos[:, columns] + dq, low, high)

    def _origins(self, xp):
        return self._np["origins"] if xp is np else self.origins

    def _columns(self, xp):
        return self._np["joint_index"] if xp is np else self._dev["joint_index"]

    def _limits(self, xp):
        if xp is np:
            return self._np["qlim_low"], self._np["qlim_high"]
        return self._dev["qlim_low"], self._dev["qlim_high"]


def dls_step(jacobian, error, damping: float):
    """Damped least squares: ``J^T (J J^T + damping^2 I)^-1 e`` for a batch (numpy or torch).

    Args:
        jacobian: (N, m, n). error: (N, m). damping: lambda.
    Returns:
        (N, n) joint increments.
    """
    jt = jacobian.transpose(0, 2, 1) if isinstance(jacobian, np.ndarray) else jacobian.transpose(1, 2)
    jjt = jacobian @ jt
    m = jjt.shape[-1]
    jjt[..., range(m), range(m)] += damping * damping
    xp = np if isinstance(jacobian, np.ndarray) else torch
    return (jt @ xp.linalg.solve(jjt, error[..., None]))[..., 0]
