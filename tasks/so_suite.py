"""What the SO arms' table-top suite shares: the task option ``variant``, the colours and shapes
it draws from, distractors, containers, coloured target squares, where objects spawn, and the
instruction of each episode.

**Variants** (``gym.make(env_id, variant=...)``, every suite task, default ``"train"``):
``"train"`` is the in-distribution set a policy trains on; ``"heldout"`` changes everything the
task's config lists in ``heldout`` (other colours, shapes, distractor counts, positions), and
``"heldout_colors"``, ``"heldout_shapes"``, ``"heldout_distractors"``, ``"heldout_positions"``
change one of those axes alone, to tell which one a policy fails on. The option decides what is
built (how many distractors, which shapes), so it holds for the env's life: ``env.variant`` names
it and ``env.cfg`` holds its numbers (``SuiteConfig.variant``).

**Colours**: ``COLORS`` names RGB values; the train variants draw from ``TRAIN_COLORS``, held-out
colours from ``HELDOUT_COLORS`` (none shared). Each episode draws distinct colours per role (the
cube to move, the other cube, the target square, the distractors: ``draw_colors``) from the env's
episode stream, after every position, and paints the props where the env renders (a prop's colour
is a visual: it changes no physics and is not part of ``get_state``, like a randomized light).

**Shapes**: ``SHAPES`` names the objects a task moves: ``"cube"`` (edge = the config's
``cube_size``) and ``"cylinder"`` (upright, diameter and height ``cube_size``). With several shapes
each env builds one (``MultiShapeProp``: env ``i`` gets ``shapes[i % len(shapes)]``).

**Where things spawn** (``Region``): a ring sector around the robot base, the radius in
``radius`` and the bearing's magnitude in ``bearing`` (both sides of +x), each object turned to
face the base, so the jaw (which turns with the arm's base joint) meets a cube's faces square.
``layout`` draws every object of an episode at once, apart by their clearances (rejection
sampling: the first of ``layout_tries`` candidate sets per env that fits).

**Instruction**: ``instructions()`` gives each env's sentence for its current episode ("Put the
red cube in the bowl."), what LeRobot's environment hands a policy as the task; a task builds it
from ``color_names(role)`` and ``shape_names(prop)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import ClassVar, Mapping, Optional, Sequence

import torch

from simulo_envs.articulated_prop import ArticulatedProp
from simulo_envs.authoring import Cuboid, Cylinder, Material, Physics, Pose
from simulo_envs.authoring.containers import Container
from simulo_envs.envs.sensors import CameraConfig, look_at
from simulo_envs.prop import MultiShapeProp, Prop
from simulo_envs.tasks.so100_tabletop import SO100TableTopConfig, SO100TableTopEnv
from simulo_envs.tasks.tabletop import GREEN, RED

COLORS = {
    "red": RED, "green": GREEN, "blue": (0.12, 0.32, 0.85), "yellow": (0.95, 0.80, 0.10),
    "orange": (0.98, 0.50, 0.05), "purple": (0.50, 0.20, 0.72), "cyan": (0.10, 0.78, 0.82), "pink": (0.98, 0.55, 0.75),
}
"""Colour name -> RGB in [0, 1]."""
TRAIN_COLORS = ("red", "green", "blue", "yellow")
HELDOUT_COLORS = ("orange", "purple", "cyan", "pink")
SHAPES = ("cube", "cylinder")
AXES = ("colors", "shapes", "distractors", "positions")
"""The axes a held-out variant changes; ``"heldout_<axis>"`` changes one."""
VARIANTS = ("train", "heldout") + tuple(f"heldout_{axis}" for axis in AXES)
"""Every suite task's ``variant`` values."""


@dataclass(frozen=True)
class Region:
    """A ring sector around the robot base where objects spawn (env-local, the base at the
    origin facing +x): distance from the base in ``radius`` [m], bearing from +x of magnitude in
    ``bearing`` [rad] (a sector on each side when ``bearing[0] > 0``).

    Raises:
        ValueError: a range that is empty, negative, or a bearing past 90 deg.
    """

    radius: tuple = (0.19, 0.30)
    bearing: tuple = (0.0, 0.5)

    def __post_init__(self) -> None:
        (r0, r1), (b0, b1) = self.radius, self.bearing
        if not 0 <= r0 < r1 or not 0 <= b0 < b1 <= math.pi / 2:
            raise ValueError(f"Region: radius must satisfy 0 <= lo < hi [m] and bearing 0 <= lo < hi <= pi/2 [rad], "
                             f"got radius {self.radius}, bearing {self.bearing}")


