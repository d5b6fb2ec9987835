"""``JointDrive``: a policy of one control mode driving an env in an absolute joint-target mode.

A real robot's LeRobot schema (``robot_units.py``) records joint targets in the robot's units
and replays them in the robot's control mode (the SO arms' ``pd_joint_pos_lerobot``: degrees,
gripper 0..100). The scripted experts act in ``pd_ee_delta_pos``. Recording an expert in that
schema therefore runs the env *in the robot's mode*, with the expert's actions turned into that
mode's actions before each step:

1. the expert's action (its mode's units, clipped to its action space) goes through a
   controller of the expert's mode built on the env's robot (``CombinedController`` of
   ``agent.controller_configs[mode]``; its IK reads the env's current state and keeps its own
   TCP target, re-anchored at every reset as the env's own controller would be), which gives
   the drive targets that mode would set now, in radians;
2. those targets become the env mode's action (``convert.ActionConverter``: ``(target -
   action_offset) / action_scale``, clipped to the action space);
3. the env steps with that action, and it is what the dataset records.

So the recorded actions are exactly the executed ones: replaying them in the recorded mode
reproduces the recorded states (bit for bit with one PhysX system per env), while the expert
still acts closed loop on the env it drives. The targets the env sets differ from step 1's by
the rounding of the unit conversion (float32, a few 1e-7 rad), which is what the recorded
episode shows.

Only absolute joint-position modes can be driven this way (a delta mode's targets depend on the
measured joints: ``expert_conversion.py`` converts into those).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from simulo_envs.controllers import CombinedController
from simulo_envs.datasets.convert import ActionConverter, as_tensor

__all__ = ["JointDrive"]


class JointDrive:
    """Turns actions of ``policy_mode`` into actions of ``env``'s own control mode (module
    docstring).

    Args:
        env: a batched in-process env (wrapped or not) in an absolute joint-position mode.
        policy_mode: a control mode of the env's agent (``agent.controller_configs``), the
            policy's.

    Raises:
        ValueError: ``policy_mode`` is not one of the agent's modes, or the env's mode has a
            delta or non-joint part.
    """

    def __init__(self, env, policy_mode: str):
        base = env.unwrapped
        agent = base.agent
        if policy_mode not in agent.controller_configs:
            raise ValueError(f"{type(agent).__name__} has no control mode {policy_mode!r}; it has "
                             f"{sorted(agent.controller_configs)}")
        try:
            converter = ActionConverter(base)
        except NotImplementedError as error:
            raise ValueError(f"cannot drive {base.control_mode!r} with {policy_mode!r} actions: {error}") from None
        if len(converter.followed):
            raise ValueError(f"cannot drive {base.control_mode!r} with {policy_mode!r} actions: its targets are deltas "
                             "from the measured joints (absolute joint-position modes only)")
        self.env = base
        self.policy_mode = policy_mode
        self._agent = None
        self._controller = None
        self._converter = converter

    def policy_env(self):
        """What a scripted expert reads of the env it drives (``PhaseExpert``): the env's
        ``num_envs``, ``device``, ``control_freq``, its agent's class, and ``policy_mode`` as the
        control mode. It has no ``get_info``: the expert acts on the info the env returns."""
        base = self.env
        view = SimpleNamespace(num_envs=base.num_envs, device=base.device, control_freq=base.control_freq,
                               control_mode=self.policy_mode, agent=None, agent_class=type(base.agent))
        view.unwrapped = view
        return view

    def _policy_controller(self) -> CombinedController:
        agent = self.env.agent
        if agent is not self._agent:  # built anew with the scene (a reconfiguring reset)
            self._controller = CombinedController(agent.controller_configs[self.policy_mode], agent.robot,
                                                  self.env.scene.env_origins)
            self._agent = agent
            self._converter = ActionConverter(self.env)
        return self._controller

    def __call__(self, action) -> torch.Tensor:
        """float32 ``(N, A)`` actions of the env's mode (on its device) for the policy's
        ``(N, A_policy)`` actions, from the env's current state (call it once per step, right
        before ``env.step``: the IK's TCP targets advance with every call)."""
        controller = self._policy_controller()
        robot = self.env.agent.robot
        action = action.detach().cpu().numpy() if isinstance(action, torch.Tensor) else np.asarray(action)
        action = np.clip(action.astype(np.float32), controller.action_low.numpy(), controller.action_high.numpy())
        state = robot.state
        qpos, targets = state.qpos, state.drive_targets
        if self.env.device.type == "cpu":  # the numpy path, as the env's own controller steps on CPU
            qpos, targets = qpos.numpy(), targets.numpy()
        else:
            action = torch.from_numpy(action).to(qpos.device)
        for (a, b), ctrl in zip(controller.slices.values(), controller.controllers.values()):
            columns = ctrl.joint_index.numpy() if isinstance(targets, np.ndarray) else ctrl.joint_index.to(qpos.device)
            targets[:, columns] = ctrl.targets(action[:, a:b], qpos)
        if isinstance(targets, torch.Tensor):
            qpos, targets = qpos.cpu().numpy(), targets.cpu().numpy()
        return as_tensor(self._converter.actions(np.asarray(targets, np.float32), np.asarray(qpos)), self.env)
