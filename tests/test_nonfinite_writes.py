"""Every public write refuses NaN, inf and magnitudes beyond 1e30 with ValueError, and writes
nothing: not the listed envs, not the others, not one coefficient of several.

The writers are enumerated from the classes, not listed by hand: every public ``set_*`` method
and every property setter of the classes users write simulation values through must have a probe
in ``PROBES`` (or a reason in ``NOT_SIMULATION_WRITES``), so a new writer without the check fails
``test_every_public_writer_has_a_probe`` until it gets one.
"""

import inspect
import math

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs import ArticulatedProp, BaseEnv, Cuboid, MultiShapeProp, Physics, Pose, Prop, Robot, Scene, Sphere
from simulo_envs.agents.panda import Panda
from simulo_envs.authoring.cabinet import drawer_cabinet
from simulo_envs.controllers.combined import CombinedController
from simulo_envs.envs.visuals import Lights, SensorCamera
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.workers.sharded import ShardedEnv

N = 3
BAD = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "1e31": 1e31}
CLASSES = (Prop, MultiShapeProp, ArticulatedProp, Robot, BaseEnv, Scene, Lights, SensorCamera, CombinedController,
           Panda, ShardedEnv)
NOT_SIMULATION_WRITES = {
    "BaseEnv.set_wrapper_attr": "Gymnasium's attribute setter: sets Python attributes, each validating its own value",
    "BaseEnv.np_random=": "Gymnasium's generator slot; no simulation value",
    "ShardedEnv.set_attr": "sets a Python attribute in every worker (as set_wrapper_attr)",
    "ShardedEnv.set_wrapper_attr": "Gymnasium's attribute setter, as on BaseEnv",
    "ShardedEnv.np_random=": "Gymnasium's generator slot, as on BaseEnv",
}


class _AllObjects(FrankaLiftEnv):
    """FrankaLift plus a multi-shape prop and a drawer cabinet: one object of every kind."""

    def _load_scene(self, options):
        super()._load_scene(options)
        self.shapes = self.scene.add(MultiShapeProp("Shapes", [
            Cuboid("box", (0.04,) * 3, Pose([0.3, 0.5, 0.02]), Physics.rigid(mass=0.1)),
            Sphere("ball", 0.02, Pose([0.3, 0.5, 0.02]), Physics.rigid(mass=0.1))]), at="/World/Shapes")
        self.cabinet = self.scene.add(ArticulatedProp(drawer_cabinet(pose=Pose([0.9, 0.7, 0.0]))), at="/World/Cabinet")


@pytest.fixture(scope="module")
def env():
    e = _AllObjects(num_envs=N, obs_mode="rgb", sensor_configs=dict(width=16, height=16))
    yield e
    e.close()


def _rows(width, bad):
    """Rows for env_ids [0, 2]: env 0's finite (a plausible value), env 2's first entry ``bad``;
    shape (2, width), or (2,) for ``width`` 0."""
    rows = np.full((2, width) if width else (2,), 0.5, dtype=np.float64)
    if width:
        rows[1, 0] = bad
    else:
        rows[1] = bad
    return rows


def _pose_rows(env_obj_pose, bad):
    rows = env_obj_pose[[0, 2]].clone().double()
    rows[1, 0] = bad
    return rows


def _cam(env):
    return next(iter(env.sensor_cameras.values()))


