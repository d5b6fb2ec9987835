"""A fault in one env leaves the others as they were: each kind of fault is injected into env 0
and every other env is compared with a control run that had no fault, step by step.

Guarantee (documented in ``simulo_envs/envs/faults.py``): with one PhysX system per env
(``isolate_envs``) the other envs are bit-identical. In the shared PhysX system (the default)
their observations, rewards, episode flags and body/joint positions agree to 1e-5 (measured:
at most 9e-7), and the velocities of their bodies to 1e-3: a body resting in contact jitters by
up to about 4e-4 m/s whenever another env's broadphase picture changes, faulty or not (see
``test_a_legitimate_change_moves_resting_velocities_as_much``).
"""

import functools

import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.tasks.franka_lift import FrankaLiftEnv

N = 4
STEPS, AT = 11, 3  # steps per run; the fault is injected before step AT


class _Injected(FrankaLiftEnv):
    """FrankaLift that runs ``per_substep(env)`` before every physics step once armed."""

    per_substep = None

    def _before_simulation_step(self):
        if self.per_substep is not None:
            self.per_substep(self)


def _velocity(env):
    env.block.set_velocity(torch.tensor([[1e6, 0.0, 0.0, 0.0, 0.0, 0.0]]), env_ids=[0])


def _into_the_gripper(env):
    pose = env.block.state.pose[:1]
    pose[:, :3] = env.agent.robot.state.link_pose("panda_hand")[:1, :3]
    env.block.set_pose(pose, env_ids=[0])


def _target_beyond_limits(env):
    # Held on every physics step (the controller rewrites targets from the action each step).
    env.per_substep = lambda e: e.agent.robot.set_drive_targets(torch.full((1, 9), 1e3), env_ids=[0])


def _huge_force(env):
    # No public force API: applied to env 0's cube through SAPIEN (physx_cpu internals), 1e6 N up.
    env.backend._rigid[env.block._gid].components[0].add_force_torque(
        np.array([0.0, 0.0, 1e6], dtype=np.float32), np.zeros(3, dtype=np.float32))


def _lift_one_metre(env):
    pose = env.block.state.pose[:1]
    pose[:, 2] += 1.0
    env.block.set_pose(pose, env_ids=[0])


FAULTS = {"velocity 1e6 m/s": _velocity, "cube inside the gripper": _into_the_gripper,
          "joint targets 1e3 rad": _target_beyond_limits, "force 1e6 N": _huge_force}


@functools.lru_cache(maxsize=None)
def _run(inject: str = "", isolate: bool = False):
    env = _Injected(num_envs=N, sim_config=dict(isolate_envs=isolate))
    try:
        env.reset(seed=4)
        rng = np.random.default_rng(3)
        out = {k: [] for k in ("obs", "reward", "terminated", "truncated", "fault", "state")}
        for t in range(STEPS):
            if t == AT and inject:
                {**FAULTS, "lift": _lift_one_metre}[inject](env)
            obs, reward, terminated, truncated, info = env.step(torch.from_numpy(rng.uniform(-1, 1, (N, 8)).astype(np.float32)))
            for key, value in (("obs", obs), ("reward", reward), ("terminated", terminated),
                               ("truncated", truncated), ("fault", info["sim_fault"]), ("state", env.get_state())):
                out[key].append(value.clone())
        return {k: torch.stack(v) for k, v in out.items()}
    finally:
        env.close()


# get_state columns: block [pose 7, velocity 6], robot [root pose 7, root velocity 6, qpos 9, qvel 9]
POSITIONS = list(range(0, 7)) + list(range(13, 20)) + list(range(26, 35))
VELOCITIES = [c for c in range(44) if c not in POSITIONS]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_other_envs_match_the_control_run_in_a_shared_system(fault):
    ctrl, run = _run(), _run(fault)
    for key in ("terminated", "truncated", "fault"):
        assert torch.equal(run[key][:, 1:], ctrl[key][:, 1:]), key
    assert not run["fault"][:, 1:].any()
    torch.testing.assert_close(run["obs"][:, 1:], ctrl["obs"][:, 1:], atol=1e-5, rtol=0)
    torch.testing.assert_close(run["reward"][:, 1:], ctrl["reward"][:, 1:], atol=1e-5, rtol=0)
    torch.testing.assert_close(run["state"][:, 1:, POSITIONS], ctrl["state"][:, 1:, POSITIONS], atol=1e-5, rtol=0)
    torch.testing.assert_close(run["state"][:, 1:, VELOCITIES], ctrl["state"][:, 1:, VELOCITIES], atol=1e-3, rtol=0)
    assert not torch.equal(run["obs"][:, 0], ctrl["obs"][:, 0])  # env 0 did change


@pytest.mark.parametrize("fault", list(FAULTS))
def test_other_envs_are_bit_identical_with_isolated_envs(fault):
    ctrl, run = _run(isolate=True), _run(fault, isolate=True)
    for key in ctrl:
        assert torch.equal(run[key][:, 1:], ctrl[key][:, 1:]), key


def test_faults_that_leave_the_physical_range_are_flagged():
    # 1e6 m/s and 1e6 N exceed the speed limit: env 0 is quarantined from the step it happens.
    for fault in ("velocity 1e6 m/s", "force 1e6 N"):
        assert _run(fault)["fault"][AT:, 0].all(), fault
    # Targets far beyond the joint limits: PhysX holds the joints at their limits, a valid state.
    run = _run("joint targets 1e3 rad")
    assert not run["fault"].any()
    assert torch.isfinite(run["state"]).all()


def test_a_legitimate_change_moves_resting_velocities_as_much():
    """Lifting env 0's cube by 1 m (no fault) moves the other envs' velocities as a fault does:
    the shared system's float noise, not a leak of the fault."""
    ctrl, run = _run(), _run("lift")
    assert not run["fault"].any()
    velocity_noise = (run["state"][:, 1:, VELOCITIES] - ctrl["state"][:, 1:, VELOCITIES]).abs().max()
    assert 0 < velocity_noise < 1e-3
    torch.testing.assert_close(run["obs"][:, 1:], ctrl["obs"][:, 1:], atol=1e-5, rtol=0)
