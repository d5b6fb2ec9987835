"""``CombinedController``: several joint controllers (arm, gripper) behind one flat action."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch
from gymnasium import spaces

from simulo_envs.controllers.joint import JointPosConfig, JointPosController


class CombinedController:
    """Concatenates the action slices of named controllers, in mapping order.

    Args:
        configs: name -> ``JointPosConfig`` (e.g. ``{"arm": ..., "gripper": ...}``).
        robot: the attached ``Robot``.

    The action ``(N, action_dim)`` is split in mapping order; joints no controller drives keep
    their previous targets.
    """

    def __init__(self, configs: Mapping[str, JointPosConfig], robot):
        self.robot = robot
        self.controllers = {name: JointPosController(cfg, robot) for name, cfg in configs.items()}
        bounds, start = {}, 0
        for name, ctrl in self.controllers.items():
            bounds[name] = (start, start + ctrl.action_dim)
            start += ctrl.action_dim
        self.slices = bounds
        self.action_dim = start
        self.action_low = torch.cat([c.action_low for c in self.controllers.values()]).to(torch.float32)
        self.action_high = torch.cat([c.action_high for c in self.controllers.values()]).to(torch.float32)
        self._columns = torch.cat([c.joint_index for c in self.controllers.values()])

    def single_action_space(self) -> spaces.Box:
        """The per-env action space: ``Box(action_low, action_high)``, float32."""
        return spaces.Box(self.action_low.numpy().astype(np.float32), self.action_high.numpy().astype(np.float32),
                          dtype=np.float32)

    def set_action(self, action: torch.Tensor) -> None:
        """Write drive targets for every env from a clipped action ``(N, action_dim)``."""
        state = self.robot.state
        qpos = state.qpos
        targets = state.drive_targets
        parts = [ctrl.targets(action[:, a:b], qpos) for (a, b), ctrl in zip(self.slices.values(), self.controllers.values())]
        targets[:, self._columns] = torch.cat(parts, dim=1)
        self.robot._set_drive_targets_trusted(targets)