IDS = [0, 2]
PROBES = {
    "Prop.set_pose": lambda e, b: e.block.set_pose(_pose_rows(e.block.state.pose, b), env_ids=IDS),
    "Prop.set_velocity": lambda e, b: e.block.set_velocity(_rows(6, b), env_ids=IDS),
    "Prop.set_mass": lambda e, b: e.block.set_mass(_rows(0, b), env_ids=IDS),
    "Prop.set_material": lambda e, b: e.block.set_material(static_friction=0.5, restitution=_rows(0, b), env_ids=IDS),
    "Prop.set_damping": lambda e, b: e.block.set_damping(linear=0.5, angular=_rows(0, b), env_ids=IDS),
    "Prop.set_color": lambda e, b: e.block.set_color(_rows(4, b), env_ids=IDS),
    "Prop.set_scale": lambda e, b: Prop(Cuboid("x", (0.1,) * 3)).set_scale([1.0, b]),
    "MultiShapeProp.set_pose": lambda e, b: e.shapes.set_pose(_pose_rows(e.shapes.state.pose, b), env_ids=IDS),
    "MultiShapeProp.set_velocity": lambda e, b: e.shapes.set_velocity(_rows(6, b), env_ids=IDS),
    "MultiShapeProp.set_mass": lambda e, b: e.shapes.set_mass(_rows(0, b), env_ids=IDS),
    "MultiShapeProp.set_material": lambda e, b: e.shapes.set_material(dynamic_friction=_rows(0, b), env_ids=IDS),
    "MultiShapeProp.set_damping": lambda e, b: e.shapes.set_damping(linear=_rows(0, b), env_ids=IDS),
    "MultiShapeProp.set_color": lambda e, b: e.shapes.set_color(_rows(3, b), env_ids=IDS),
    "MultiShapeProp.set_scale": lambda e, b: MultiShapeProp("m", [Cuboid("x", (0.1,) * 3)]).set_scale(b),
    "ArticulatedProp.set_pose": lambda e, b: e.cabinet.set_pose(_pose_rows(e.cabinet.state.root_pose, b), env_ids=IDS),
    "ArticulatedProp.set_velocity": lambda e, b: e.cabinet.set_velocity(_rows(6, b), env_ids=IDS),
    "ArticulatedProp.set_qpos": lambda e, b: e.cabinet.set_qpos(_rows(1, b) * 0.1, env_ids=IDS),
    "ArticulatedProp.set_qvel": lambda e, b: e.cabinet.set_qvel(_rows(1, b), env_ids=IDS),
    "ArticulatedProp.set_joint_drive": lambda e, b: e.cabinet.set_joint_drive(stiffness=1.0, damping=_rows(1, b), env_ids=IDS),
    "ArticulatedProp.set_joint_friction": lambda e, b: e.cabinet.set_joint_friction(_rows(1, b), env_ids=IDS),
    "ArticulatedProp.set_joint_armature": lambda e, b: e.cabinet.set_joint_armature(_rows(1, b), env_ids=IDS),
    "Robot.set_qpos": lambda e, b: e.agent.robot.set_qpos(_robot_rows(e, b), env_ids=IDS),
    "Robot.set_qvel": lambda e, b: e.agent.robot.set_qvel(_rows(9, b), env_ids=IDS),
    "Robot.set_drive_targets": lambda e, b: e.agent.robot.set_drive_targets(_robot_rows(e, b), env_ids=IDS),
    "Robot.set_joint_drive": lambda e, b: e.agent.robot.set_joint_drive(stiffness=_rows(9, b), env_ids=IDS),
    "Robot.set_joint_friction": lambda e, b: e.agent.robot.set_joint_friction(_rows(9, b), env_ids=IDS),
    "Robot.set_joint_armature": lambda e, b: e.agent.robot.set_joint_armature(_rows(9, b), env_ids=IDS),
    "BaseEnv.set_state": lambda e, b: e.set_state(_state_rows(e, b), env_idx=IDS),
    "BaseEnv.set_state_dict": lambda e, b: e.set_state_dict(_state_dict_rows(e, b), env_idx=IDS),
    "BaseEnv.max_episode_steps=": lambda e, b: setattr(e, "max_episode_steps", b),
    "BaseEnv.set_elapsed_steps": lambda e, b: e.set_elapsed_steps(np.array([3.0, b]), env_idx=IDS),
    "Scene.set_lighting": lambda e, b: Scene(1).set_lighting(ambient=(0.3, b, 0.3)),
    "Lights.set_ambient": lambda e, b: e.lights.set_ambient(_rows(3, b), env_ids=IDS),
    "Lights.set_color": lambda e, b: e.lights.set_color(_rows(3, b), env_ids=IDS, light=0),
    "Lights.set_intensity": lambda e, b: e.lights.set_intensity(_rows(0, b), env_ids=IDS, light=0),
    "Lights.set_direction": lambda e, b: e.lights.set_direction(_rows(3, b), env_ids=IDS, light=0),
    "SensorCamera.set_local_pose": lambda e, b: _cam(e).set_local_pose(_pose_rows(_cam(e).local_pose, b), env_ids=IDS),
    "SensorCamera.set_pose_jitter": lambda e, b: _cam(e).set_pose_jitter(_rows(6, b), env_ids=IDS),
    "SensorCamera.set_fov": lambda e, b: _cam(e).set_fov(np.array([0.8, b]), env_ids=IDS),
    "SensorCamera.set_image_noise": lambda e, b: _cam(e).set_image_noise(IDS, noise_std=np.array([0.01, b])),
    "Prop.set_texture": lambda e, b: e.block.set_texture(np.array([1.0, b]), env_ids=IDS),
    "MultiShapeProp.set_texture": lambda e, b: e.shapes.set_texture(np.array([1.0, b]), env_ids=IDS),
    "CombinedController.set_action": lambda e, b: e.agent.controller.set_action(_action(b)),
    "Panda.set_action": lambda e, b: e.agent.set_action(_action(b)),
    # ShardedEnv's writers are probed over its workers in test_sharded.py
    # (test_writers_refuse_non_finite_values), with the env that file shares.
    "ShardedEnv.set_state": None,
    "ShardedEnv.set_state_dict": None,
    "ShardedEnv.set_elapsed_steps": None,
}
OTHER_VALUE_WRITES = {
    "BaseEnv.step": lambda e, b: e.step(_action(b)),
    "BaseEnv.reset(reset_to_env_states)": lambda e, b: e.reset(options={
        "env_idx": IDS, "reset_to_env_states": {"env_states": _state_rows(e, b)}}),
    "BaseEnv.reset(reset_to_env_states obs)": lambda e, b: e.reset(options={
        "env_idx": IDS, "reset_to_env_states": {"env_states": e.get_state()[IDS], "obs": _obs_rows(e, b)}}),
    "Panda.reset(qpos)": lambda e, b: e.agent.reset(IDS, qpos=_robot_rows(e, b)),
}


