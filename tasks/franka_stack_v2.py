"""FrankaStack-v2: FrankaStack-v1 with a reward that also pays for opening the gripper on cube B.

Scene, randomisation, success, time limit and observations are FrankaStack-v1's
(``tasks/franka_stack.py``); only the dense reward differs. FrankaStack-v1 pays for letting go of
cube A only once the fingers have left it, and a policy that carries A onto B holds the gripper
shut (action -1) and never finds that out. This version adds an ``ungrasp`` term, paid while A
rests on B (``a_on_b``: within the success tolerances): ``(gripper action + 1) / 2`` clipped to
[0, 1], so opening the gripper there pays at once and in proportion (the gripper action is the
fingers' absolute target, -1 closed, +1 open).

Dense reward = ``reach + grasp + place + release + ungrasp`` (weights in the config; ``ungrasp``
and ``release`` 1.0 each), ``success_reward`` (7.0, the normaliser) on success;
``normalized_dense = dense / 7`` in [0, 1]. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.franka_stack import FrankaStackConfig, FrankaStackEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class FrankaStackV2Config(FrankaStackConfig):
    """FrankaStack-v1's tunables, plus the ``ungrasp`` term's weight; the success reward grows by it."""

    ungrasp_weight: float = 1.0     # ungrasp term = a_on_b * clip((gripper action + 1) / 2, 0, 1)
    success_reward: float = 7.0     # dense reward on success; also the normaliser


@register_env("FrankaStack-v2", max_episode_steps=FrankaStackV2Config.max_episode_steps)
class FrankaStackV2Env(FrankaStackEnv):
    """Stack cube A on cube B, paid for opening the gripper on B (see the module docstring)."""

    cfg = FrankaStackV2Config()
    xp_hooks = True  # the reward below computes with self.xp alone

    def compute_dense_reward(self, obs, action, info: dict):
        """FrankaStack-v1's terms plus ``ungrasp``; ``success_reward`` on success; float32 (N,).
        ``action`` None (``step(None)``: the previous targets held) pays no ``ungrasp``."""
        k, xp = self.k, self.xp
        super().compute_dense_reward(obs, action, info)   # fills info["reward_terms"] with v1's terms
        on_b = as_float32(info["a_on_b"])
        opening = 0 * on_b if action is None else xp.clip((action[:, -1] + 1) / 2, 0.0, 1.0)
        info["reward_terms"]["ungrasp"] = on_b * opening
        return xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))
