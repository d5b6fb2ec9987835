"""Fault detection and quarantine (``simulo_envs/envs/faults.py``): every reason is detected,
a quarantined env reports finite outputs and truncation until its reset, and its reset restores
it fully, also when PhysX itself holds NaN for it."""

import math

import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import simulo_envs  # noqa: F401
from conftest import BACKENDS_UNDER_TEST
from simulo_envs import Cuboid, Physics, Pose, Prop, SimConfig
from simulo_envs.envs.faults import FaultReason
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.vector.vector_env import SimuloVectorEnv

N = 3
NAN = float("nan")
ZERO = torch.zeros(N, 8)


def _step(env, count=1, action=ZERO):
    for _ in range(count):
        out = env.step(action)
    return out


@pytest.fixture(scope="module")
def env():
    e = FrankaLiftEnv(num_envs=N)
    yield e
    e.close()


def _poison_block_velocity(env, i):
    """Write NaN into PhysX's own state of env ``i``'s cube, past every check (physx_cpu)."""
    env.backend._rigid[env.block._gid].components[i].linear_velocity = [NAN, 0.0, 0.0]


# ---------------------------------------------------------------- detection: each reason
def test_healthy_steps_report_no_fault(env):
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, reward, terminated, truncated, info = env.step(torch.from_numpy(rng.uniform(-1, 1, (N, 8)).astype(np.float32)))
        assert not info["sim_fault"].any() and not truncated.any()
        assert info["sim_fault"].dtype == torch.bool and info["sim_fault"].shape == (N,)
        assert torch.equal(info["sim_fault_reason"], torch.zeros(N, dtype=torch.int32))


def test_absurd_velocity_is_a_speed_and_box_fault(env):
    env.reset(seed=1)
    counts = env.fault_counts
    _step(env, 2)
    env.block.set_velocity(torch.tensor([[1e6, 0, 0, 0, 0, 0]]), env_ids=[1])
    obs, reward, terminated, truncated, info = _step(env)
    assert info["sim_fault"].tolist() == [False, True, False]
    assert FaultReason(int(info["sim_fault_reason"][1])) == FaultReason.LINEAR_SPEED | FaultReason.OUT_OF_BOX
    assert (info["sim_fault_count"] - counts).tolist() == [0, 1, 0]


def test_leaving_the_box_is_a_fault(env):
    env.reset(seed=1)
    pose = env.block.state.pose[2:3]
    pose[0, 0] += 5.5  # off the 10 m square around the env origin, resting on the ground
    env.block.set_pose(pose, env_ids=[2])
    env.block.set_velocity(torch.zeros(1, 6), env_ids=[2])
    info = _step(env)[4]
    assert info["sim_fault"].tolist() == [False, False, True]
    assert FaultReason(int(info["sim_fault_reason"][2])) & FaultReason.OUT_OF_BOX


@pytest.mark.parametrize("isolate", [False, True])
def test_non_finite_physx_state_is_a_fault(isolate):
    e = FrankaLiftEnv(num_envs=N, sim_config=dict(isolate_envs=isolate))
    try:
        _poison_block_velocity(e, 0)
        obs, reward, terminated, truncated, info = e.step(ZERO)
        assert info["sim_fault"][0] and truncated[0]
        assert FaultReason(int(info["sim_fault_reason"][0])) == FaultReason.NONFINITE_STATE
        if isolate:
            assert info["sim_fault"].tolist() == [True, False, False]
        # In one shared PhysX system a NaN can reach the other envs within the same step
        # (measured: every cube of this batch); they are caught and quarantined as well.
        assert torch.isfinite(obs).all() and torch.isfinite(reward).all()
        # Parked at once: PhysX and the task's code see the home state, not the NaN.
        assert torch.isfinite(e.get_state()).all()
        e.reset(options={"env_idx": torch.nonzero(info["sim_fault"]).flatten()})
        info = e.step(ZERO)[4]
        assert not info["sim_fault"].any()
    finally:
        e.close()


def test_speed_limits_come_from_sim_config():
    e = FrankaLiftEnv(num_envs=2, sim_config=dict(max_joint_speed=1.0, max_angular_speed=5.0))
    try:
        e.agent.robot.set_qvel(torch.full((1, 9), 3.0), env_ids=[0])
        e.block.set_velocity(torch.tensor([[0, 0, 0, 0, 0, 40.0]]), env_ids=[1])
        info = e.step(None)[4]
        assert FaultReason(int(info["sim_fault_reason"][0])) & FaultReason.JOINT_SPEED
        assert FaultReason(int(info["sim_fault_reason"][1])) & FaultReason.ANGULAR_SPEED
    finally:
        e.close()