@dataclass(frozen=True)
class SuiteConfig(SO100TableTopConfig):
    """The suite's tunables shared by its tasks, with units (the cube, the reach ring and the
    reach term are ``SO100TableTopConfig``'s). ``heldout`` maps an axis of ``AXES`` to the
    fields that axis changes and their held-out values."""

    colors: tuple = TRAIN_COLORS    # colour names the episode draws from (COLORS)
    shapes: tuple = ("cube",)       # shapes of the objects moved (SHAPES), one per env
    distractors: int = 0            # distractor objects (shapes and sizes as the task's cube, other colours)
    object_clearance: float = 0.02  # a cube's or cylinder's clearance radius in the layout [m]
    region: Optional[Region] = Region()  # where objects spawn; None: SO100TableTopConfig's box, yaw 0
    clearance_gap: float = 0.01     # at least this between two objects' clearance circles [m]
    layout_tries: int = 64          # candidate layouts per env per reset
    sensor_eye: tuple = (0.40, 0.0, 0.40)    # base_camera, env-local [m]: in front of the arm, above the table
    sensor_target: tuple = (0.17, 0.0, 0.0)
    sensor_fov: float = 1.0                  # vertical field of view [rad]
    render_eye: tuple = (0.46, 0.30, 0.30)   # render() camera [m]: a three-quarter view
    render_target: tuple = (0.17, 0.0, 0.04)
    render_fov: float = 0.9
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 2},
        "positions": {"region": Region((0.19, 0.31), (0.55, 0.9))},
    })

    def variant(self, name: str) -> "SuiteConfig":
        """This config as variant ``name`` (``VARIANTS``): ``"train"`` is itself, ``"heldout"``
        applies every axis of ``heldout``, ``"heldout_<axis>"`` one.

        Raises:
            ValueError: an unknown variant (the message lists them).
        """
        if name not in VARIANTS:
            raise ValueError(f"variant must be one of {list(VARIANTS)}, got {name!r}")
        axes = () if name == "train" else AXES if name == "heldout" else (name[len("heldout_"):],)
        changes = {}
        for axis in axes:
            changes.update(self.heldout.get(axis, {}))
        return replace(self, **changes) if changes else self


def shape_of(name: str, label: str, size: float, mass: float, color=COLORS["red"], xy=(0.0, 0.0)):
    """The primitive shape ``name`` (``SHAPES``) called ``label``, ``size`` [m] across and tall,
    ``mass`` [kg], resting upright on the ground at env-local ``xy`` [m].

    Raises:
        ValueError: an unknown shape name.
    """
    pose, physics, material = Pose([xy[0], xy[1], size / 2]), Physics.rigid(mass=mass), Material(color=color)
    if name == "cube":
        return Cuboid(label, (size,) * 3, pose, physics, material)
    if name == "cylinder":
        return Cylinder(label, size / 2, size, pose, physics, material)
    raise ValueError(f"unknown shape {name!r}; the suite's shapes are {list(SHAPES)}")


