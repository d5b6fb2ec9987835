"""SO101OpenDrawer-v1: open the drawer of the colour named, of a small two-drawer chest, with
LeRobot's SO-101 arm.

Goal: a chest of two drawers side by side (``authoring.cabinet.drawer_chest``: 10 cm deep, 20 cm
wide, 5 cm tall, its front facing the arm; each drawer slides out up to 7 cm on a passive
prismatic joint) stands on the floor, a coloured label on its top above each drawer. Pull the
drawer under the label of the colour named open by at least ``open_distance`` (4 cm), leave the
other one shut, and let go of the handle. Each drawer has a horizontal bar handle 4.5 cm in front
of it: a jaw lowered between the bar and the drawer's face pulls it. Instruction: "Open the red
drawer." (the episode's colour).

Randomisation per reset env (env-local metres; the arm's base at the origin facing +x): the
chest's centre in the ring sector 0.36-0.39 m from the base at bearings within +-0.3 rad of +x,
turned to face the base; both drawers shut and at rest; which drawer is the target (left or
right, evenly); the distractors in the sector 0.14-0.34 m, +-1.2 rad, clear of the chest and of
the handles' paths; then the colours (the target's label, the other label, the distractors:
distinct, from the variant's set); the robot at its rest pose.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, square bar handles, no
distractor); ``"heldout"`` changes every axis: colours orange, purple, cyan, pink; round bar
handles; two distractors (cylinders; cubes in ``"heldout_distractors"``); the chest at bearings
of 0.5-0.75 rad either side. ``"heldout_<axis>"`` changes one axis.

Success: the target drawer open at least ``open_distance``, the other open less than
``wrong_open`` (1.5 cm), and the TCP at least ``release_distance`` (5 cm) from the target
handle's grip point (the handle let go): so it holds at the episode's last step. Fail: the other
drawer open ``wrong_open`` or more. Either terminates the episode; it is truncated after
``max_episode_steps`` (80).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7), chest root pose (7), the
target's and the other handle's grip points (3 + 3), all env-local; TCP-to-grip-point vector
(3); target and other drawer opening (1 + 1) [m] -> 37 floats, in every variant.

Dense reward = ``reach + open + release`` terms (weights in the config), ``success_reward`` on
success, 0 on fail: ``reach`` pulls the TCP to the target's grip point until the drawer is open
(then it stays 1), ``open`` is the target's opening as a fraction of ``open_distance``, ``release``
pays, once it is open, for the TCP's distance from the handle up to ``release_distance``.
``normalized_dense = dense / success_reward`` in [0, 1]; sparse: +1 success, -1 fail. Every term
is in ``info["reward_terms"]``.

SO100OpenDrawer-v1 is the same task with the SO-100 arm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import torch

from simulo_envs.articulated_prop import ArticulatedProp
from simulo_envs.authoring import Cuboid, Material, Physics, Pose
from simulo_envs.authoring.cabinet import drawer_chest
from simulo_envs.envs.registration import register_env
from simulo_envs.geometry import norm, quat_apply
from simulo_envs.prop import Prop
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region, SuiteConfig, SuiteEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO101OpenDrawerConfig(SuiteConfig):
    """Every tunable of SO101OpenDrawer-v1, with units; env-local metres. The reach ring and the
    reach term are ``SO100TableTopConfig``'s, the colours and the layout ``SuiteConfig``'s."""

    region: Region = Region((0.36, 0.39), (0.0, 0.3))  # where the chest's centre spawns
    distractor_region: Region = Region((0.14, 0.34), (0.0, 1.2))  # where distractors may lie
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2},
        "positions": {"region": Region((0.36, 0.39), (0.5, 0.75))},
    })
    depth: float = 0.10             # the chest's outer extents [m]
    width: float = 0.20
    height: float = 0.05
    travel: float = 0.07            # each drawer's joint range [m]
    handle_gap: float = 0.045       # the handle bar this far in front of the drawer's face [m]
    handle_length: float = 0.06     # the bar's length between the outsides of its standoffs [m]
    handle_bar: float = 0.008       # the bar's section [m]: square ("cube" shapes) or round ("cylinder")
    drawer_damping: float = 1.0     # the drawers' viscous damping [N s/m]
    chest_clearance: float = 0.115  # the chest's clearance radius in the layout (its half-diagonal) [m]
    label_size: tuple = (0.03, 0.07)  # the coloured label above each drawer, x (depth) by y [m]
    label_thickness: float = 0.001  # [m] (drawn only, no collision)
    wall_margin: float = 0.005      # a label's edge this far behind the chest's front edge [m]
    handle_clearance: float = 0.03  # distractors keep this much more than their own clearance off a handle's path [m]
    open_distance: float = 0.04     # success: the target drawer open at least this [m]
    wrong_open: float = 0.015       # fail: the other drawer open this much or more [m]
    release_distance: float = 0.05  # success: the TCP this far from the target's grip point [m]
    reach_weight: float = 1.0
    open_weight: float = 2.0        # open term = clamp(opening / open_distance, 0, 1)
    release_weight: float = 1.0     # release term = opened * clamp(|tcp - grip point| / release_distance, 0, 1)
    success_reward: float = 5.0     # dense reward on success; also the normaliser (the terms sum to at most 4)
    sensor_eye: tuple = (0.02, -0.30, 0.42)  # base_camera, env-local [m]: beside and above the arm, seeing the
    sensor_target: tuple = (0.30, 0.02, 0.0)  # labels, the handles and the jaw at them in every variant's positions
    sensor_fov: float = 1.1
    render_eye: tuple = (0.12, -0.52, 0.36)  # render() camera [m]: the arm and the chest from the side
    render_target: tuple = (0.30, 0.0, 0.03)
    render_fov: float = 0.9
    max_episode_steps: int = 80


@register_env("SO101OpenDrawer-v1", max_episode_steps=SO101OpenDrawerConfig.max_episode_steps)
class SO101OpenDrawerEnv(SuiteEnv):
    """Open the drawer of the colour named with the SO-101 (see the module docstring)."""

    SUPPORTED_ROBOTS = ("so101",)
    default_robot_uids = "so101"
    cfg = SO101OpenDrawerConfig()
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        super()._load_scene(options)  # the ground
        spec = drawer_chest("Chest", depth=cfg.depth, width=cfg.width, height=cfg.height, travel=cfg.travel,
                            handle_length=cfg.handle_length, handle_gap=cfg.handle_gap, handle_bar=cfg.handle_bar,
                            round_handle=cfg.shapes[0] == "cylinder", damping=cfg.drawer_damping)
        self.chest = self.scene.add(ArticulatedProp(spec), at="/World/Chest")
        size = (*cfg.label_size, cfg.label_thickness)
        self.labels = [self.scene.add(Prop(Cuboid(f"Label{i}", size, Pose([0.0, 0.0, cfg.height + size[2] / 2]),
                                                  Physics.kinematic(), Material(), collision=False)),
                                      at=f"/World/Label{i}") for i in range(2)]
        self.distractors = self.add_distractors()
        # Each drawer's grip point (its handle bar's centre) in the drawer link's frame; where the
        # grip points (drawers shut) and the labels lie in the chest's frame, one row per drawer.
        handle = next(s for s in spec.links[1].shapes if s.name == "handle")
        self.grip_local = torch.tensor(handle.pose.position, dtype=torch.float32)
        origins = torch.tensor([link.joint.origin.position for link in spec.links[1:]], dtype=torch.float32)
        self.handles_local = origins + self.grip_local
        self.labels_local = origins * torch.tensor([0.0, 1.0, 0.0])
        self.labels_local[:, 0] = -cfg.depth / 2 + cfg.label_size[0] / 2 + cfg.wall_margin
        self.target = torch.zeros(self.num_envs, dtype=torch.long)

    def _after_reconfigure(self, options: dict) -> None:
        self.grip_local = self.grip_local.to(self.device)
        self.handles_local = self.handles_local.to(self.device)
        self.labels_local = self.labels_local.to(self.device)
        self.target = self.target.to(self.device)
        self.outward = torch.tensor([-1.0, 0.0, 0.0], device=self.device)  # a drawer's way out, chest frame

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        cfg, count, origins = self.cfg, len(env_idx), self.env_origins[env_idx]
        chest = self.layout(env_idx, [(self.chest, cfg.chest_clearance)])[:, 0]
        self.chest.set_qpos(torch.zeros(count, 2, device=self.device), env_ids=env_idx)
        self.chest.set_qvel(torch.zeros(count, 2, device=self.device), env_ids=env_idx)
        self.target[env_idx] = (self.episode_rng.uniform(env_idx, 0.0, 1.0, device=self.device) < 0.5).long()
        yaw = torch.atan2(chest[:, 1] - origins[:, 1], chest[:, 0] - origins[:, 0])  # the chest faces the base
        chest_q = torch.stack([(yaw / 2).cos(), 0 * yaw, 0 * yaw, (yaw / 2).sin()], dim=1)
        for label, offset in zip(self.labels, self.labels_local):
            xyz = chest + quat_apply(chest_q, offset.expand(count, 3))
            self.place(label, env_idx, xyz[:, :2] - origins[:, :2], yaw)
        # Keep the distractors off the chest and off each handle's path (shut to fully open).
        shut = [chest + quat_apply(chest_q, offset.expand(count, 3)) for offset in self.handles_local]
        pulled = [xyz + quat_apply(chest_q, self.outward.expand(count, 3)) * cfg.travel for xyz in shut]
        path_clearance = cfg.object_clearance + cfg.handle_clearance
        self.layout(env_idx, [(prop, cfg.object_clearance) for prop in self.distractors],
                    fixed=torch.stack([chest, *shut, *pulled], dim=1),
                    fixed_clearance=[cfg.chest_clearance] + [path_clearance] * 4, region=cfg.distractor_region)
        self.draw_colors(env_idx, 2 + len(self.distractors))
        target = self.target[env_idx]
        for i, label in enumerate(self.labels):  # the target's label takes colour role 0, the other one role 1
            for role, ids in ((0, env_idx[target == i]), (1, env_idx[target != i])):
                if len(ids):
                    self.paint(label, ids, role)
        for role, prop in enumerate(self.distractors, start=2):
            self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail bool (N,); drawer_qpos (target, N x 1) and other_qpos (N, 1) [m]; chest/tcp
        poses (N, 7); handle_pos, other_handle_pos (grip points), tcp_to_handle, open_direction
        (unit, the drawers' way out) (N, 3), world frame."""
        k, xp = self.k, self.xp
        state = self.chest.state_in(xp)
        first = self.as_xp(self.target)[:, None] == 0
        grips = [pose[:, :3] + quat_apply(pose[:, 3:], self.as_xp(self.grip_local))
                 for pose in (state.link_pose("drawer0"), state.link_pose("drawer1"))]
        handle, other_handle = xp.where(first, grips[0], grips[1]), xp.where(first, grips[1], grips[0])
        qpos = state.qpos
        opening, other = xp.where(first, qpos[:, :1], qpos[:, 1:]), xp.where(first, qpos[:, 1:], qpos[:, :1])
        chest_pose, tcp_pose = state.root_pose, self.tcp_pose()
        tcp_to_handle = handle - tcp_pose[:, :3]
        released = norm(tcp_to_handle) >= k.release_distance
        wrong = other[:, 0] >= k.wrong_open
        return {
            "success": (opening[:, 0] >= k.open_distance) & ~wrong & released,
            "fail": wrong,
            "drawer_qpos": opening,
            "other_qpos": other,
            "chest_pose": chest_pose,
            "tcp_pose": tcp_pose,
            "handle_pos": handle,
            "other_handle_pos": other_handle,
            "tcp_to_handle": tcp_to_handle,
            "open_direction": quat_apply(chest_pose[:, 3:], self.as_xp(self.outward)),
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + open + release terms (module docstring), ``success_reward`` on success, 0 on
        fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        k, xp = self.k, self.xp
        opened = (info["drawer_qpos"][:, 0] / k.open_distance).clip(0, 1)
        done = as_float32(opened >= 1)
        distance = norm(info["tcp_to_handle"])
        reach = 1 - xp.tanh(distance * k.reach_scale)
        info["reward_terms"] = {
            "reach": done + (1 - done) * reach,
            "open": opened,
            "release": done * (distance / k.release_distance).clip(0, 1),
        }
        dense = xp.where(info["success"], k.success_reward, self.weighted_sum(info["reward_terms"]))
        return xp.where(info["fail"] & ~info["success"], 0.0, dense)

    def instructions(self) -> list[str]:
        """"Open the <colour> drawer." per env (``SuiteEnv``)."""
        return [f"Open the {color} drawer." for color in self.color_names(0)]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "chest_pose": self.local(info["chest_pose"]),
            "handle_pos": self.local(info["handle_pos"]),
            "other_handle_pos": self.local(info["other_handle_pos"]),
            "tcp_to_handle": info["tcp_to_handle"],
            "drawer_qpos": info["drawer_qpos"],
            "other_qpos": info["other_qpos"],
        }


@register_env("SO100OpenDrawer-v1", max_episode_steps=SO101OpenDrawerConfig.max_episode_steps)
class SO100OpenDrawerEnv(SO101OpenDrawerEnv):
    """SO101OpenDrawer-v1 with the SO-100 arm."""

    SUPPORTED_ROBOTS = ("so100",)
    default_robot_uids = "so100"
