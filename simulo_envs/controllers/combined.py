"""``CombinedController``: several joint controllers (arm, gripper) behind one flat action.

When every part is a joint-position controller, the per-controller maps (normalisation, mimic,
delta, limits) are all affine, so they are fused
at construction into one map evaluated with five tensor operations per step, whatever the
number of controllers:

    targets = clamp(bias + action * scale)[:, action_of_joint] + qpos * is_delta, low, high)

(written out in ``set_action``). ``JointPosController.targets`` is the readable reference the
fused map is tested against. With an end-effector part (``EEPoseConfig``) each part computes
its own joints' targets in turn.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch
from gymnasium import spaces

from simulo_envs.controllers.ee import EEPoseConfig, EEPoseController
from simulo_envs.controllers.joint import JointPosConfig, JointPosController
from simulo_envs.tensors import all_finite


class CombinedController:
    """Concatenates the action slices of named controllers, in mapping order.

    Args:
        configs: name -> ``JointPosConfig`` (e.g. ``{"arm": ..., "gripper": ...}``).
        robot: the attached ``Robot``.

    The action ``(N, action_dim)`` is split in mapping order; joints no controller drives keep
    their previous targets.

    Raises:
        ValueError: two controllers drive the same joint.
    """

    def __init__(self, configs: Mapping[str, object], robot, env_origins: torch.Tensor = None):
        self.robot = robot
        self.controllers = {
            name: EEPoseController(cfg, robot, env_origins) if isinstance(cfg, EEPoseConfig) else JointPosController(cfg, robot)
            for name, cfg in configs.items()
        }
        self._fused = all(isinstance(c, JointPosController) for c in self.controllers.values())
        if not self._fused:
            self._init_generic(robot)
            return
        dof = robot.dof
        scale, bias, action_of_joint, joints = [], [], [], []
        is_delta = torch.zeros(dof)
        low = torch.full((dof,), -float("inf"))
        high = torch.full((dof,), float("inf"))
        start = 0
        self.slices = {}
        for name, ctrl in self.controllers.items():
            cfg = ctrl.config
            self.slices[name] = (start, start + ctrl.action_dim)
            if cfg.normalize_action:  # [-1, 1] -> [lo, hi]: lo + (a + 1) (hi - lo) / 2
                half = 0.5 * (ctrl.target_high - ctrl.target_low)
                scale.append(half)
                bias.append(ctrl.target_low + half)
            else:  # the action in other units: offset + scale * a (identity by default)
                scale.append(torch.full((ctrl.action_dim,), cfg.action_scale))
                bias.append(torch.full((ctrl.action_dim,), cfg.action_offset))
            for k, j in enumerate(ctrl.joint_index.tolist()):
                if j in joints:
                    raise ValueError(f"joint {robot.joint_names[j]!r} is driven by two controllers")
                joints.append(j)
                action_of_joint.append(start if cfg.mimic else start + k)
                if cfg.use_delta:
                    is_delta[j] = 1.0
                    low[j], high[j] = ctrl.qlim_low[k], ctrl.qlim_high[k]
            start += ctrl.action_dim
        self.action_dim = start
        self.action_low = torch.cat([c.action_low for c in self.controllers.values()]).to(torch.float32)
        self.action_high = torch.cat([c.action_high for c in self.controllers.values()]).to(torch.float32)
        self._scale = torch.cat(scale).to(torch.float32)
        self._bias = torch.cat(bias).to(torch.float32)
        self._columns = torch.tensor(joints, dtype=torch.long)
        self._all_joints = sorted(joints) == list(range(dof))
        # Column k of the fused map is joint self._columns[k].
        order = self._columns
        self._action_of_column = torch.tensor(action_of_joint, dtype=torch.long)
        self._is_delta = is_delta[order].to(torch.float32)
        self._any_delta = bool(self._is_delta.any())
        self._low = low[order].to(torch.float32)
        self._high = high[order].to(torch.float32)
        self._identity_order = self._all_joints and order.tolist() == list(range(dof))
        # The same map as numpy arrays: on CPU a numpy op costs a fraction of a torch op on (N, 9).
        self._np = {k: getattr(self, k).numpy() for k in ("_scale", "_bias", "_action_of_column", "_is_delta",
                                                          "_low", "_high", "_columns")}
        for k in self._np:  # the torch path runs on the robot's device (physx_cuda)
            setattr(self, k, getattr(self, k).to(robot._device))

    @property
    def _array_sink(self):
        """``_set_checked_array`` when this controller maps numpy actions itself (every part a
        joint-position controller, the controlled joints in qpos order, the robot on the CPU),
        else None: what ``BaseEnv.step`` hands its checked numpy action to on the CPU."""
        if self._fused and self._identity_order and self.robot._device.type == "cpu":
            return self._set_checked_array
        return None

    def _set_checked_array(self, action: np.ndarray) -> None:
        """``_set_checked_action`` on the CPU for the fused map in qpos order: ``action`` a float32
        numpy ``(N, action_dim)`` already known finite and clipped (numpy ops on such small arrays
        cost a fraction of torch's)."""
        m, robot = self._np, self.robot
        targets = (m["_bias"] + action * m["_scale"])[:, m["_action_of_column"]]
        if self._any_delta:
            targets += robot._array("qpos") * m["_is_delta"]
        np.minimum(np.maximum(targets, m["_low"], out=targets), m["_high"], out=targets)  # clip, cheaper
        robot._set_drive_targets_trusted(targets)

    def _init_generic(self, robot) -> None:
        self.slices, start = {}, 0
        for name, ctrl in self.controllers.items():
            self.slices[name] = (start, start + ctrl.action_dim)
            start += ctrl.action_dim
        self.action_dim = start
        self.action_low = torch.cat([c.action_low for c in self.controllers.values()]).to(torch.float32)
        self.action_high = torch.cat([c.action_high for c in self.controllers.values()]).to(torch.float32)

    def reset(self, env_ids: torch.Tensor) -> None:
        """Reset the state of stateful parts (EE targets) for ``env_ids`` after a reset of those envs."""
        for ctrl in self.controllers.values():
            if hasattr(ctrl, "reset"):
                ctrl.reset(env_ids)

    def single_action_space(self) -> spaces.Box:
        """The per-env action space: ``Box(action_low, action_high)``, float32."""
        return spaces.Box(self.action_low.numpy().astype(np.float32), self.action_high.numpy().astype(np.float32),
                          dtype=np.float32)

    def compute_targets(self, action: torch.Tensor, qpos: torch.Tensor) -> torch.Tensor:
        """Drive targets ``(N, len(columns))`` for the controlled joints, in ``self._columns`` order,
        from a clipped action ``(N, action_dim)`` and the current ``qpos`` ``(N, dof)``."""
        targets = torch.addcmul(self._bias, action, self._scale)[:, self._action_of_column]
        if self._any_delta:
            q = qpos if self._identity_order else qpos[:, self._columns]
            targets = targets + q * self._is_delta
        return torch.clamp(targets, self._low, self._high)

    def set_action(self, action: torch.Tensor) -> None:
        """Write drive targets for every env from a clipped action ``(N, action_dim)``.

        Raises:
            ValueError: NaN or inf in ``action``; no target is written.
        """
        if action.device.type == "cpu":
            finite = all_finite(action.detach().numpy())
        else:
            finite = bool(torch.isfinite(action).all())
        if not finite:
            raise ValueError("controller action contains NaN or inf; no drive target was written")
        self._set_checked_action(action)

    def _set_checked_action(self, action: torch.Tensor) -> None:
        """``set_action`` for an action already known finite: float32 ``(N, action_dim)`` on the
        robot's device, clipped to ``[action_low, action_high]`` (what ``BaseEnv.step`` hands over
        after its own checks, so the step does not test the same entries twice)."""
        robot = self.robot
        if not self._fused:
            if action.is_cpu:  # numpy views: a fraction of torch's per-call cost
                action, qpos, targets = action.numpy(), robot._array("qpos"), robot._array("drive_targets")
            else:
                qpos, targets = robot.state.qpos, robot.state.drive_targets
            for (a, b), ctrl in zip(self.slices.values(), self.controllers.values()):
                columns = ctrl.joint_index.numpy() if isinstance(targets, np.ndarray) else ctrl.joint_index
                targets[:, columns] = ctrl.targets(action[:, a:b], qpos)
            robot._set_drive_targets_trusted(targets)
            return
        if action.is_cpu and self._identity_order:
            self._set_checked_array(action.numpy())
            return
        state = robot.state
        targets = self.compute_targets(action, state.qpos if self._any_delta else None)
        if not self._identity_order:
            full = state.drive_targets
            full[:, self._columns] = targets
            targets = full
        robot._set_drive_targets_trusted(targets.detach())