def test_detection_can_be_switched_off():
    e = FrankaLiftEnv(num_envs=2, sim_config=dict(detect_faults=False))
    try:
        e.block.set_velocity(torch.tensor([[1e6, 0, 0, 0, 0, 0]]), env_ids=[0])
        obs, reward, terminated, truncated, info = e.step(None)
        assert not info["sim_fault"].any() and not truncated.any()
        assert e.block.state.pose[0, 0] > 1e4  # nothing parked it
    finally:
        e.close()


@pytest.mark.parametrize("bad", [dict(max_linear_speed=0.0), dict(max_joint_speed=math.inf),
                                 dict(max_angular_speed=-1.0), dict(fault_box_low=(0, 0, 0), fault_box_high=(1, 1, 0)),
                                 dict(fault_box_low=(0, 0, math.nan)), dict(fault_box_high=(1, 1)),
                                 dict(detect_faults=1)])
def test_bad_limits_are_refused(bad):
    with pytest.raises(ValueError, match="sim_config"):
        SimConfig(**bad)


class _PoisonedObs(FrankaLiftEnv):
    """FrankaLift whose observation holds NaN in the envs of ``poisoned`` (a task's own bug)."""

    poisoned: tuple = ()

    def _get_obs_extra(self, info):
        extra = super()._get_obs_extra(info)
        column = torch.zeros(self.num_envs, 1)
        column[list(self.poisoned)] = NAN
        extra["poison"] = column
        return extra


def test_non_finite_observation_is_a_fault_and_never_returned():
    e = _PoisonedObs(num_envs=N)
    try:
        before = _step(e)[0]
        e.poisoned = (2,)
        obs, reward, terminated, truncated, info = _step(e)
        assert torch.isfinite(obs).all() and torch.isfinite(reward).all()
        assert info["sim_fault"].tolist() == [False, False, True]
        assert FaultReason(int(info["sim_fault_reason"][2])) == FaultReason.NONFINITE_OUTPUT
        assert torch.equal(obs[2], before[2])  # the last observation returned before the fault
    finally:
        e.close()


# ---------------------------------------------------------------- quarantine
def test_quarantined_env_outputs_until_its_reset(env):
    env.reset(seed=2)
    before = _step(env, 2)[0]
    counts = env.fault_counts
    env.block.set_velocity(torch.tensor([[1e6, 0, 0, 0, 0, 0]]), env_ids=[0])
    for _ in range(3):  # stepped on without a reset: still quarantined, counted once
        obs, reward, terminated, truncated, info = _step(env, action=torch.ones(N, 8))
        assert torch.equal(obs[0], before[0])
        assert reward[0] == 0 and truncated[0] and not terminated[0]
        assert info["sim_fault"].tolist() == [True, False, False]
        assert not info["success"][0] and info["height_gain"][0] == 0
        assert torch.isfinite(obs).all()
    assert (env.fault_counts - counts).tolist() == [1, 0, 0]
    assert env.quarantined.tolist() == [True, False, False]
    obs, info = env.reset(options={"env_idx": [0]})
    assert not any(k.startswith("sim_fault") for k in info)  # step infos only
    assert env.quarantined.tolist() == [False, False, False]
    obs, reward, terminated, truncated, info = _step(env)
    assert not info["sim_fault"].any() and not truncated.any()
    assert (info["sim_fault_count"] - counts).tolist() == [1, 0, 0]  # counters survive resets


@pytest.mark.parametrize("backend", BACKENDS_UNDER_TEST)
def test_quarantine_and_restore_on_every_backend(backend):
    e = FrankaLiftEnv(num_envs=2, sim_backend=backend)
    try:
        e.reset(seed=5)
        e.block.set_velocity(torch.tensor([[0, 0, 1e6, 0, 0, 0]]), env_ids=[1])
        obs, reward, terminated, truncated, info = e.step(torch.zeros(2, 8))
        assert info["sim_fault"].tolist() == [False, True] and truncated.tolist() == [False, True]
        assert reward[1] == 0 and torch.isfinite(obs).all()
        e.reset(seed=[5], options={"env_idx": [1]})
        assert e.step(torch.zeros(2, 8))[4]["sim_fault"].tolist() == [False, False]
        assert e.block.state.pose[1, 2] < 0.1
    finally:
        e.close()


