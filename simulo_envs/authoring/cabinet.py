"""Procedural cabinets: a drawer on a prismatic joint, a door on a revolute one, a low chest of
drawers side by side (plain data).

Each returns an ``Articulation`` for ``ArticulatedProp``, built from ``Cuboid`` panels; nothing
is loaded from a file. Cabinet frame: origin on the floor under the cabinet's centre, +z up,
the open front facing -x (towards a robot standing at smaller x). All sizes in metres.

Shell (the fixed root link ``"body"``): bottom, top, two sides and a back panel of thickness
``wall``, outer extents ``depth`` (x) x ``width`` (y) x ``height`` (z).
"""

from __future__ import annotations

import math

from simulo_envs.authoring.articulation import Articulation, Joint, Link
from simulo_envs.authoring.physics import Material, Physics
from simulo_envs.authoring.pose import Pose
from simulo_envs.authoring.shapes import Cuboid, Cylinder

WOOD_DENSITY = 500.0
"""Density of the panels [kg/m^3] (a light wood)."""
_BODY = Material(color=(0.72, 0.58, 0.42))
_FRONT = Material(color=(0.55, 0.38, 0.25))
_HANDLE = Material(color=(0.15, 0.15, 0.15), static_friction=1.0, dynamic_friction=1.0)


def _panel(name: str, size, position, material: Material = _BODY) -> Cuboid:
    return Cuboid(name, size, Pose(position), Physics.rigid(density=WOOD_DENSITY), material)


def _shell(depth: float, width: float, height: float, wall: float) -> Link:
    d, w, h, t = depth, width, height, wall
    return Link("body", [
        _panel("bottom", (d, w, t), (0, 0, t / 2)),
        _panel("top", (d, w, t), (0, 0, h - t / 2)),
        _panel("left", (d, t, h - 2 * t), (0, -(w - t) / 2, h / 2)),
        _panel("right", (d, t, h - 2 * t), (0, (w - t) / 2, h / 2)),
        _panel("back", (t, w - 2 * t, h - 2 * t), ((d - t) / 2, 0, h / 2)),
    ])


def _bar_handle(front_x: float, length: float, gap: float, bar: float, y: float = 0.0) -> list[Cuboid]:
    """A vertical bar ``length`` long (square section ``bar``), held ``gap`` in front of a face at
    ``front_x`` by a standoff at each end, centred at (y, z = 0) of the link frame. A parallel
    gripper coming from above closes on the bar with its fingers on either side of it."""
    standoff_x = front_x - gap / 2
    bar_x = front_x - gap - bar / 2
    z = (length - bar) / 2
    return [
        _panel("handle", (bar, bar, length), (bar_x, y, 0), _HANDLE),
        _panel("standoff_top", (gap, bar, bar), (standoff_x, y, z), _HANDLE),
        _panel("standoff_bottom", (gap, bar, bar), (standoff_x, y, -z), _HANDLE),
    ]


def drawer_cabinet(name: str = "Cabinet", pose: Pose = Pose(), depth: float = 0.3, width: float = 0.4,
                   height: float = 0.3, wall: float = 0.02, travel: float = 0.25, clearance: float = 0.005,
                   handle_length: float = 0.1, handle_gap: float = 0.04, handle_bar: float = 0.02,
                   friction: float = 0.05, damping: float = 2.0) -> Articulation:
    """A cabinet with one drawer filling its front opening.

    The drawer (link ``"drawer"``, joint ``"drawer_joint"``) slides out along -x from 0 (closed,
    its front flush with the shell) to ``travel`` [m], with the joint's ``friction`` coefficient
    and viscous ``damping`` [N s/m]. Its frame sits at the drawer box's centre; a vertical bar
    handle (shape ``"handle"``, ``handle_length`` tall) is held ``handle_gap`` [m] in front of the
    front panel's centre. Raises ValueError for sizes that leave no room for the drawer.
    """
    d, w, h, t, c = depth, width, height, wall, clearance
    inner_w, inner_h, drawer_d = w - 2 * t - 2 * c, h - 2 * t - 2 * c, d - t - c
    if min(inner_w, inner_h, drawer_d) <= 2 * t or travel <= 0 or travel > drawer_d:
        raise ValueError(f"drawer_cabinet: sizes leave no room for a drawer (depth {d}, width {w}, height {h}, "
                         f"wall {t}) or travel {travel} is not in (0, {drawer_d:.3f}]")
    front = -drawer_d / 2  # drawer frame: x of the front face's outside
    drawer = Link("drawer", [
        _panel("front", (t, inner_w, inner_h), (front + t / 2, 0, 0), _FRONT),
        _panel("floor", (drawer_d - t, inner_w, t), (t / 2, 0, -(inner_h - t) / 2)),
        _panel("left", (drawer_d - t, t, inner_h / 2), (t / 2, -(inner_w - t) / 2, -inner_h / 4)),
        _panel("right", (drawer_d - t, t, inner_h / 2), (t / 2, (inner_w - t) / 2, -inner_h / 4)),
        _panel("back", (t, inner_w - 2 * t, inner_h / 2), (drawer_d / 2 - t / 2, 0, -inner_h / 4)),
        *_bar_handle(front, handle_length, handle_gap, handle_bar),
    ], parent="body", joint=Joint.prismatic(
        axis=(-1, 0, 0), limits=(0.0, travel), origin=Pose((-d / 2 + drawer_d / 2, 0, h / 2)),
        friction=friction, damping=damping))
    return Articulation(name, [_shell(d, w, h, t), drawer], pose=pose, fix_base=True)


