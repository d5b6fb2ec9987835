"""Per-env parameter writes on props and robots: read-back, isolation, validation, and the
physical effect of each parameter, measured."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert
from conftest import BACKENDS_UNDER_TEST

G = 9.81


@pytest.fixture(params=BACKENDS_UNDER_TEST)
def lift3(request):
    env = gym.make("FrankaLift-v1", num_envs=3, sim_backend=request.param)
    env.reset(seed=0)
    yield env.unwrapped
    env.close()


@pytest.fixture(scope="module")
def lift_cpu():
    """One env for the validation tests (validation runs before any backend call)."""
    env = gym.make("FrankaLift-v1", num_envs=3)
    env.reset(seed=0)
    yield env.unwrapped
    env.close()


def _all_params(u) -> dict:
    b, r = u.block, u.agent.robot
    return {name: getattr(b, name).clone() for name in ("mass", "inertia", "static_friction", "dynamic_friction",
                                                        "restitution", "linear_damping", "angular_damping")} | {
        name: getattr(r, name).clone() for name in ("joint_stiffness", "joint_damping", "joint_friction",
                                                    "joint_armature", "joint_force_limit")}


def test_writes_read_back_in_the_listed_envs_only(lift3):
    u = lift3
    before = _all_params(u)
    assert torch.allclose(before["mass"], torch.full((3,), 0.05))
    u.block.set_mass([0.2], env_ids=[1])
    u.block.set_material(static_friction=[1.1], dynamic_friction=0.9, restitution=[0.5], env_ids=torch.tensor([2]))
    u.block.set_damping(linear=[0.7], angular=[0.3], env_ids=[0])
    u.agent.robot.set_joint_drive(stiffness=[[2000.0, 3000.0]], damping=50.0, env_ids=[1],
                                  joints=["panda_joint2", "panda_joint1"])
    u.agent.robot.set_joint_friction(0.25, env_ids=np.array([2]))
    u.agent.robot.set_joint_armature([[0.1] * 9], env_ids=[0])
    after = _all_params(u)
    assert after["mass"].tolist() == pytest.approx([0.05, 0.2, 0.05], abs=1e-7)
    # inertia scaled with the mass: a uniform cube's a^2 m / 6
    assert after["inertia"][1] == pytest.approx(torch.full((3,), 0.05**2 * 0.2 / 6), rel=1e-5)
    assert torch.equal(after["inertia"][[0, 2]], before["inertia"][[0, 2]])
    assert after["static_friction"].tolist() == pytest.approx([0.3, 0.3, 1.1])
    assert after["dynamic_friction"].tolist() == pytest.approx([0.3, 0.3, 0.9])
    assert after["restitution"].tolist() == pytest.approx([0.0, 0.0, 0.5])
    assert after["linear_damping"][0] == pytest.approx(0.7) and after["angular_damping"][0] == pytest.approx(0.3)
    k = after["joint_stiffness"][1]
    assert k[1] == 2000 and k[0] == 3000 and (k[2:] == 1000).all()
    assert (after["joint_damping"][1, :2] == 50).all() and (after["joint_damping"][1, 2:] == 100).all()
    assert (after["joint_friction"][2] == 0.25).all() and (after["joint_armature"][0] == pytest.approx(0.1))
    assert torch.equal(after["joint_force_limit"], before["joint_force_limit"])
    for name, value in before.items():  # every env not listed kept every parameter
        listed = {"mass": 1, "inertia": 1, "static_friction": 2, "dynamic_friction": 2, "restitution": 2,
                  "linear_damping": 0, "angular_damping": 0, "joint_stiffness": 1, "joint_damping": 1,
                  "joint_friction": 2, "joint_armature": 0}.get(name)
        others = [i for i in range(3) if i != listed]
        assert torch.equal(after[name][others], value[others]), name


@pytest.mark.parametrize("call, error", [
    (lambda u: u.block.set_mass([0.1, float("nan")], env_ids=[0, 1]), ValueError),
    (lambda u: u.block.set_mass([0.1, 0.0], env_ids=[0, 1]), ValueError),
    (lambda u: u.block.set_mass([0.1, 0.2]), ValueError),  # 2 values for 3 envs
    (lambda u: u.block.set_mass(0.1, env_ids=[3]), IndexError),
    (lambda u: u.block.set_material(static_friction=[0.5], restitution=[1.5], env_ids=[0]), ValueError),
    (lambda u: u.block.set_material(dynamic_friction=-0.1), ValueError),
    (lambda u: u.block.set_damping(linear=0.5, angular=float("inf")), ValueError),
    (lambda u: u.block.set_mass("heavy"), TypeError),
    (lambda u: u.block.set_mass(True, env_ids=[0]), TypeError),  # a bool is no mass
    (lambda u: u.block.set_mass(0.1, env_ids=[0, 0]), ValueError),
    (lambda u: u.block.set_mass([0.1, 0.2], env_ids=[True, False]), ValueError),  # mask of 2 for 3 envs
    (lambda u: u.agent.robot.set_joint_drive(stiffness=[1e3] * 9, damping=-1.0), ValueError),
    (lambda u: u.agent.robot.set_joint_drive(stiffness=1e3, joints=["elbow"]), KeyError),
    (lambda u: u.agent.robot.set_joint_friction([[0.1] * 8], env_ids=[0]), ValueError),
    (lambda u: u.agent.robot.set_joint_armature(float("nan"), env_ids=[0]), ValueError),
])
def test_bad_values_raise_and_write_nothing(lift_cpu, call, error):
    before = _all_params(lift_cpu)
    with pytest.raises(error):
        call(lift_cpu)
    after = _all_params(lift_cpu)
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_mass_writes_never_drift(lift_cpu):
    """Inertia is rescaled from the built body, not from the last write: writing a mass again
    restores the body bit for bit (a seeded reset then replays exactly)."""
    block = lift_cpu.block
    block.set_mass(0.07, env_ids=[0])
    first = block.inertia[0].clone()
    for mass in (0.031, 0.149, 0.0917, 0.113):
        block.set_mass(mass, env_ids=[0])
    block.set_mass(0.07, env_ids=[0])
    assert torch.equal(block.inertia[0], first)
    block.set_mass(0.05, env_ids=[0])


def test_colour_needs_rendering():
    env = gym.make("FrankaLift-v1", num_envs=1)
    with pytest.raises(RuntimeError, match="render"):
        env.unwrapped.block.set_color([0.0, 1.0, 0.0])
    with pytest.raises(RuntimeError, match="render"):
        env.unwrapped.lights.set_intensity(1.0)
    env.close()


# ---------------------------------------------------------------------------- physical effects
def _support_force(u) -> np.ndarray:
    """Per env, the vertical force [N] the ground exerts on the block over the last step: the sum
    of their contact points' impulses / timestep (the force a lift has to take over)."""
    backend = u.backend
    bodies = backend._rigid[u.block._gid].components
    env_of = {body: i for i, body in enumerate(bodies)}
    out = np.zeros(len(bodies))
    for contact in backend.system.get_contacts():
        for body, sign in ((contact.bodies[0], 1.0), (contact.bodies[1], -1.0)):
            i = env_of.get(body)
            other = contact.bodies[1] if sign > 0 else contact.bodies[0]
            if i is not None and other.entity.name == "ground":
                out[i] += sign * sum(p.impulse[2] for p in contact.points)
    return out / backend.system.timestep


