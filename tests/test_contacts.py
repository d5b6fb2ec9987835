"""Contact queries: batched sums equal a plain per-point loop, and nothing stale after a write."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.agents.panda import LEFT_FINGER, RIGHT_FINGER
from simulo_envs.policies import LiftExpert
from conftest import BACKENDS_UNDER_TEST

FINGERS = (LEFT_FINGER, RIGHT_FINGER)


def reference_impulses(contacts, links, bodies) -> np.ndarray:
    """The definition: for every contact point between env i's link k and env i's body, add the
    point's impulse (+ when the link is ``bodies[0]`` of the contact, - otherwise)."""
    out = np.zeros((len(bodies), len(links[0]), 3))
    where = {link: (i, k) for i, env_links in enumerate(links) for k, link in enumerate(env_links)}
    env_of_body = {body: i for i, body in enumerate(bodies)}
    for contact in contacts:
        b0, b1 = contact.bodies
        for link, other, sign in ((b0, b1, 1.0), (b1, b0, -1.0)):
            hit = where.get(link)
            if hit is not None and env_of_body.get(other) == hit[0]:
                for point in contact.points:
                    out[hit] += sign * np.asarray(point.impulse, dtype=np.float64)
    return out


@pytest.fixture(params=BACKENDS_UNDER_TEST)
def grasping(request):
    """Three envs after 30 expert steps (seed 0): every env holds the cube (checked in the tests)."""
    env = gym.make("FrankaLift-v1", num_envs=3, control_mode="pd_ee_delta_pos", sim_backend=request.param)
    expert = LiftExpert(env)
    env.reset(seed=0)
    for _ in range(30):
        info = env.step(expert.act())[4]
    yield env, info
    env.close()


def _finger_forces(env) -> torch.Tensor:
    u = env.unwrapped
    return u.agent.robot.contact_forces(FINGERS, u.block)


def test_batched_contact_forces_equal_the_per_point_loop():
    env = gym.make("FrankaLift-v1", num_envs=4, control_mode="pd_ee_delta_pos")
    u = env.unwrapped
    backend, robot = u.backend, u.agent.robot
    expert = LiftExpert(env)
    env.reset(seed=1)
    links = [[backend._arts[robot._gid].links[i][robot.link_index(n)] for n in FINGERS] for i in range(4)]
    bodies = backend._rigid[u.block._gid].components
    touching = 0
    for _ in range(36):
        env.step(expert.act())
        want = reference_impulses(backend.system.get_contacts(), links, bodies) / backend.system.timestep
        got = _finger_forces(env).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
        touching += int((np.linalg.norm(want, axis=2) > 0.5).all(axis=1).sum())
    assert touching > 20, "the expert should have held the cube with both fingers for a while"
    env.close()


def test_partial_reset_after_a_grasp_reports_no_grasp(grasping):
    env, info = grasping
    assert info["is_grasped"].tolist() == [True, True, True]
    before = _finger_forces(env)
    obs, reset_info = env.reset(options={"env_idx": [0, 1]})
    # The reset envs: gripper open at rest, cube on the table -> no grasp, in info and in obs.
    assert reset_info["is_grasped"].tolist() == [False, False, True]
    assert obs[:, -1].tolist() == [0.0, 0.0, 1.0]  # is_grasped is the last state entry
    forces = _finger_forces(env)
    assert torch.all(forces[:2] == 0)
    torch.testing.assert_close(forces[2], before[2], rtol=0, atol=0)  # env 2 untouched
    # After a step, contacts are PhysX's again: the open gripper at rest touches nothing.
    info = env.step(torch.zeros(3, 4))[4]
    assert info["is_grasped"][:2].tolist() == [False, False]


def test_a_state_write_of_one_env_clears_only_its_contacts_until_the_next_step():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=0)
    for _ in range(40):
        info = env.step(expert.act())[4]
    assert info["is_grasped"].tolist() == [True, True]
    u = env.unwrapped
    before = _finger_forces(env)
    state = u.get_state()
    u.set_state(state[:1], env_idx=[0])  # env 0 written with its own values
    after = _finger_forces(env)
    assert torch.all(after[0] == 0) and torch.equal(after[1], before[1])
    assert u.get_info()["is_grasped"].tolist() == [False, True]
    # The written state still holds the cube: the next step finds the contacts again.
    assert env.step(None)[4]["is_grasped"].tolist() == [True, True]
    env.close()


def test_prop_write_clears_contacts_and_drive_targets_clear_nothing(grasping):
    env, _ = grasping
    u = env.unwrapped
    env.step(torch.tensor([[0.0, 0.0, 0.0, -1.0]] * 3))
    before = _finger_forces(env)
    assert (before.norm(dim=2) > 0.5).all(), "all three envs hold the cube"
    u.agent.robot.set_drive_targets(u.agent.robot.state.drive_targets)
    assert torch.equal(_finger_forces(env), before)
    u.block.set_velocity(torch.zeros(1, 6), env_ids=[1])
    forces = _finger_forces(env)
    assert torch.all(forces[1] == 0) and torch.equal(forces[[0, 2]], before[[0, 2]])


def test_qpos_write_reanchors_the_end_effector_target():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    u = env.unwrapped
    env.reset(seed=0)
    for _ in range(5):
        env.step(torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]))
    robot = u.agent.robot
    qpos = robot.state.qpos
    qpos[0, 0] += 0.4  # turn env 0's base joint: the TCP swings sideways
    robot.set_qpos(qpos[:1], env_ids=[0])
    target = u.agent.controller.controllers["arm"].target
    torch.testing.assert_close(target[0], robot.state.tcp_pose[0])
    tcp = robot.state.tcp_pose
    for _ in range(5):
        env.step(torch.zeros(2, 4))
    # A zero action holds the teleported TCP; a stale target would pull it back 0.1 m per step.
    assert (robot.state.tcp_pose[:, :3] - tcp[:, :3]).norm(dim=1).max() < 0.01
    env.close()
