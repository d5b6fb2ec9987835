"""SO101Stack-v1: stack the cube of one colour named on the cube of the other, and let go, with
LeRobot's SO-101 arm (SO100Stack-v1: the same with the SO-100).

Scene: the arm's base at the env origin facing +x; cube A (to move) and cube B (the base), both
25 mm and 10 g; ``distractors`` more cubes. Instruction: "Stack the red cube on the green cube."
(the episode's colours and shape).

Randomisation per reset env (env-local metres): A, B and the distractors in the ring sector
0.19-0.30 m from the base at bearings within +-0.5 rad, apart from each other (clearance 0.02 m
each, plus 0.01 m), upright, facing the base; then distinct colours from red, green, blue, yellow;
the robot returns to its rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, one distractor);
``"heldout"``: colours orange, purple, cyan, pink; cylinders instead of cubes (flat ends up);
two distractors; everything in the side sectors at bearings 0.55-0.9 rad, 0.19-0.31 m out.
``"heldout_<axis>"`` changes one axis.

Success (the stack stands at the episode's last step only if it holds): A's centre within
``xy_tolerance`` (12 mm) of B's in the plane and one cube height (+- ``z_tolerance``, 5 mm)
above it; B still upright on the table (its centre at most ``z_tolerance`` above half its
height); A not grasped (the gripper let go); A and B slower than ``static_speed``. Fail: A's or
B's centre left the reachable ring (planar distance outside [0.08, 0.40] m). The episode
terminates on either; it is truncated after ``max_episode_steps`` (100).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), A pose (7), B pose (7),
all env-local; TCP-to-A (3) and A-to-place (3, from A to its resting place on B) vectors,
is_grasped (1) -> 40 floats. (FrankaStack-v1's names: one expert drives both.)

Dense reward = ``reach + grasp + place + release`` terms (weights in the config),
``success_reward`` on success, 0 on fail; ``normalized_dense = dense / success_reward`` in
[0, 1]; sparse: +1 success, -1 fail. ``place`` pulls the grasped A to its resting place on B;
``release`` pays for letting go of A on B, which also keeps the earlier terms at their best.
Every term is in ``info["reward_terms"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm
from simulo_envs.tasks.so_suite import SuiteConfig, SuiteEnv


@dataclass(frozen=True)
class SO101StackConfig(SuiteConfig):
    """Every tunable of SO101Stack-v1, with units; env-local metres. The cubes, the reach ring and
    the reach term are ``SO100TableTopConfig``'s; colours, layout and the held-out variants
    ``SuiteConfig``'s."""

    distractors: int = 1
    xy_tolerance: float = 0.012     # success: A's centre this close to B's in the plane [m]
    z_tolerance: float = 0.005      # success: A one cube height +- this above B; B this close to resting [m]
    static_speed: float = 0.05      # success: A and B slower than this [m/s]
    place_scale: float = 10.0       # place term = grasped * (1 - tanh(place_scale * |A - its place on B|)) [1/m]
    grasp_weight: float = 1.0
    place_weight: float = 2.0
    release_weight: float = 1.0     # release term = A on B and not grasped
    success_reward: float = 6.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100


@register_env("SO101Stack-v1", max_episode_steps=SO101StackConfig.max_episode_steps)
class SO101StackEnv(SuiteEnv):
    """Stack cube A on cube B with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101StackConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the ground
        self.cube_a = self.add_object("CubeA")
        self.cube_b = self.add_object("CubeB")
        self.distractors = self.add_distractors()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cubes = [self.cube_a, self.cube_b] + self.distractors
        self.layout(env_idx, [(c, self.cfg.object_clearance) for c in cubes])
        self.draw_colors(env_idx, len(cubes))
        for role, prop in enumerate(cubes):
            self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped, a_on_b bool (N,); A/B/tcp poses (N, 7), tcp_to_a and
        a_to_place (N, 3), world frame."""
        k, xp = self.k, self.xp
        a_state, b_state = self.cube_a.state_in(xp), self.cube_b.state_in(xp)
        a_pose, b_pose, tcp_pose = a_state.pose, b_state.pose, self.tcp_pose()
        a_to_place = b_pose[:, :3] - a_pose[:, :3]
        a_to_place[:, 2] += k.cube_size
        a_on_b = (norm(a_to_place[:, :2]) <= k.xy_tolerance) & (abs(a_to_place[:, 2]) <= k.z_tolerance)
        b_standing = self.local(b_pose)[:, 2] - k.cube_size / 2 <= k.z_tolerance
        static = (norm(a_state.linear_velocity) < k.static_speed) & (norm(b_state.linear_velocity) < k.static_speed)
        grasped = self.agent.is_grasping(self.cube_a, xp=xp)
        return {
            "success": a_on_b & b_standing & ~grasped & static,
            "fail": self.out_of_reach(a_pose[:, :3]) | self.out_of_reach(b_pose[:, :3]),
            "is_grasped": grasped,
            "a_on_b": a_on_b,
            "a_pose": a_pose,
            "b_pose": b_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_a": a_pose[:, :3] - tcp_pose[:, :3],
            "a_to_place": a_to_place,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + place + release terms (weights in the config), ``success_reward`` on
        success, 0 on fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        info["reward_terms"] = self.pick_and_place_terms(info["tcp_to_a"], info["a_to_place"],
                                                         info["is_grasped"], info["a_on_b"])
        dense = xp.where(info["fail"], 0.0, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["success"], k.success_reward, dense)

    def instructions(self) -> list[str]:
        """"Stack the <colour> <shape> on the <colour> <shape>." per env (``SuiteEnv``)."""
        return [f"Stack the {a} {s} on the {b} {s}." for a, b, s in
                zip(self.color_names(0), self.color_names(1), self.shape_names(self.cube_a))]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "a_pose": self.local(info["a_pose"]),
            "b_pose": self.local(info["b_pose"]),
            "tcp_to_a": info["tcp_to_a"],
            "a_to_place": info["a_to_place"],
            "is_grasped": info["is_grasped"],
        }


@register_env("SO100Stack-v1", max_episode_steps=SO101StackConfig.max_episode_steps)
class SO100StackEnv(SO101StackEnv):
    """SO101Stack-v1 with the SO-100 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