def test_heavier_cube_needs_more_lifting_force():
    """Cubes of 0.05 and 0.2 kg at rest: the ground's contact impulses carry m g (within 2 %),
    four times more for the heavier one; once the scripted expert lifts both, the ground
    carries nothing and both cubes are up (the gripper took over the weight)."""
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    u = env.unwrapped
    expert = LiftExpert(env)
    env.reset(seed=0)
    u.block.set_mass([0.05, 0.2])
    env.step(torch.zeros(2, 4))
    support = _support_force(u)
    assert support.tolist() == pytest.approx([0.05 * G, 0.2 * G], rel=0.02)
    assert support[1] / support[0] == pytest.approx(4.0, rel=0.02)
    for _ in range(60):
        info = env.step(expert.act())[4]
    assert info["is_grasped"].all() and info["success"].all()
    assert np.abs(_support_force(u)).max() < 1e-6
    env.close()


def _cube_env(n, backend="physx_cpu"):
    env = gym.make("FrankaLift-v1", num_envs=n, sim_backend=backend)
    env.reset(seed=0)
    return env, env.unwrapped


def _run(env, steps):
    for _ in range(steps):
        env.step(None)


@pytest.mark.parametrize("backend", BACKENDS_UNDER_TEST)
def test_higher_friction_slides_less(backend):
    """Cubes pushed at 1 m/s along x slide d = v^2 / (2 mu g), mu the average of the cube's and the
    ground's (0.3) coefficients (PhysX's default combine mode)."""
    env, u = _cube_env(3, backend)
    u.block.set_material(static_friction=[0.3, 0.7, 1.5], dynamic_friction=[0.3, 0.7, 1.5])
    start = u.block.state.pose[:, 0].clone()
    u.block.set_velocity(torch.tensor([[1.0, 0, 0, 0, 0, 0]] * 3))
    _run(env, 25)  # 1.25 s: every cube has stopped
    slid = (u.block.state.pose[:, 0] - start).tolist()
    env.close()
    mu = np.array([0.3, 0.5, 0.9])
    assert slid == pytest.approx((1.0 / (2 * mu * G)).tolist(), rel=0.12)
    assert slid[0] > slid[1] > slid[2]


