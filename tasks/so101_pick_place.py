"""SO101PickPlace-v1: carry a cube to a goal point in the air with LeRobot's SO-101 arm.

SO100PickPlace-v1 (``tasks/so100_pick_place.py``) with the SO-101 (``agents/so101.py``): the
same 25 mm cube and its spawn region, the goal point (x in 0.265 +- 0.03, y in 0 +- 0.08, z in
[0.04, 0.10] env-local metres, drawn for people only), success (the cube's centre within 15 mm
of the goal), fail (outside the reachable ring), 80 steps and the 36-float state observation.
The arm carries a wrist camera (``wrist_camera``) beside the task's front camera.

Dense reward = ``reach + grasp + lift + place + place_fine`` terms (weights in the config, 5.5 in
all), ``success_reward`` (10) on success, 0 on fail; ``normalized_dense = dense / success_reward``
in [0, 1]: a success step pays 1, any other step at most 0.55.

- ``reach = 1 - tanh(reach_scale * |tcp - cube|)`` and ``grasp`` (1 while grasped): SO100PickPlace-v1's;
- ``lift = grasped * max(0, 1 - |goal z - cube z| / (goal z - rest z))``, ``rest z`` the resting
  cube centre's height (12.5 mm): 0 on the floor, rising linearly to 1 at the goal's height and
  falling off alike above it;
- ``place = grasped * lifted * (1 - tanh(place_scale * |cube - goal|))``, where ``lifted``: the
  cube's bottom at least ``lift_clearance`` above the floor (Isaac Lab's lift-to-goal reward
  likewise tracks the goal only once the object is lifted);
- ``place_fine``: the same with ``place_fine_scale`` (50 /m) instead of 10 /m, as Isaac Lab's
  fine-grained tracking term beside its coarse one.

Why: every goal is above the floor. With SO100PickPlace-v1's reward (the place term paid while the
cube was grasped, wherever it was) PPO policies held the cube pressed to the floor. With a lift
term ``1 - tanh(20 * max(goal z - cube z, 0))``, a place term alone and a success paying 5 of a
4.5 maximum, a policy held the cube 15-26 mm from the goal, above it (no loss above the goal's
height, little gain nearer than 20 mm): 0.78 evaluation success against 0.99 in training, where
action noise carried the cube into the 15 mm radius. The linear lift term is steeper near the
floor for the high goals, the two-sided one has no side to prefer, the fine term rises 0.3 from
20 to 10 mm, and a success pays about twice hovering beside the goal. ``docs/training_so_arms.md``
has the measurements. Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.tasks.franka_pick_place import place_reward_terms
from simulo_envs.tasks.so100_pick_place import SO100PickPlaceConfig, SO100PickPlaceEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO101PickPlaceConfig(SO100PickPlaceConfig):
    """SO100PickPlace-v1's tunables (the reach term's and ``place_scale``) plus the lift term, the
    place terms' lift gate and the fine place term; env-local metres. The weights sum to 5.5,
    ``success_reward`` is 10: a step at the goal pays about twice what any step short of it does."""

    lift_weight: float = 1.0        # lift term: the held cube's height, rising linearly to 1 at the goal's
    lift_clearance: float = 0.01    # place terms only while the cube's bottom is this far above the floor [m]
    place_weight: float = 1.5
    place_fine_scale: float = 50.0  # fine place term = grasped * lifted * (1 - tanh(place_fine_scale * |cube - goal|)) [1/m]
    place_fine_weight: float = 1.0
    success_reward: float = 10.0    # dense reward on success; also the normaliser


@register_env("SO101PickPlace-v1", max_episode_steps=SO101PickPlaceConfig.max_episode_steps)
class SO101PickPlaceEnv(SO100PickPlaceEnv):
    """Carry a cube to a goal point with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101PickPlaceConfig()
    xp_hooks = True  # the reward below computes with self.xp alone

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + lift + place terms (module docstring), ``success_reward`` on success, 0
        on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        grasped = as_float32(info["is_grasped"])
        terms = place_reward_terms(xp, k, info["tcp_to_cube"], info["cube_to_goal"], grasped)
        distance = norm(info["cube_to_goal"])
        height = self.local(info["cube_pose"])[:, 2]  # the cube centre's height above the floor [m]
        goal_height = height + info["cube_to_goal"][:, 2]
        rest = k.cube_size / 2  # the cube's centre resting on the floor [m]
        lift = 1 - xp.abs(goal_height - height) / (goal_height - rest)  # 0 on the floor, 1 at the goal's height
        lift = grasped * xp.where(lift > 0, lift, 0.0)
        lifted = as_float32(height >= rest + k.lift_clearance)
        place_fine = grasped * lifted * (1 - xp.tanh(distance * k.place_fine_scale))
        info["reward_terms"] = {"reach": terms["reach"], "grasp": terms["grasp"], "lift": lift,
                                "place": terms["place"] * lifted, "place_fine": place_fine}
        dense = xp.where(info["fail"], 0.0, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["success"], k.success_reward, dense)
