"""PD joint-position controllers: actions become PD drive targets of a ``Robot``.

A controller owns a set of joints (by name) and maps its slice of the action to their drive
targets. PhysX's joint drives do the PD control; the gains live on the robot spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import math

import numpy as np
import torch


def joint_columns(robot, joint_names: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(index, lower, upper)``: the qpos columns of ``joint_names`` (int64) and their URDF
    limits (float32), for a controller of those joints.

    Raises:
        KeyError: a joint the robot does not have (the message lists the robot's joints).
    """
    names = robot.joint_names
    missing = [j for j in joint_names if j not in names]
    if missing:
        raise KeyError(f"robot {robot.name!r} has no joints {missing}; joints: {names}")
    index = torch.tensor([names.index(j) for j in joint_names], dtype=torch.long)
    limits = robot.qlimits[index].to(torch.float32)
    return index, limits[:, 0].clone(), limits[:, 1].clone()


@dataclass(frozen=True)
class JointPosConfig:
    """Position control of ``joint_names``.

    Attributes:
        joint_names: the joints this controller drives, in action order.
        lower / upper: action range in joint units (rad or m). For ``use_delta`` the range of the
            per-step increment; for absolute control ``None`` means the joint limits.
        use_delta: targets are ``current qpos + action`` (ManiSkill's ``use_target=False``) instead of
            the action itself.
        normalize_action: the action space is ``[-1, 1]`` and maps linearly onto ``[lower, upper]``.
        mimic: one action drives every joint in ``joint_names`` to the same target (a parallel gripper).
        action_scale / action_offset: without ``normalize_action``, the action is in other units
            than the joints': target = ``action_offset + action_scale * action`` (joint units),
            and the action space is ``[lower, upper]`` expressed in the action's units (a
            control mode in degrees: ``action_scale = pi / 180``). ``action_scale`` > 0.
    """

    joint_names: Sequence[str]
    lower: Optional[float]
    upper: Optional[float]
    use_delta: bool = False
    normalize_action: bool = True
    mimic: bool = False
    action_scale: float = 1.0
    action_offset: float = 0.0

    def __post_init__(self) -> None:
        if not (self.action_scale > 0 and math.isfinite(self.action_scale) and math.isfinite(self.action_offset)):
            raise ValueError(f"JointPosConfig: action_scale must be finite and > 0 and action_offset finite, got "
                             f"{self.action_scale!r}, {self.action_offset!r}")
        if self.normalize_action and (self.action_scale, self.action_offset) != (1.0, 0.0):
            raise ValueError("JointPosConfig: action_scale/action_offset apply without normalize_action only")


class JointPosController:
    """Runtime of one ``JointPosConfig`` on an attached robot.

    Args:
        config: the controller's settings.
        robot: the attached ``Robot``.
    Raises:
        KeyError: a joint name the robot does not have.
    """

    def __init__(self, config: JointPosConfig, robot):
        self.config = config
        self.joint_index, self.qlim_low, self.qlim_high = joint_columns(robot, config.joint_names)
        if config.lower is None or config.upper is None:
            if config.use_delta or config.mimic:
                raise ValueError("a delta or mimic controller needs explicit lower/upper bounds")
            low, high = self.qlim_low.clone(), self.qlim_high.clone()
        else:
            width = 1 if config.mimic else len(config.joint_names)
            low = torch.full((width,), float(config.lower))
            high = torch.full((width,), float(config.upper))
        self.target_low, self.target_high = low, high
        self.action_dim = low.shape[0]
        # numpy views of the constant parameters, for the CPU path of ``targets``
        self._numpy_params = tuple(t.numpy() for t in (self.target_low, self.target_high, self.qlim_low,
                                                       self.qlim_high, self.joint_index))
        # the same on the robot's device, for the torch path (physx_cuda)
        self._torch_params = tuple(t.to(robot._device) for t in (self.target_low, self.target_high, self.qlim_low,
                                                                 self.qlim_high, self.joint_index))
        if config.normalize_action:
            self.action_low = -torch.ones(self.action_dim)
            self.action_high = torch.ones(self.action_dim)
        else:
            self.action_low = (low - config.action_offset) / config.action_scale
            self.action_high = (high - config.action_offset) / config.action_scale

    def targets(self, action, qpos):
        """Drive targets ``(N, len(joint_names))`` from a clipped action slice ``(N, action_dim)``
        and the current ``qpos`` ``(N, dof)``; delta targets are clipped to the joint limits.
        Takes numpy arrays or torch tensors (and returns the same kind)."""
        cfg = self.config
        numpy = isinstance(action, np.ndarray)
        if numpy:
            low, high, qlo, qhi, index = self._numpy_params
        else:
            low, high, qlo, qhi, index = self._torch_params
        if cfg.normalize_action:
            action = low + (action + 1.0) * (0.5 * (high - low))
        elif (cfg.action_scale, cfg.action_offset) != (1.0, 0.0):
            action = cfg.action_offset + cfg.action_scale * action
        if cfg.mimic:
            return action[:, [0] * len(cfg.joint_names)]
        if cfg.use_delta:
            return (np if numpy else torch).clip(qpos[:, index] + action, qlo, qhi)
        return action