def test_vector_env_autoresets_a_faulted_env_as_a_truncation():
    venv = SimuloVectorEnv(FrankaLiftEnv(num_envs=N), record_metrics=True)
    try:
        venv.reset(seed=3)
        venv.step(ZERO)
        venv.base_env.block.set_velocity(torch.tensor([[1e6, 0, 0, 0, 0, 0]]), env_ids=[1])
        obs, reward, terminated, truncated, info = venv.step(ZERO)
        assert truncated.tolist() == [False, True, False] and not terminated.any()
        assert info["_final_obs"].tolist() == [False, True, False]
        assert info["final_info"]["sim_fault"].tolist() == [False, True, False]
        assert info["sim_fault"].tolist() == [False, True, False]  # the reset does not hide it
        assert info["elapsed_steps"][1] == 0  # already reset: a fresh episode
        assert torch.isfinite(info["final_obs"]).all()
        assert info["episode"]["length"][1] == 2
        obs, reward, terminated, truncated, info = venv.step(ZERO)
        assert not info["sim_fault"].any() and not truncated.any()
    finally:
        venv.close()


def test_next_step_autoreset_of_a_faulted_env():
    venv = SimuloVectorEnv(FrankaLiftEnv(num_envs=N), autoreset_mode=AutoresetMode.NEXT_STEP)
    try:
        venv.reset(seed=3)
        venv.base_env.block.set_velocity(torch.tensor([[1e6, 0, 0, 0, 0, 0]]), env_ids=[2])
        truncated = venv.step(ZERO)[3]
        assert truncated.tolist() == [False, False, True]
        obs, reward, terminated, truncated, info = venv.step(ZERO)
        assert not truncated.any() and reward[2] == 0 and info["elapsed_steps"][2] == 0
        assert torch.isfinite(obs).all()
    finally:
        venv.close()


# ---------------------------------------------------------------- full restore
def _episode(env, seed, steps, inject=None):
    """Obs of env 0 over ``steps`` steps after ``reset(seed=[seed], env_idx=[0])``, with
    ``inject(env)`` run (and a step taken) before that reset."""
    env.reset(seed=0)
    rng = np.random.default_rng(7)
    actions = [torch.from_numpy(rng.uniform(-1, 1, (N, 8)).astype(np.float32)) for _ in range(steps)]
    if inject is not None:
        inject(env)
        _step(env)
    env.reset(seed=[seed], options={"env_idx": [0]})
    return torch.stack([env.step(a)[0][0] for a in actions])


@pytest.mark.parametrize("where", ["block velocity", "block pose", "robot qvel", "robot qpos", "drive target"])
def test_reset_restores_an_env_whose_physx_state_held_nan(env, where):
    def inject(e):
        backend = e.backend
        if where == "block velocity":
            _poison_block_velocity(e, 0)
        elif where == "block pose":
            import sapien
            backend._rigid[e.block._gid].entities[0].set_pose(sapien.Pose([NAN, 0, 0]))
        else:
            art = backend._arts[e.agent.robot._gid].articulations[0]
            if where == "robot qvel":
                art.set_qvel(np.full(9, NAN, dtype=np.float32))
            elif where == "robot qpos":
                q = art.qpos.copy()
                q[3] = NAN
                art.set_qpos(q)
            else:
                backend._arts[e.agent.robot._gid].joints[0][2].set_drive_target(NAN)

    clean = _episode(env, 11, 12)
    restored = _episode(env, 11, 12, inject)
    assert torch.isfinite(restored).all()
    torch.testing.assert_close(restored, clean, atol=1e-5, rtol=0)


class _WithMarker(FrankaLiftEnv):
    """FrankaLift plus a cube its episode init never touches."""

    def _load_scene(self, options):
        super()._load_scene(options)
        self.marker = self.scene.add(Prop(Cuboid("Marker", (0.04,) * 3, Pose([0.3, 0.4, 0.02]),
                                                 Physics.rigid(mass=0.1))), at="/World/Marker")


def test_reset_restores_objects_the_task_does_not_reset():
    e = _WithMarker(num_envs=2)
    try:
        home = e.marker.state.pose
        e.backend._rigid[e.marker._gid].components[1].linear_velocity = [0.0, NAN, 0.0]
        info = e.step(torch.zeros(2, 8))[4]
        assert info["sim_fault"].tolist() == [False, True]
        e.reset(options={"env_idx": [1]})
        assert torch.isfinite(e.marker.state.pose).all()
        torch.testing.assert_close(e.marker.state.pose[1], home[1], atol=1e-6, rtol=0)
        assert torch.equal(e.marker.state.linear_velocity[1], torch.zeros(3))
        for _ in range(3):
            assert not e.step(torch.zeros(2, 8))[4]["sim_fault"].any()
    finally:
        e.close()