class SuiteEnv(SO100TableTopEnv):
    """Base of the suite's tasks (module docstring): a ``SO100TableTopEnv`` with the ``variant``
    keyword and the helpers a task file uses.

    Args:
        variant: ``VARIANTS`` (default ``"train"``).
        **kwargs: ``BaseEnv``'s keywords.

    Raises:
        ValueError: an unknown variant (before anything is built); as ``BaseEnv``.
    """

    cfg = SuiteConfig()
    SUPPORTED_VARIANTS: ClassVar[tuple[str, ...]] = VARIANTS

    def __init__(self, *args, variant: str = "train", **kwargs):
        self.variant = variant
        self.cfg = type(self).cfg.variant(variant)
        self.colors_drawn = torch.zeros(0, 0, dtype=torch.long)  # (N, roles), filled at reset
        super().__init__(*args, **kwargs)

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        """One 128x128 ``base_camera`` in front of the arm, looking back at it over every spawn
        sector (LeRobot's SO-101 setups record such a front view and the wrist camera)."""
        cfg = self.cfg
        return [CameraConfig("base_camera", look_at(cfg.sensor_eye, cfg.sensor_target), 128, 128, cfg.sensor_fov)]

    @property
    def _default_human_render_camera_configs(self) -> list[CameraConfig]:
        """One 512x512 ``render_camera``: a three-quarter view of the arm and every spawn sector."""
        cfg = self.cfg
        return [CameraConfig("render_camera", look_at(cfg.render_eye, cfg.render_target), 512, 512, cfg.render_fov)]

    # ------------------------------------------------------------------ scene
    def add_object(self, name: str, color=COLORS["red"]) -> Prop:
        """The prop a task moves, at ``/World/<name>``: one of ``cfg.shapes`` per env,
        ``cfg.cube_size`` across, ``cfg.cube_mass``, spawning at ``(cfg.spawn_x, cfg.spawn_y)``."""
        cfg = self.cfg
        shapes = [shape_of(s, s, cfg.cube_size, cfg.cube_mass, color, (cfg.spawn_x, cfg.spawn_y)) for s in cfg.shapes]
        prop = Prop(shapes[0]) if len(shapes) == 1 else MultiShapeProp(name, shapes)
        return self.scene.add(prop, at=f"/World/{name}")

    def add_distractors(self) -> list[Prop]:
        """``cfg.distractors`` objects like the task's (``add_object``), ``/World/Distractor<i>``."""
        return [self.add_object(f"Distractor{i}", COLORS["green"]) for i in range(self.cfg.distractors)]

    def add_container(self, name: str, container: Container) -> ArticulatedProp:
        """A fixed ``container`` (``authoring.containers``) at ``/World/<name>``, moved per episode
        by ``layout``."""
        return self.scene.add(ArticulatedProp(container.articulation(name)), at=f"/World/{name}")

    def add_square(self, name: str, size: float, thickness: float, color=COLORS["blue"]) -> Prop:
        """A flat coloured square on the floor (``size`` [m] a side, ``thickness`` [m]) at
        ``/World/<name>``: kinematic, without collision (a cube set on it rests on the floor),
        seen by every camera."""
        square = Cuboid(name, (size, size, thickness), Pose([0.0, 0.0, thickness / 2]), Physics.kinematic(),
                        Material(color=color), collision=False)
        return self.scene.add(Prop(square), at=f"/World/{name}")

    # ------------------------------------------------------------------ episode
    def layout(self, env_idx: torch.Tensor, items: Sequence[tuple], fixed: Optional[torch.Tensor] = None,
               fixed_clearance=0.0, region: Optional[Region] = None) -> torch.Tensor:
        """Place ``items`` (``(prop, clearance [m])`` pairs) at rest in the envs of ``env_idx``,
        in ``region`` (default ``cfg.region``; ``Region()`` where that is None), pairwise at least
        ``clearance_i + clearance_j + cfg.clearance_gap`` apart in the plane and as far from
        ``fixed``: world positions (k, 3) or (k, m, 3) of things already placed, with
        ``fixed_clearance`` [m] (one number, or m: one per fixed thing). Each prop keeps its default height and faces the base. Draws
        ``cfg.layout_tries`` candidate layouts per env (radius, then bearing, then side) and keeps
        the first that fits, else the one whose worst overlap is least. Returns the world
        positions written (k, n, 3)."""
        cfg, rng, k, n = self.cfg, self.episode_rng, len(env_idx), len(items)
        if n == 0:
            return torch.zeros(k, 0, 3, device=self.device)
        tries, region = cfg.layout_tries, region or cfg.region or Region()
        u_r = rng.uniform(env_idx, 0.0, 1.0, (tries, n), device=self.device)
        u_b = rng.uniform(env_idx, 0.0, 1.0, (tries, n), device=self.device)
        side = torch.where(rng.uniform(env_idx, 0.0, 1.0, (tries, n), device=self.device) < 0.5, -1.0, 1.0)
        (r0, r1), (b0, b1) = region.radius, region.bearing
        radius = torch.sqrt(r0 * r0 + u_r * (r1 * r1 - r0 * r0))  # uniform over the sector's area
        bearing = side * (b0 + u_b * (b1 - b0))
        xy = torch.stack([radius * torch.cos(bearing), radius * torch.sin(bearing)], dim=-1)  # (k, tries, n, 2)
        clear = torch.tensor([c for _, c in items], device=self.device)
        need = clear[:, None] + clear[None, :] + cfg.clearance_gap
        gap = torch.cdist(xy.reshape(k * tries, n, 2), xy.reshape(k * tries, n, 2)).reshape(k, tries, n, n) - need
        gap = gap + torch.eye(n, device=self.device) * 1e3
        worst = gap.flatten(2).min(dim=2).values if n > 1 else torch.full((k, tries), 1e3, device=self.device)
        if fixed is not None:
            fixed = fixed.reshape(k, -1, 3)  # (k, m, 3): m things already placed
            local_fixed = (fixed - self.env_origins[env_idx][:, None])[:, None, None, :, :2]  # (k, 1, 1, m, 2)
            fixed_clear = torch.as_tensor(fixed_clearance, dtype=torch.float32, device=self.device)
            to_fixed = ((xy[..., None, :] - local_fixed).norm(dim=-1) - clear[:, None]
                        - fixed_clear.expand(fixed.shape[1]) - cfg.clearance_gap)  # (k, tries, n, m)
            worst = torch.minimum(worst, to_fixed.flatten(2).min(dim=2).values)
        fits = worst >= 0
        choice = torch.where(fits.any(dim=1), fits.float().argmax(dim=1), worst.argmax(dim=1))
        chosen_xy = xy[torch.arange(k, device=self.device), choice]  # (k, n, 2)
        chosen_b = bearing[torch.arange(k, device=self.device), choice]
        out = []
        for j, (prop, _) in enumerate(items):
            out.append(self.place(prop, env_idx, chosen_xy[:, j], chosen_b[:, j]))
        return torch.stack(out, dim=1)

    def place(self, prop, env_idx: torch.Tensor, xy: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
        """Put ``prop`` (a ``Prop`` or a fixed ``ArticulatedProp``) at env-local ``xy`` (k, 2) [m],
        its default height, turned ``yaw`` (k,) [rad] about +z, at rest. Returns the world
        positions (k, 3)."""
        pose = prop.default_pose[env_idx].clone()
        pose[:, :2] = self.env_origins[env_idx, :2] + xy
        pose[:, 3:] = 0.0
        pose[:, 3] = torch.cos(yaw / 2)
        pose[:, 6] = torch.sin(yaw / 2)
        prop.set_pose(pose, env_ids=env_idx)
        if isinstance(prop, Prop) and not prop.shape.physics.kind == "kinematic":
            prop.set_velocity(torch.zeros(len(env_idx), 6, device=self.device), env_ids=env_idx)
        return pose[:, :3]

    def draw_colors(self, env_idx: torch.Tensor, roles: int, first_role: int = 0) -> torch.Tensor:
        """Distinct colours for roles ``first_role .. first_role + roles - 1`` per env of
        ``env_idx``: int64 (k, roles) indices into ``cfg.colors`` (a random permutation's first
        ``roles``), kept in ``colors_drawn`` for ``color_names``. Roles of separate calls may share
        a colour (a cube and a square). Draw colours after every position: a seed then places
        things exactly as a task without colours did.

        Raises:
            ValueError: more roles than ``cfg.colors`` has colours.
        """
        if roles > len(self.cfg.colors):
            raise ValueError(f"{roles} distinct colours asked for; the variant has {len(self.cfg.colors)}")
        keys = self.episode_rng.uniform(env_idx, 0.0, 1.0, (len(self.cfg.colors),))
        drawn = keys.argsort(dim=1)[:, :roles]
        end = first_role + roles
        if self.colors_drawn.shape[0] != self.num_envs or self.colors_drawn.shape[1] < end:
            grown = torch.zeros(self.num_envs, end, dtype=torch.long)
            if self.colors_drawn.shape[0] == self.num_envs:
                grown[:, :self.colors_drawn.shape[1]] = self.colors_drawn
            self.colors_drawn = grown
        self.colors_drawn[env_idx.cpu(), first_role:end] = drawn
        return drawn

    def paint(self, prop, env_idx: torch.Tensor, role: int) -> None:
        """Colour ``prop`` in the envs of ``env_idx`` with their drawn colour of ``role``, where the
        env renders (nothing to paint elsewhere)."""
        if not self.backend.render:
            return
        rgb = torch.tensor([COLORS[self.cfg.colors[int(i)]] for i in self.colors_drawn[env_idx.cpu(), role]])
        prop.set_color(rgb, env_ids=env_idx)

    # ------------------------------------------------------------------ instruction
    def color_names(self, role: int) -> list[str]:
        """The colour name of ``role`` in each env's current episode (num_envs str)."""
        return [self.cfg.colors[int(i)] for i in self.colors_drawn[:, role]]

    @staticmethod
    def shape_names(prop) -> list[str]:
        """The shape name (``SHAPES``) of ``prop`` in each env (num_envs str)."""
        if isinstance(prop, MultiShapeProp):
            return [prop.shape_of_env(i).name for i in range(prop.num_envs)]
        return [prop.shape.name] * prop.num_envs

    def instructions(self) -> list[str]:
        """Each env's one-sentence instruction for its current episode (num_envs str)."""
        raise NotImplementedError(f"{type(self).__name__} writes no instruction")


__all__ = ["COLORS", "TRAIN_COLORS", "HELDOUT_COLORS", "SHAPES", "AXES", "VARIANTS", "Region", "SuiteConfig",
           "SuiteEnv", "shape_of"]
