"""What the table-top tasks share: a robot at the env origin on a ground plane, cubes that spawn
on the ground with their x-y randomised, the config's numbers for per-step math, env-local
observations and the dense reward as a weighted sum of named terms.

A task subclasses ``TableTopEnv`` and still reads top to bottom like the seed example: config
(a subclass of ``TableTopConfig`` where it has those fields), ``_load_scene`` (``super()`` adds the
ground, ``add_cube`` a cube, ``add_goal_marker`` a goal point), ``_initialize_episode``
(``spawn`` draws a prop's spawn, ``spawn_goal`` a goal's), ``evaluate``, ``compute_dense_reward``
(``weighted_sum`` of the terms), ``_get_obs_extra`` (``BaseEnv.local`` makes world poses
env-local; image obs modes keep of it only ``image_obs_extra``: the TCP pose, and the goal where
the cameras do not show it). Its step hooks compute with ``self.xp`` (torch, or numpy on the CPU fast path:
``BaseEnv.xp_hooks``, ``simulo_envs/envs/fast_step.py``); the helpers here serve both.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Optional

import torch

from simulo_envs.authoring import Cuboid, Material, Physics, Pose, Sphere
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.geometry import norm
from simulo_envs.prop import Prop
from simulo_envs.tensors import as_float32, numpy_constants, tensor_constants

RED = (0.85, 0.15, 0.1)
"""The colour of the cube a task is about (RGB in [0, 1])."""
GREEN = (0.1, 0.7, 0.2)
"""The colour of goals and second cubes (RGB in [0, 1])."""
GOAL_MARKER_COLOR = (0.1, 0.8, 0.2)
"""The colour of the goal point ``add_goal_marker`` draws (RGB in [0, 1])."""


@dataclass(frozen=True)
class TableTopConfig:
    """The tunables most table-top tasks share, with units; env-local metres. A task's config
    subclasses it, adds its own fields and restates the defaults it changes."""

    spawn_x: float = 0.5            # env-local spawn of the task's cube [m]
    spawn_y: float = 0.0
    x_range: float = 0.10           # +- x randomisation around the spawn [m]
    y_range: float = 0.20           # +- y randomisation around the spawn [m]
    reach_scale: float = 5.0        # reach term = 1 - tanh(reach_scale * distance to the target) [1/m]
    reach_weight: float = 1.0
    success_reward: float = 5.0     # dense reward on success; also the normaliser
    max_episode_steps: int = 100


class TableTopEnv(BaseEnv):
    """Base of the table-top tasks: a robot (the Panda unless a task names another in
    ``SUPPORTED_ROBOTS`` / ``default_robot_uids``; ``pd_joint_delta_pos`` by default) at each env's
    origin on a ground plane; a task sets ``cfg`` (a frozen dataclass of its numbers) and
    ``default_max_episode_steps`` and writes the hooks (module docstring)."""

    SUPPORTED_ROBOTS = ("panda", "panda_wristcam")  # the second: a hand camera too
    default_robot_uids = "panda"  # built by BaseEnv._load_agent
    default_control_mode = "pd_joint_delta_pos"
    cfg = TableTopConfig()
    image_obs_extra = ("tcp_pose",)  # image obs modes: the robot's own TCP; objects only with "+state"
    ground_color = None
    """The floor's RGB in [0, 1] in images (None: the renderer's grey)."""

    # ------------------------------------------------------------------ scene
    def _load_scene(self, options: dict) -> None:
        """The ground plane (at z = 0); a task adds its objects after ``super()._load_scene``.
        Nothing is hidden from sensors yet (``hide``)."""
        self.scene.add_ground(color=self.ground_color)

    def add_cube(self, name: str, size: float, mass: float, color=RED, xy: Optional[tuple] = None) -> Prop:
        """A cube prop at ``/World/<name>``: edge ``size`` [m], ``mass`` [kg], resting upright on the
        ground at env-local ``xy`` [m] (default ``(cfg.spawn_x, cfg.spawn_y)``), RGB ``color``."""
        x, y = (self.cfg.spawn_x, self.cfg.spawn_y) if xy is None else xy
        cube = Prop(Cuboid(name, (size,) * 3, Pose([x, y, size / 2]), Physics.rigid(mass=mass), Material(color=color)))
        return self.scene.add(cube, at=f"/World/{name}")

    def add_goal_marker(self, radius: float) -> Prop:
        """A goal point drawn for people: a sphere of ``radius`` [m] at ``/World/Goal``, kinematic,
        without collision and hidden from the sensor cameras (``hide``), at env-local
        ``(cfg.spawn_x, cfg.spawn_y, mean of cfg.goal_z)`` until ``spawn_goal`` moves it. The
        task's config needs ``goal_z`` (the goal height range above the floor [m])."""
        cfg = self.cfg
        goal = self.scene.add(Prop(Sphere("Goal", radius, Pose([cfg.spawn_x, cfg.spawn_y, sum(cfg.goal_z) / 2]),
                                          Physics.kinematic(), Material(color=GOAL_MARKER_COLOR), collision=False)),
                              at="/World/Goal")
        self.hide(goal)
        return goal

    def hide(self, *props: Prop) -> None:
        """Keep ``props`` (goal markers, say) out of sensor images; ``render()`` still draws them
        (``BaseEnv.hide_from_sensors``)."""
        self.hide_from_sensors(*props)

    # ------------------------------------------------------------------ episode
    def spawn(self, prop: Prop, env_idx: torch.Tensor) -> torch.Tensor:
        """Put ``prop`` at rest at its spawn pose moved by x ~ U(-x_range, x_range), then
        y ~ U(-y_range, y_range) [m] (``cfg``; one draw each per env of ``env_idx``, from the
        episode streams). Returns the poses written, world frame (k, 7)."""
        cfg, rng = self.cfg, self.episode_rng
        pose = prop.default_pose[env_idx].clone()
        pose[:, 0] += rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        pose[:, 1] += rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        prop.set_pose(pose, env_ids=env_idx)
        prop.set_velocity(torch.zeros(len(env_idx), 6, device=self.device), env_ids=env_idx)
        return pose

    def spawn_goal(self, goal: Prop, env_idx: torch.Tensor) -> torch.Tensor:
        """Put the goal marker ``goal`` at its default x-y moved by x ~ U(-x_range, x_range), then
        y ~ U(-y_range, y_range), at a height z ~ U(*cfg.goal_z) above the env's floor [m] (one
        draw each per env of ``env_idx``, from the episode streams, after whatever the task drew
        before). Returns the positions written, world frame (k, 3)."""
        cfg, rng = self.cfg, self.episode_rng
        pose = goal.default_pose[env_idx].clone()
        pose[:, 0] += rng.uniform(env_idx, -cfg.x_range, cfg.x_range, device=self.device)
        pose[:, 1] += rng.uniform(env_idx, -cfg.y_range, cfg.y_range, device=self.device)
        pose[:, 2] = self.env_origins[env_idx, 2] + rng.uniform(env_idx, *cfg.goal_z, device=self.device)
        goal.set_pose(pose, env_ids=env_idx)
        return pose[:, :3]

    # ------------------------------------------------------------------ step hooks' helpers
    @property
    def k(self) -> SimpleNamespace:
        """``cfg``'s numbers as scalars of ``self.xp``: 0-dim float32 tensors on ``device`` (cheaper
        than Python floats in torch arithmetic) or float32 numpy scalars (the CPU fast path)."""
        cache = self._k
        if cache[0] is not self.cfg:  # made again for a cfg replaced on the instance
            cache = self._k = (self.cfg, tensor_constants(self.cfg, self.device), numpy_constants(self.cfg))
        return cache[1] if self.xp is torch else cache[2]

    _k: tuple = (None, None, None)
    """``k``'s cache: ``(cfg, its tensor constants, its numpy constants)``."""

    def tcp_pose(self):
        """(N, 7) the agent's TCP pose ``[x, y, z, qw, qx, qy, qz]``, world frame, of ``self.xp``."""
        return self.agent.robot.state_in(self.xp).tcp_pose

    @property
    def goal_pos(self):
        """(N, 3) the goal marker ``self.goal``'s position [m], world frame, of ``self.xp``, read from
        the marker itself: an env state written back (``set_state_dict``, ``reset_to_env_states``)
        brings its goal with it, as ManiSkill's tasks read their goal sites. Raises AttributeError
        in a task without a ``goal`` prop."""
        return self.goal.state_in(self.xp).pose[:, :3]

    def weighted_sum(self, terms: dict):
        """``sum(cfg.<name>_weight * term)`` over the reward terms, in their order (N,)."""
        k, total = self.k, None
        for name, term in terms.items():
            value = getattr(k, f"{name}_weight") * term
            total = value if total is None else total + value
        return total

    def pick_and_place_terms(self, tcp_to_object, object_to_place, grasped, placed) -> dict:
        """The reward terms of a task that carries an object somewhere and lets go of it (place and
        stack tasks), each float32 (N,) in [0, 1]:

        - ``reach = 1 - tanh(reach_scale * |tcp_to_object|)``, ``grasp = grasped``,
        - ``place = grasped * (1 - tanh(place_scale * |object_to_place|))``,
        - ``release = placed and not grasped``; once released in place, reach, grasp and place stay
          at their maximum (letting go where the task asks never lowers the reward).

        ``tcp_to_object`` and ``object_to_place`` are (N, 3) offsets [m]; ``grasped`` and ``placed``
        bool (N,). ``reach_scale`` and ``place_scale`` [1/m] come from ``cfg``; ``weighted_sum`` adds
        the terms with ``cfg.<term>_weight``.
        """
        k, xp = self.k, self.xp
        grasp = as_float32(grasped)
        released = as_float32(placed & ~grasped)
        reach = 1 - xp.tanh(norm(tcp_to_object) * k.reach_scale)
        place = grasp * (1 - xp.tanh(norm(object_to_place) * k.place_scale))
        return {"reach": xp.maximum(reach, released), "grasp": xp.maximum(grasp, released),
                "place": xp.maximum(place, released), "release": released}

    def compute_normalized_dense_reward(self, obs, action, info: dict):
        """Dense reward / ``success_reward``: float32 (N,) in [0, 1]."""
        return self.compute_dense_reward(obs, action, info) / self.k.success_reward


__all__ = ["TableTopConfig", "TableTopEnv", "RED", "GREEN", "GOAL_MARKER_COLOR"]
