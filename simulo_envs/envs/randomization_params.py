"""What a randomization table can name: the parameters of props, robots, lights and sensor cameras.

A table entry names ``"<object>.<parameter>"``; the object is found from the env by attribute
(and mapping key) path, e.g. ``"block.mass"`` is ``env.block``'s mass, ``"agent.robot.joint_stiffness"``
the Panda's drive stiffness (an ``ArticulatedProp``'s joints too), ``"floor.texture"`` the floor's pattern, ``"visual_distractors.0.kind"`` a distractor's shape,
``"sensor_cameras.base_camera.pose_jitter"`` a camera's offset (``fov`` its vertical field of
view, ``brightness``, ``contrast`` and ``noise_std`` the noise on its pictures).
``PARAMETERS`` maps each object type to its parameters; each ``Parameter`` knows its per-env
value shape, unit, valid range, the value it starts from (for ``operation="scale"``/``"add"``
and for the privileged record) and the public writer it calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from simulo_envs.envs.image_noise import SETTINGS
from simulo_envs.authoring.textures import TEXTURE_NAMES
from simulo_envs.envs.distractors import DEFAULT_COLOR, KINDS, Distractor
from simulo_envs.envs.visuals import Floor, Lights, SensorCamera
from simulo_envs.sim.render import GROUND_COLOR
from simulo_envs.prop import Prop
from simulo_envs.articulation import ArticulationObject


@dataclass(frozen=True)
class Parameter:
    """One randomizable parameter of an object type.

    Attributes:
        unit: SI unit ("" when dimensionless).
        low / high: valid range of the written value (None: unbounded); ``low_open``: ``low`` excluded.
        shape: ``shape(target, joints)`` -> per-env value shape.
        default: ``default(target, joints)`` -> float64 (N, *shape): the value before any draw
            (None for a build-time parameter: 1).
        write: ``write(target, values (k, *shape) float32, env_ids int64 (k,), joints)``.
        visual: exists only when the env renders (drawn always, written only then).
        build_time: applied when the scene is built (``when="startup"`` only).
        per_joint: accepts ``joints=`` (robot joint parameters).
        nonzero_vector: the last axis is a direction: a range that holds the zero vector is invalid.
    """

    unit: str
    low: Optional[float]
    high: Optional[float]
    shape: Callable
    default: Callable
    write: Callable
    low_open: bool = False
    visual: bool = False
    build_time: bool = False
    per_joint: bool = False
    nonzero_vector: bool = False


def _scalar(_target, _joints) -> tuple:
    return ()


def _fixed(shape: tuple) -> Callable:
    return lambda _target, _joints: shape


def _read(attribute: str) -> Callable:
    return lambda target, _joints: getattr(target, attribute).cpu().numpy().astype(np.float64)


def _prop_color(prop: Prop, _joints) -> np.ndarray:
    variants = prop.variant_of_env if hasattr(prop, "variant_of_env") else np.zeros(prop.num_envs, dtype=int)
    return np.array([prop.variants[int(v)].material.color[:3] for v in variants], dtype=np.float64)


def _material(name: str) -> Callable:
    return lambda prop, v, ids, _j: prop.set_material(env_ids=ids, **{name: v})


def _joint_shape(robot: ArticulationObject, joints) -> tuple:
    return (robot.dof if joints is None else len(joints),)


def _joint_read(name: str) -> Callable:
    def read(robot: ArticulationObject, joints) -> np.ndarray:
        values = getattr(robot, name).cpu().numpy().astype(np.float64)
        return values if joints is None else values[:, [robot.joint_names.index(j) for j in joints]]
    return read


def _lighting(name: str) -> Callable:
    """Authored lighting (``scene.lighting``) as the default of ``name``, (N, ...) float64."""
    def read(lights: Lights, _joints) -> np.ndarray:
        env = lights._env
        ambient, directional = env.scene.lighting
        if name == "ambient":
            value = np.asarray(ambient, dtype=np.float64)
        elif name == "intensity":
            value = np.ones(len(directional))
        else:
            value = np.asarray([d if name == "direction" else c for d, c in directional], dtype=np.float64).reshape(-1, 3)
            if name == "direction":
                value = value / np.maximum(np.linalg.norm(value, axis=1, keepdims=True), 1e-12)
        return np.repeat(value[None], env.num_envs, axis=0)
    return read


def _lights_shape(per_light: tuple) -> Callable:
    return lambda lights, _joints: (lights.num_directional, *per_light)


def _num_envs(target) -> int:
    return target.num_envs if isinstance(target, Prop) else target._env.num_envs


def _neutral(value) -> Callable:
    """A default of ``value`` (a number or a row) in every env: (N,) or (N, len(value))."""
    return lambda target, _joints: np.tile(np.asarray(value, dtype=np.float64), (_num_envs(target), 1)).reshape(
        _num_envs(target), *np.shape(value))


def _floor_color(floor: Floor, _joints) -> np.ndarray:
    """The floor's authored RGB (``scene.add_ground``; the renderer's grey without one), (N, 3)."""
    env = floor._env
    return np.repeat(np.asarray([env.scene.ground_color or GROUND_COLOR], dtype=np.float64), env.num_envs, axis=0)


def _noise_writer(name: str) -> Callable:
    return lambda cam, v, ids, _j: cam.set_image_noise(ids, **{name: v})


def _write_scale(prop, values, env_ids, _joints) -> None:
    """A prop's scale: the factors it is built at (before the build, every env), or a rebuild of
    the bodies of ``env_ids`` (after it: a seeded reset of some envs)."""
    prop.set_scale(values, env_ids if prop.is_attached else None)


PARAMETERS: dict[type, dict[str, Parameter]] = {
    Prop: {
        "mass": Parameter("kg", 0.0, None, _scalar, _read("mass"), lambda p, v, ids, _j: p.set_mass(v, ids),
                          low_open=True),
        "friction": Parameter("", 0.0, None, _scalar, _read("static_friction"),
                              lambda p, v, ids, _j: p.set_material(static_friction=v, dynamic_friction=v, env_ids=ids)),
        "static_friction": Parameter("", 0.0, None, _scalar, _read("static_friction"), _material("static_friction")),
        "dynamic_friction": Parameter("", 0.0, None, _scalar, _read("dynamic_friction"), _material("dynamic_friction")),
        "restitution": Parameter("", 0.0, 1.0, _scalar, _read("restitution"), _material("restitution")),
        "linear_damping": Parameter("1/s", 0.0, None, _scalar, _read("linear_damping"),
                                    lambda p, v, ids, _j: p.set_damping(linear=v, env_ids=ids)),
        "angular_damping": Parameter("1/s", 0.0, None, _scalar, _read("angular_damping"),
                                     lambda p, v, ids, _j: p.set_damping(angular=v, env_ids=ids)),
        "color": Parameter("", 0.0, 1.0, _fixed((3,)), _prop_color, lambda p, v, ids, _j: p.set_color(v, ids),
                           visual=True),
        "texture": Parameter("", 0, len(TEXTURE_NAMES) - 1, _scalar, _neutral(0.0),
                             lambda p, v, ids, _j: p.set_texture(v, ids), visual=True),
        "scale": Parameter("", 0.0, None, _scalar, lambda p, _j: None, _write_scale,
                           low_open=True, build_time=True),
    },
    ArticulationObject: {  # a Robot or an ArticulatedProp
        "joint_stiffness": Parameter("N/m or Nm/rad", 0.0, None, _joint_shape, _joint_read("joint_stiffness"),
                                     lambda r, v, ids, j: r.set_joint_drive(stiffness=v, env_ids=ids, joints=j),
                                     per_joint=True),
        "joint_damping": Parameter("Ns/m or Nms/rad", 0.0, None, _joint_shape, _joint_read("joint_damping"),
                                   lambda r, v, ids, j: r.set_joint_drive(damping=v, env_ids=ids, joints=j),
                                   per_joint=True),
        "joint_friction": Parameter("", 0.0, None, _joint_shape, _joint_read("joint_friction"),
                                    lambda r, v, ids, j: r.set_joint_friction(v, ids, joints=j), per_joint=True),
        "joint_armature": Parameter("kg or kg m^2", 0.0, None, _joint_shape, _joint_read("joint_armature"),
                                    lambda r, v, ids, j: r.set_joint_armature(v, ids, joints=j), per_joint=True),
    },
    Lights: {
        "ambient": Parameter("", 0.0, None, _fixed((3,)), _lighting("ambient"), lambda l, v, ids, _j: l.set_ambient(v, ids),
                             visual=True),
        "direction": Parameter("", None, None, _lights_shape((3,)), _lighting("direction"),
                               lambda l, v, ids, _j: l.set_direction(v, ids), visual=True, nonzero_vector=True),
        "color": Parameter("", 0.0, None, _lights_shape((3,)), _lighting("color"), lambda l, v, ids, _j: l.set_color(v, ids),
                           visual=True),
        "intensity": Parameter("", 0.0, None, _lights_shape(()), _lighting("intensity"),
                               lambda l, v, ids, _j: l.set_intensity(v, ids), visual=True),
    },
    Floor: {
        "color": Parameter("", 0.0, 1.0, _fixed((3,)), _floor_color, lambda f, v, ids, _j: f.set_color(v, ids),
                           visual=True),
        "texture": Parameter("", 0, len(TEXTURE_NAMES) - 1, _scalar, _neutral(0.0),
                             lambda f, v, ids, _j: f.set_texture(v, ids), visual=True),
    },
    Distractor: {
        "kind": Parameter("", 0, len(KINDS) - 1, _scalar, _neutral(0.0), lambda d, v, ids, _j: d.set_kind(v, ids),
                          visual=True),
        "color": Parameter("", 0.0, 1.0, _fixed((3,)), _neutral(DEFAULT_COLOR), lambda d, v, ids, _j: d.set_color(v, ids),
                           visual=True),
        "position": Parameter("m", None, None, _fixed((2,)), _neutral((0.0, 0.0)),
                              lambda d, v, ids, _j: d.set_position(v, ids), visual=True),
        "yaw": Parameter("rad", None, None, _scalar, _neutral(0.0), lambda d, v, ids, _j: d.set_yaw(v, ids), visual=True),
    },
    SensorCamera: {
        "pose_jitter": Parameter("m and rad", None, None, _fixed((6,)),
                                 lambda cam, _j: np.zeros((cam._env.num_envs, 6)),
                                 lambda cam, v, ids, _j: cam.set_pose_jitter(v, ids), visual=True),
        "fov": Parameter("rad", SensorCamera.FOV_RANGE[0], SensorCamera.FOV_RANGE[1], _scalar,
                         lambda cam, _j: np.full(cam._env.num_envs, cam.default_fov),
                         lambda cam, v, ids, _j: cam.set_fov(v, ids), low_open=True, visual=True),
        **{name: Parameter("", low, high, _scalar, _neutral(SETTINGS[name]), _noise_writer(name), visual=True)
           for name, (low, high) in SensorCamera.NOISE_RANGES.items()},
    },
}


def parameters_of(target: Any) -> dict[str, Parameter]:
    """The randomizable parameters of ``target`` (by its type, most derived first); {} if none."""
    for cls in type(target).__mro__:
        if cls in PARAMETERS:
            return PARAMETERS[cls]
    return {}


def result_range(param: Parameter, operation: str, low: np.ndarray, high: np.ndarray,
                 default: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``operation(default, draw)`` for draws in ``[low, high]`` (per element, all envs)."""
    if operation == "set":
        return low, high
    if operation == "add":
        return default + low, default + high
    with np.errstate(invalid="ignore"):  # 0 * inf: a zero default stays zero
        a, b = np.nan_to_num(default * low), np.nan_to_num(default * high)
    return np.minimum(a, b), np.maximum(a, b)


def out_of_range(param: Parameter, low: np.ndarray, high: np.ndarray) -> Optional[str]:
    """A sentence saying how ``[low, high]`` leaves the parameter's valid range, or None."""
    lo, hi = float(np.min(low)), float(np.max(high))
    if param.low is not None and (lo < param.low or (param.low_open and lo <= param.low)):
        return f"can reach {lo:.6g}, below the valid {'>' if param.low_open else '>='} {param.low:g}"
    if param.high is not None and hi > param.high:
        return f"can reach {hi:.6g}, above the valid <= {param.high:g}"
    if not (math.isfinite(lo) or param.low is None) or not (math.isfinite(hi) or param.high is None):
        return "is unbounded"
    if param.nonzero_vector and np.size(low) and ((np.asarray(low) <= 0) & (np.asarray(high) >= 0)).all(axis=-1).any():
        return "can be the zero vector (a direction needs a range that excludes it)"
    return None