def door_cabinet(name: str = "Cabinet", pose: Pose = Pose(), depth: float = 0.3, width: float = 0.4,
                 height: float = 0.3, wall: float = 0.02, opening: float = math.pi / 2,
                 friction: float = 0.05, damping: float = 0.2) -> Articulation:
    """A cabinet whose front is a door hinged on its -y edge.

    The door (link ``"door"``, joint ``"door_joint"``) turns about +z from 0 (closed) to
    ``opening`` [rad], swinging outwards (towards -x); the door frame sits on the hinge axis at
    the door's mid-height, the panel extending along +y. A vertical bar handle near the free edge.
    """
    d, w, h, t = depth, width, height, wall
    door = Link("door", [
        _panel("panel", (t, w, h), (-t / 2, w / 2, 0), _FRONT),
        *_bar_handle(-t, 0.1, 0.04, 0.02, y=w - 0.05),
    ], parent="body", joint=Joint.revolute(
        axis=(0, 0, 1), limits=(0.0, opening), origin=Pose((-d / 2, -w / 2, h / 2)),
        friction=friction, damping=damping))
    return Articulation(name, [_shell(d, w, h, t), door], pose=pose, fix_base=True)


def drawer_chest(name: str = "Chest", pose: Pose = Pose(), depth: float = 0.10, width: float = 0.20,
                 height: float = 0.06, wall: float = 0.005, drawers: int = 2, travel: float = 0.07,
                 clearance: float = 0.002, handle_length: float = 0.04, handle_gap: float = 0.03,
                 handle_bar: float = 0.008, round_handle: bool = False, friction: float = 0.05,
                 damping: float = 1.0) -> Articulation:
    """A low chest of ``drawers`` drawers side by side, sized for a small arm's jaw.

    The shell (root link ``"body"``) has ``drawers - 1`` upright dividers. Drawer ``i`` (link
    ``"drawer<i>"``, joint ``"drawer<i>_joint"``; drawer 0 at the most negative y) slides out along
    -x from 0 (closed, its front flush with the shell) to ``travel`` [m], with the joint's
    ``friction`` coefficient and viscous ``damping`` [N s/m]. Its frame sits at the drawer box's
    centre. Its handle is a horizontal bar along y (shape ``"handle"``, ``handle_length`` long,
    ``handle_bar`` thick: square in section, or round with ``round_handle``) held ``handle_gap``
    [m] in front of the front panel's centre by a standoff at each end: a jaw closing along x takes
    it from above, one jaw between the bar and the front panel. Raises ValueError for sizes that
    leave no room for the drawers or their handles.
    """
    d, w, h, t, c = depth, width, height, wall, clearance
    if not isinstance(drawers, int) or drawers < 1:
        raise ValueError(f"drawer_chest: drawers must be an int >= 1, got {drawers!r}")
    bay = (w - (drawers + 1) * t) / drawers  # each drawer's opening along y
    inner_w, inner_h, drawer_d = bay - 2 * c, h - 2 * t - 2 * c, d - t - c
    if min(inner_w, inner_h, drawer_d) <= 2 * t or not 0 < travel <= drawer_d or handle_length > inner_w \
            or handle_bar >= inner_h:
        raise ValueError(f"drawer_chest: sizes leave no room for {drawers} drawers (depth {d}, width {w}, height {h}, "
                         f"wall {t}), travel {travel} is not in (0, {drawer_d:.3f}], or the handle does not fit")
    shell = _shell(d, w, h, t)
    dividers = [_panel(f"divider{i}", (d - t, t, h - 2 * t), (-t / 2, -w / 2 + (i + 1) * (bay + t) + t / 2, h / 2))
                for i in range(drawers - 1)]
    body = Link("body", [*shell.shapes, *dividers])
    front = -drawer_d / 2
    bar_x, end_y = front - handle_gap - handle_bar / 2, (handle_length - handle_bar) / 2
    if round_handle:
        bar = Cylinder("handle", handle_bar / 2, handle_length, Pose((bar_x, 0, 0), (0.7071068, 0.7071068, 0, 0)),
                       Physics.rigid(density=WOOD_DENSITY), _HANDLE)
    else:
        bar = _panel("handle", (handle_bar, handle_length, handle_bar), (bar_x, 0, 0), _HANDLE)
    links = [body]
    for i in range(drawers):
        y = -w / 2 + t + bay / 2 + i * (bay + t)
        links.append(Link(f"drawer{i}", [
            _panel("front", (t, inner_w, inner_h), (front + t / 2, 0, 0), _FRONT),
            _panel("floor", (drawer_d - t, inner_w, t), (t / 2, 0, -(inner_h - t) / 2)),
            _panel("left", (drawer_d - t, t, inner_h / 2), (t / 2, -(inner_w - t) / 2, -inner_h / 4)),
            _panel("right", (drawer_d - t, t, inner_h / 2), (t / 2, (inner_w - t) / 2, -inner_h / 4)),
            _panel("back", (t, inner_w - 2 * t, inner_h / 2), (drawer_d / 2 - t / 2, 0, -inner_h / 4)),
            bar,
            _panel("standoff_left", (handle_gap, handle_bar, handle_bar), (front - handle_gap / 2, -end_y, 0), _HANDLE),
            _panel("standoff_right", (handle_gap, handle_bar, handle_bar), (front - handle_gap / 2, end_y, 0), _HANDLE),
        ], parent="body", joint=Joint.prismatic(
            axis=(-1, 0, 0), limits=(0.0, travel), origin=Pose((-d / 2 + drawer_d / 2, y, h / 2)),
            friction=friction, damping=damping)))
    return Articulation(name, links, pose=pose, fix_base=True)