CLIPPED = {"BaseEnv.step", "CombinedController.set_action", "Panda.set_action"}
"""Any finite value is safe here: actions are clipped to the action space, drive targets to the
joint limits."""
NOT_SIMULATED = {"BaseEnv.reset(reset_to_env_states obs)"}
"""Observation rows handed back as given (finite ones are accepted at any size): no simulation value."""


def _robot_rows(env, bad):
    rows = env.agent.robot.state.qpos[IDS].clone().double()
    rows[1, 2] = bad
    return rows


def _state_rows(env, bad):
    rows = env.get_state()[IDS].double()
    rows[1, 4] = bad
    return rows


def _state_dict_rows(env, bad):
    state = env.get_state_dict()
    rows = {kind: {p: v[IDS].double() for p, v in d.items()} for kind, d in state.items()}
    rows["articulations"]["Robot"][1, 15] = bad
    return rows


def _obs_rows(env, bad):
    def rows_of(value):
        return {k: rows_of(v) for k, v in value.items()} if isinstance(value, dict) else value[IDS].clone()

    rows = rows_of(env.get_obs())
    rows["agent"]["qpos"] = rows["agent"]["qpos"].double()
    rows["agent"]["qpos"][1, 0] = bad
    return rows


def _action(bad):
    action = torch.zeros(N, 8, dtype=torch.float64)
    action[1, 3] = bad
    return action


def public_writers(cls) -> list[str]:
    """``Class.method`` for every public ``set_*`` method, ``Class.name=`` for every property setter."""
    out = []
    for name, member in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            if member.fset is not None:
                out.append(f"{cls.__name__}.{name}=")
        elif callable(member) and name.startswith("set_"):
            out.append(f"{cls.__name__}.{name}")
    return out


def test_every_public_writer_has_a_probe():
    found = {w for cls in CLASSES for w in public_writers(cls)}
    missing = sorted(found - set(PROBES) - set(NOT_SIMULATION_WRITES))
    assert not missing, f"public writers without a non-finite probe in this file: {missing}"
    stale = sorted((set(PROBES) | set(NOT_SIMULATION_WRITES)) - found)
    assert not stale, f"probes for writers that no longer exist: {stale}"


def _snapshot(env) -> dict:
    """Everything the probed writers could change, in every env."""
    robot, out = env.agent.robot, {"state": env.get_state()}
    out["targets"] = robot.state.drive_targets
    for prefix, obj in (("block", env.block), ("shapes", env.shapes)):
        for name in ("mass", "inertia", "static_friction", "dynamic_friction", "restitution", "linear_damping",
                     "angular_damping", "color"):
            out[f"{prefix}.{name}"] = getattr(obj, name)
    for prefix, obj in (("robot", robot), ("cabinet", env.cabinet)):
        for name in ("joint_stiffness", "joint_damping", "joint_force_limit", "joint_friction", "joint_armature"):
            out[f"{prefix}.{name}"] = getattr(obj, name)
    for name in ("ambient", "color", "intensity", "direction"):
        out[f"lights.{name}"] = getattr(env.lights, name)
    out["camera"] = _cam(env).local_pose
    out["camera.fov"] = _cam(env).fov
    out.update({f"camera.{k}": v for k, v in _cam(env).image_noise.items()})
    out["elapsed_steps"] = env.elapsed_steps
    out["max_episode_steps"] = torch.tensor(env.max_episode_steps)
    return out


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("writer", sorted(w for w, p in {**PROBES, **OTHER_VALUE_WRITES}.items() if p is not None))
def test_writer_refuses_non_finite_values_and_writes_nothing(env, writer, bad):
    probe = {**PROBES, **OTHER_VALUE_WRITES}[writer]
    before = _snapshot(env)
    if bad == "1e31" and writer in CLIPPED | NOT_SIMULATED:
        pytest.skip("a finite value is accepted here (CLIPPED, NOT_SIMULATED)")
    with pytest.raises(ValueError, match=r"NaN|inf|1e\+30|finite|must be"):
        probe(env, BAD[bad])
    after = _snapshot(env)
    for key in before:
        assert torch.equal(before[key], after[key]), f"{writer} changed {key}"


def test_finite_but_absurd_values_are_written(env):
    """Absurd but finite values are accepted (the per-step fault checks handle them)."""
    env.reset(seed=0)
    env.block.set_velocity(torch.tensor([[1e6, 0, 0, 0, 0, 0]]), env_ids=[1])
    assert env.block.state.linear_velocity[1, 0] == 1e6
    env.agent.robot.set_drive_targets(torch.full((1, 9), 1e3), env_ids=[1])
    assert env.agent.robot.state.drive_targets[1, 0] == 1e3
    env.reset(seed=0)