def test_restitution_bounces():
    """Cubes dropped from 0.5 m: with restitution 0 they stay down, with 1.0 (average 0.5 with the
    ground) they rebound to about e^2 h = 0.125 m."""
    env, u = _cube_env(2)
    u.block.set_material(restitution=[0.0, 1.0])
    pose = u.block.state.pose
    pose[:, 2] = 0.5 + 0.025
    u.block.set_pose(pose)
    heights = []
    for _ in range(20):
        env.step(None)
        heights.append(u.block.state.pose[:, 2].numpy() - 0.025)
    env.close()
    top = np.max(heights[8:], axis=0)  # after the impact (the fall takes 0.32 s, 6.4 steps)
    assert top[0] < 0.01
    assert top[1] == pytest.approx(0.125, rel=0.35)


def test_damping_slows_a_free_body():
    """A cube thrown sideways in the air: its horizontal speed decays with the linear damping c
    (v(t) ~ v0 exp(-c t)), its spin with the angular damping; an undamped env keeps both."""
    env, u = _cube_env(2)
    u.block.set_damping(linear=[0.0, 2.0], angular=[0.0, 2.0])
    pose = u.block.state.pose
    pose[:, 2] = 2.0
    u.block.set_pose(pose)
    u.block.set_velocity(torch.tensor([[1.0, 0, 0, 0, 0, 5.0]] * 2))
    _run(env, 5)  # 0.25 s, still in the air
    vx = u.block.state.linear_velocity[:, 0].tolist()
    wz = u.block.state.angular_velocity[:, 2].tolist()
    env.close()
    assert vx[0] == pytest.approx(1.0, abs=1e-3) and wz[0] == pytest.approx(5.0, abs=1e-2)
    assert vx[1] == pytest.approx(math.exp(-2.0 * 0.25), rel=0.03)
    assert wz[1] == pytest.approx(5.0 * math.exp(-2.0 * 0.25), rel=0.03)


def _joint1_step_response(stiffness=None, damping=None, friction=None, armature=None, steps=3):
    """Joint 1 of three arms asked to move 0.3 rad; returns how far each moved after ``steps``."""
    env = gym.make("FrankaLift-v1", num_envs=3, control_mode="pd_joint_pos")
    u = env.unwrapped
    env.reset(seed=0)
    robot = u.agent.robot
    if stiffness is not None:
        robot.set_joint_drive(stiffness=stiffness, damping=damping, joints=["panda_joint1"])
    if friction is not None:
        robot.set_joint_friction(friction, joints=["panda_joint1"])
    if armature is not None:
        robot.set_joint_armature(armature, joints=["panda_joint1"])
    q0 = robot.state.qpos[:, 0].clone()
    action = torch.zeros(3, 8)
    action[:, :7] = robot.state.qpos[:, :7]
    action[:, 0] += 0.3
    action[:, 7] = 1.0
    for _ in range(steps):
        env.step(action)
    moved = (robot.state.qpos[:, 0] - q0).tolist()
    env.close()
    return moved


def test_stiffer_drives_track_targets_faster():
    """Gains x 0.3, x 1, x 3 (damping ratio kept): after one control step (0.05 s) the stiffer
    drives have covered more of a 0.3 rad target step."""
    moved = _joint1_step_response(stiffness=[[300.0], [1000.0], [3000.0]], damping=[[30.0], [100.0], [300.0]],
                                  steps=1)
    assert 0 < moved[0] < moved[1] < moved[2] < 0.3
    assert moved[2] > 1.5 * moved[0]


def test_armature_slows_the_joint():
    moved = _joint1_step_response(armature=[[0.0], [0.5], [2.0]], steps=1)
    assert moved[0] > moved[1] > moved[2] > 0
    assert moved[2] < 0.7 * moved[0]


def test_joint_friction_resists_motion():
    """PhysX's joint friction is a coefficient on the force the joint transmits: large values are
    needed to slow a driven joint visibly."""
    moved = _joint1_step_response(friction=[[0.0], [100.0], [1000.0]], steps=1)
    assert moved[0] > moved[1] > moved[2] > 0
    assert moved[2] < 0.8 * moved[0]

