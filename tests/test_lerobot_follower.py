"""``simulo_envs.lerobot.SimFollower`` and ``StepClock``: a task's scene behind LeRobot's SO
follower protocol, without LeRobot installed (LeRobot's own commands drive it through the
``lerobot_robot_simulo`` plugin in ``integrations/lerobot_robot_simulo/tests``).

The units checked are the SO-101 follower's (``lerobot/robots/so_follower/so_follower.py``,
LeRobot 0.6.1): degrees for the arm (0 at the joint's zero, the calibrated middle), 0-100 for
the gripper over its -0.1745 .. 1.745 rad range (``agents/so101.py``).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from simulo_envs.lerobot import FollowerCamera, SimFollower, tasks_for_robot
from simulo_envs.lerobot.step_clock import StepClock

NAMES = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]


@pytest.fixture(scope="module")
def follower():
    sim = SimFollower("SO101Lift-v1", "so101", cameras=[], real_time=False, seed=7)
    sim.open()
    yield sim
    sim.close()


def _hold(sim) -> dict:
    return dict(zip(sim.names, sim.joint_vector().tolist()))


def test_joints_are_the_so_followers_keys_and_units(follower):
    follower.reset(seed=7)
    obs = follower.observe()
    assert list(obs) == NAMES and follower.robot_type == "so_follower"  # SOFollower.name, what a recording carries
    qpos = follower.env.agent.robot.state.qpos[0].numpy().astype(np.float64)
    expected = [math.degrees(q) for q in qpos[:5]] + [100.0 * (qpos[5] + 0.174533) / (1.74533 + 0.174533)]
    assert np.allclose([obs[n] for n in NAMES], expected, atol=1e-3)
    assert obs["gripper.pos"] == pytest.approx(100.0, abs=1e-3)  # the rest pose holds the jaw wide open
    limits = follower.joint_limits
    assert limits["gripper.pos"] == pytest.approx((0.0, 100.0), abs=1e-3)
    assert limits["shoulder_pan.pos"] == pytest.approx((-110.0, 110.0), abs=1e-2)  # the URDF's +-1.91986 rad


def test_lockstep_steps_one_control_period_per_action_and_reaches_the_target(follower):
    follower.reset(seed=7)
    target = _hold(follower)
    target["shoulder_pan.pos"] += 20.0
    steps = follower._clock.steps
    follower.observe()
    assert follower._clock.steps == steps  # an observation never steps in lockstep
    for _ in range(15):
        sent = follower.act(target)
    assert follower._clock.steps == steps + 15 and sent == pytest.approx(target)
    assert follower.observe()["shoulder_pan.pos"] == pytest.approx(target["shoulder_pan.pos"], abs=0.5)


def test_targets_beyond_the_joint_limits_are_clipped_to_them(follower):
    follower.reset(seed=7)
    target = _hold(follower)
    target.update({"shoulder_pan.pos": 500.0, "gripper.pos": -40.0})
    sent = follower.act(target)
    assert sent["shoulder_pan.pos"] == pytest.approx(110.0, abs=1e-2) and sent["gripper.pos"] == pytest.approx(0.0, abs=1e-3)
    for _ in range(30):
        follower.act(target)
    obs = follower.observe()
    assert obs["shoulder_pan.pos"] == pytest.approx(110.0, abs=1.0)
    assert obs["gripper.pos"] < 5.0


@pytest.mark.parametrize("action, error, words", [
    ({n.replace(".pos", ".vel"): 0.0 for n in NAMES}, ValueError, ["missing", "shoulder_pan.pos", "unexpected", "shoulder_pan.vel"]),
    ({**{n: 0.0 for n in NAMES}, "elbow.pos": 0.0}, ValueError, ["unexpected ['elbow.pos']"]),
    ({**{n: 0.0 for n in NAMES}, "gripper.pos": float("nan")}, ValueError, ["gripper.pos", "NaN"]),
    ({**{n: 0.0 for n in NAMES}, "wrist_roll.pos": "left"}, TypeError, ["wrist_roll.pos"]),
    ([0.0] * 6, TypeError, ["dict"]),
])
def test_a_bad_action_raises_and_moves_nothing(follower, action, error, words):
    follower.reset(seed=7)
    before, steps, trace = follower.joint_vector(), follower._clock.steps, len(follower.trace()["act_sent"])
    with pytest.raises(error) as caught:
        follower.act(action)
    assert all(w in str(caught.value) for w in words), str(caught.value)
    assert follower._clock.steps == steps and len(follower.trace()["act_sent"]) == trace
    assert np.array_equal(follower.joint_vector(), before)


def test_episodes_take_the_next_seed_and_replay_exactly(follower):
    first = follower.reset()
    assert follower.reset() == first + 1
    assert follower.reset(seed=20) == 20 and follower.reset() == 21  # the sequence goes on from the last seed
    follower.reset(seed=11)
    cube = follower.env.cube.state.pose.clone()
    follower.reset(seed=12)
    assert not np.allclose(follower.env.cube.state.pose.numpy(), cube.numpy())
    follower.reset(seed=11)
    assert np.allclose(follower.env.cube.state.pose.numpy(), cube.numpy())
    assert follower.episode_success is False


def test_the_trace_records_observations_and_applied_actions(follower):
    follower.reset(seed=3)
    start = len(follower.trace()["obs_wall"])
    follower.observe()
    follower.act(_hold(follower))
    follower.observe()
    trace = follower.trace()
    assert list(trace["names"]) == NAMES and trace["obs_joints"].shape[1] == 6
    assert list(trace["obs_applied"][start:]) == [-1, 0]  # the second observation shows the first action
    assert trace["obs_sim"][-1] == pytest.approx(1 / 30)


def test_a_task_the_robot_does_not_support_is_refused_with_the_tasks_it_does():
    so101_tasks = tasks_for_robot("so101")
    assert {"SO101Lift-v1", "SO101PickPlace-v1"} <= set(so101_tasks)
    assert so101_tasks == sorted(so101_tasks) and all(t.startswith("SO101") for t in so101_tasks)
    assert not any(t.startswith("SO100") or t.startswith("Franka") for t in so101_tasks)
    with pytest.raises(ValueError, match=r"SO100LiftEnv supports \['so100'\].*" + re.escape(str(so101_tasks))):
        SimFollower("SO100Lift-v1", "so101")
    with pytest.raises(ValueError, match="unknown task 'SO101Pick-v1'"):
        SimFollower("SO101Pick-v1", "so101")
    with pytest.raises(ValueError, match="no LeRobot follower description"):
        SimFollower("FrankaLift-v1", "panda")
    with pytest.raises(ValueError, match="fps must divide 120"):
        SimFollower("SO101Lift-v1", "so101", fps=25)


def test_cameras_are_checked_before_anything_is_built():
    with pytest.raises(ValueError, match="camera 'side'.*'base_camera', 'wrist_camera'"):
        SimFollower("SO101Lift-v1", "so101", cameras=[FollowerCamera("front", "side", 640, 480)])
    with pytest.raises(ValueError, match="width and height must be ints"):
        SimFollower("SO101Lift-v1", "so101", cameras=[FollowerCamera("front", "base_camera", 0, 480)])
    default = SimFollower("SO101Lift-v1", "so101")
    assert [(c.name, c.width, c.height) for c in default.cameras] == [("base_camera", 128, 128), ("wrist_camera", 128, 128)]
    assert not default.is_open


def test_the_follower_renders_its_cameras_at_the_asked_size():
    sim = SimFollower("SO101Lift-v1", "so101", cameras=[FollowerCamera("wrist", "wrist_camera", 64, 48)], real_time=False)
    sim.open()
    try:
        obs = sim.observe()
        assert obs["wrist"].shape == (48, 64, 3) and obs["wrist"].dtype == np.uint8
        assert obs["wrist"].std() > 1.0  # a picture, not a blank frame
        with pytest.raises(KeyError, match="no camera 'front'"):
            sim.picture("front")
    finally:
        sim.close()


# ---------------------------------------------------------------------- the clock, on a fake wall clock
class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_real_time_follows_the_wall_clock_and_drops_a_stall():
    now = FakeClock()
    period = 1 / 30
    clock = StepClock(period, real_time=True, max_catch_up=3, now=now)
    assert clock.due(action=False) == 0  # the first call anchors time 0
    now.t += 1.02 * period
    assert clock.due(action=True) == 1
    calls = []
    for _ in range(4):  # a driver at 60 Hz: every other call steps
        now.t += period / 2
        calls.append(clock.due(action=True))
    assert calls == [1, 0, 1, 0] and clock.steps == 3
    now.t += 2 * period  # a driver late by two periods steps both
    assert clock.due(action=False) == 2
    now.t += 30 * period  # a stall of 30 periods: 3 stepped, 27 dropped
    assert clock.due(action=True) == 3 and clock.dropped_s == pytest.approx(27 * period)
    now.t += period
    assert clock.due(action=False) == 1 and clock.sim_time == pytest.approx(9 * period)


def test_lockstep_ignores_the_wall_clock():
    now = FakeClock()
    clock = StepClock(1 / 30, real_time=False, now=now)
    now.t += 10.0
    assert [clock.due(action=a) for a in (False, True, True, False)] == [0, 1, 1, 0] and clock.steps == 2
    with pytest.raises(ValueError):
        StepClock(0.0, real_time=True)
