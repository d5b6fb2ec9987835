"""``ActionConverter``: actions of a joint-position control mode that follow given drive targets.

Converting a recorded trajectory into another control mode (``scripts/replay.py``): a *source*
env replays the recorded actions in the recorded mode (e.g. ``pd_ee_delta_pos``, whose IK
controller turns each action into joint drive targets); after each of its steps the converter
reads the drive targets that controller set and writes the action of the *target* mode that sets
the same targets in the target env, from the target env's own joint positions (closed loop):

- absolute joint position control (``pd_joint_pos``): the targets themselves (clipped to the
  action bounds, the joint limits);
- delta joint position control (``pd_joint_delta_pos``): ``target - qpos`` of the target env,
  scaled to the action range (``[-1, 1]`` <-> ``[lower, upper]`` rad per step) and clipped;
  a step that would need more than the bound moves by the bound (``reachable`` tells the two
  apart; ``follow.Follower`` then follows the recorded states over extra steps);
- a mimic part (the parallel gripper, one action for both fingers): the first finger's target,
  normalised as the controller's config says;
- actions in other units than the joints' (``action_scale``, ``action_offset``: the SO-100's
  ``pd_joint_pos_lerobot`` in degrees): ``(target - action_offset) / action_scale``.

The inverse is read from the target agent's controller configs (``JointPosConfig``: joints,
bounds, ``use_delta``, ``normalize_action``, ``mimic``), so it works for any agent whose target
mode is built of joint-position parts. Cartesian target modes (``pd_ee_*``) are not converted
into: the source's TCP targets would have to be re-expressed through the target's IK.
"""

from __future__ import annotations

import numpy as np
import torch


class ActionConverter:
    """Target-mode actions reproducing drive targets (module docstring).

    Args:
        target_env: the in-process env (``BaseEnv``) in the target control mode.

    Raises:
        NotImplementedError: the target mode has a part that is not joint-position control.
    """

    def __init__(self, target_env):
        base = target_env.unwrapped
        controller = base.agent.controller
        parts = getattr(controller, "controllers", None)
        if not isinstance(parts, dict):
            raise NotImplementedError(f"control mode {base.control_mode!r}: its controller has no parts to invert")
        self.env = base
        self.parts = []
        for name, ctrl in parts.items():
            cfg = getattr(ctrl, "config", None)
            if cfg is None or not hasattr(cfg, "use_delta") or not hasattr(ctrl, "target_low"):
                raise NotImplementedError(
                    f"converting into control mode {base.control_mode!r} is not supported: its part {name!r} is not "
                    "joint position control (target modes built of joint position parts only, e.g. pd_joint_pos, "
                    "pd_joint_delta_pos)")
            start, stop = controller.slices[name]
            self.parts.append((start, stop, ctrl.joint_index.cpu().numpy(), ctrl.target_low.cpu().numpy(),
                               ctrl.target_high.cpu().numpy(), ctrl.action_low.cpu().numpy(),
                               ctrl.action_high.cpu().numpy(), cfg))
        self.action_dim = controller.action_dim
        self.followed = np.array(sorted({int(j) for _, _, joints, *_, cfg in self.parts if cfg.use_delta
                                         for j in joints}), dtype=np.int64)
        """int64 (k,): the joints of delta parts (empty for absolute modes): those whose recorded
        motion a step may be too fast to reproduce (``follow.Follower``)."""

    def _raw(self, targets: np.ndarray, qpos: np.ndarray):
        """Per part: ``(start, stop, unclipped action, action_low, action_high)``."""
        for start, stop, joints, low, high, action_low, action_high, cfg in self.parts:
            wanted = targets[:, joints[:1]] if cfg.mimic else targets[:, joints]
            raw = wanted - qpos[:, joints[:1] if cfg.mimic else joints] if cfg.use_delta else wanted
            if cfg.normalize_action:  # the controller maps [-1, 1] onto [low, high]
                raw = 2.0 * (raw - low) / (high - low) - 1.0
            else:  # actions in other units: target = action_offset + action_scale * action
                raw = (raw - getattr(cfg, "action_offset", 0.0)) / getattr(cfg, "action_scale", 1.0)
            yield start, stop, raw, action_low, action_high, cfg

    def reachable(self, targets: np.ndarray, qpos: np.ndarray, tolerance: float = 1e-4) -> np.ndarray:
        """bool ``(N,)``: one target-mode step from ``qpos`` sets ``targets`` (no delta part's
        action is clipped; absolute parts always count as reachable)."""
        out = np.ones(targets.shape[0], dtype=bool)
        for _, _, raw, low, high, cfg in self._raw(targets, qpos):
            if cfg.use_delta:
                out &= ((raw >= low - tolerance) & (raw <= high + tolerance)).all(axis=1)
        return out

    def actions(self, targets: np.ndarray, qpos: np.ndarray) -> np.ndarray:
        """float32 ``(N, action_dim)``: the target-mode actions whose drive targets are ``targets``
        ``(N, dof)`` from the target env's current ``qpos`` ``(N, dof)`` (module docstring)."""
        out = np.zeros((targets.shape[0], self.action_dim), np.float32)
        for start, stop, raw, action_low, action_high, _ in self._raw(targets, qpos):
            out[:, start:stop] = np.clip(raw, action_low, action_high)
        return out

    def hold_targets(self) -> np.ndarray:
        """float32 ``(N, dof)``: every env's current drive targets (a copy)."""
        return self.env.agent.robot.state.drive_targets.cpu().numpy().copy()

    def hold(self) -> np.ndarray:
        """The actions that keep every env's current drive targets (for idle envs)."""
        state = self.env.agent.robot.state
        return self.actions(state.drive_targets.cpu().numpy(), state.qpos.cpu().numpy())


def drive_targets(env) -> np.ndarray:
    """float32 ``(N, dof)``: the drive targets ``env``'s controller last wrote."""
    return env.unwrapped.agent.robot.state.drive_targets.cpu().numpy()


def joint_positions(env) -> np.ndarray:
    """float32 ``(N, dof)``: ``env``'s current joint positions."""
    return env.unwrapped.agent.robot.state.qpos.cpu().numpy()


def as_tensor(actions: np.ndarray, env) -> torch.Tensor:
    """``actions`` (N, A) as a contiguous float32 tensor on ``env``'s device."""
    return torch.from_numpy(np.ascontiguousarray(actions, dtype=np.float32)).to(env.unwrapped.device)
