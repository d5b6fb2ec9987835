"""The CPU fast path of ``step``: the framework runs every task's own hooks on numpy arrays
(``BaseEnv.xp_hooks``, ``simulo_envs/envs/fast_step.py``) and must return what the torch hooks
return, for every task of the suite, every reward mode and every control mode."""

import warnings

import numpy as np
import pytest
import sapien
import torch

import simulo_envs.tasks  # noqa: F401  (registers the tasks)
from simulo_envs.envs.faults import FaultReason
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.policies import EXPERTS
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.tensors import all_finite

TASKS = ("FrankaLift-v1", "FrankaLiftMixed-v1", "FrankaLiftRandomized-v1", "FrankaReach-v1", "FrankaPush-v1",
         "FrankaStack-v1", "FrankaStack-v2", "FrankaPickPlace-v1", "FrankaOpenDrawer-v1", "SO100Lift-v1",
         "SO100PickPlace-v1", "SO101Lift-v1", "SO101PickPlace-v1", "SO100PlaceInBowl-v1", "SO101PlaceInBowl-v1",
         "SO100PlaceOnTarget-v1", "SO101PlaceOnTarget-v1", "SO100Stack-v1", "SO101Stack-v1",
         "SO101Push-v1", "SO100Push-v1", "SO101Pull-v1", "SO101Sort-v1",
         "SO100Pull-v1", "SO100Sort-v1", "SO101OpenDrawer-v1", "SO100OpenDrawer-v1")
REWARD_MODES = ("normalized_dense", "dense", "sparse", "none")
OTHER_CONTROL_MODES = ("pd_joint_delta_pos", "pd_joint_pos", "pd_ee_delta_pose", "pd_ee_pose")
SO100_CONTROL_MODES = {"SO100Lift-v1": ("pd_joint_delta_pos", "pd_joint_pos_lerobot"),  # the SO-100's other modes
                       "SO100PickPlace-v1": ("pd_joint_pos", "pd_ee_pose"),
                       "SO101Lift-v1": ("pd_joint_pos_lerobot",), "SO101PickPlace-v1": ("pd_joint_delta_pos",)}


def _leaves(tree, prefix=""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield prefix + key, value


def _assert_same(fast, slow, what):
    assert isinstance(fast, torch.Tensor), what
    assert (fast.dtype, tuple(fast.shape)) == (slow.dtype, tuple(slow.shape)), what
    if fast.dtype == torch.bool or not fast.is_floating_point():
        assert torch.equal(fast, slow), what
    elif not (torch.equal(fast, slow) or bool(((fast - slow).abs() <= 2e-6).all())):
        # assert_close's test, 20x the cost of the two above: it runs only to name what differs
        # (NaN and inf, which fail the difference test, are judged by it too).
        torch.testing.assert_close(fast, slow, rtol=0, atol=2e-6, msg=what)


def _assert_same_outputs(env, action, what, reward_modes=REWARD_MODES):
    """The fast path's ``(info, obs, reward, terminated)`` equal the torch hooks' on the env's
    current state, in each of ``reward_modes`` (every one unless told; both paths only read the
    state)."""
    mode = env.reward_mode
    try:
        for env.reward_mode in reward_modes:
            fast = env._numpy_outputs(action)
            env._fast_step = False
            slow = env._step_outputs(action)
            env._fast_step = True
            label = f"{what}, {env.reward_mode}"
            assert [k for k, _ in _leaves(fast[0])] == [k for k, _ in _leaves(slow[0])], label
            for (key, f), (_, s) in zip(_leaves(fast[0]), _leaves(slow[0])):
                _assert_same(f, s, f"{label}: info[{key}]")
            for k, name in ((1, "obs"), (2, "reward"), (3, "terminated")):
                _assert_same(fast[k], slow[k], f"{label}: {name}")
            assert fast[4] is True, label  # obs and reward checked finite
    finally:
        env.reward_mode = mode


class _ReachController:
    """FrankaReach-v1 has no scripted expert: move the TCP straight at the goal (pd_ee_delta_pos,
    0.1 m per unit action)."""

    def __init__(self, env):
        self.env = env

    def act(self):
        step = (self.env.get_info()["tcp_to_goal"] / 0.1).clamp(-1, 1)
        return torch.cat([step, torch.ones(len(step), 1)], dim=1)


@pytest.mark.parametrize("task", TASKS)
def test_fast_path_gives_the_torch_hooks_outputs_over_expert_episodes(task):
    env = REGISTERED[task](num_envs=3, control_mode="pd_ee_delta_pos")
    assert env._fast_step
    expert = _ReachController(env) if task == "FrankaReach-v1" else EXPERTS[task](env)
    env.reset(seed=3)
    seen = {"grasp": 0, "success": 0, "reset": 0}
    for step in range(150):
        action = expert.act()
        obs, reward, terminated, truncated, info = env.step(action)  # the fast path
        fast_step = (info, obs, reward, terminated)
        env._fast_step = False
        slow = env._step_outputs(action)  # the torch hooks on the same state (the same step's contacts)
        env._fast_step = True
        assert [k for k, _ in _leaves(info) if not k.startswith("sim_fault")] == [k for k, _ in _leaves(slow[0])]
        for key, value in _leaves(slow[0]):
            _assert_same(dict(_leaves(info))[key], value, f"step {step}: info[{key}]")
        for k in range(1, 4):
            _assert_same(fast_step[k], slow[k], f"step {step}: output {k}")
        # The step above is in the default reward mode (normalized_dense). The other modes take
        # turns, one a step; a step on which some env succeeds (the sparse reward's) checks them all.
        assert env.reward_mode == REWARD_MODES[0]
        other = REWARD_MODES if info["success"].any() else (REWARD_MODES[1 + step % 3],)
        _assert_same_outputs(env, action, f"step {step}", other)
        seen["grasp"] += int(info.get("is_grasped", torch.zeros(1)).sum())
        seen["success"] += int(info["success"].sum())
        done = terminated | truncated
        if done.any():
            seen["reset"] += 1
            env.reset(options={"env_idx": done})
        if seen["success"] >= 3 and seen["reset"] >= 1 and step >= 69:
            break
    env.close()
    assert seen["success"] >= 3 and seen["reset"] >= 1, seen
    if task.startswith("FrankaLift"):
        assert seen["grasp"] > 20, seen
    elif task in ("FrankaStack-v1", "FrankaStack-v2", "FrankaPickPlace-v1", "SO100Lift-v1", "SO100PickPlace-v1",
                  "SO101Lift-v1", "SO101PickPlace-v1"):
        assert seen["grasp"] > 0, seen


def test_every_task_of_the_suite_is_checked_here():
    suite = {env_id for env_id, cls in REGISTERED.items() if cls.__module__.startswith("simulo_envs.tasks.")}
    assert suite == set(TASKS)


def _random_actions_agree(task, control_mode, seed):
    env = REGISTERED[task](num_envs=2, control_mode=control_mode)
    assert env._fast_step
    env.reset(seed=seed)
    actions = np.random.default_rng(seed).uniform(-1, 1, (12, 2, env.single_action_space.shape[0]))
    for step, action in enumerate(torch.from_numpy(actions.astype(np.float32))):
        env.step(action)
        _assert_same_outputs(env, action, f"{task}, {control_mode}, step {step}")
    env.close()


@pytest.mark.parametrize("control_mode", OTHER_CONTROL_MODES)
def test_fast_path_gives_the_torch_hooks_outputs_in_every_control_mode(control_mode):
    # Two Panda tasks per control mode (the eight in four pairs), random actions.
    k = OTHER_CONTROL_MODES.index(control_mode)
    for task in TASKS[2 * k:2 * k + 2]:
        _random_actions_agree(task, control_mode, k)


@pytest.mark.parametrize("task", sorted(SO100_CONTROL_MODES))
def test_fast_path_gives_the_torch_hooks_outputs_in_the_so100_control_modes(task):
    for k, control_mode in enumerate(SO100_CONTROL_MODES[task]):
        _random_actions_agree(task, control_mode, k)


def test_fast_and_torch_steps_return_the_same_structure():
    envs = [FrankaLiftEnv(num_envs=2) for _ in range(2)]
    envs[1]._fast_step = False
    actions = torch.from_numpy(np.random.default_rng(0).uniform(-1, 1, (5, 2, 8)).astype(np.float32))
    for e in envs:
        e.reset(seed=0)
    for a in actions:
        fast, slow = (e.step(a) for e in envs)
        for k in range(4):
            _assert_same(fast[k], slow[k], f"output {k}")
        assert list(_leaves(fast[4])) and [k for k, _ in _leaves(fast[4])] == [k for k, _ in _leaves(slow[4])]
        for (key, f), (_, s) in zip(_leaves(fast[4]), _leaves(slow[4])):
            _assert_same(f, s, key)
    for e in envs:
        e.close()


def test_returned_tensors_are_not_overwritten_by_later_steps():
    env = FrankaLiftEnv(num_envs=1)
    obs, reward, _, _, info = env.step(torch.ones(1, 8))
    kept = [t.clone() for t in (obs, reward, info["tcp_pose"], info["reward_terms"]["reach"])]
    for _ in range(3):
        env.step(-torch.ones(1, 8))
    for before, now in zip(kept, (obs, reward, info["tcp_pose"], info["reward_terms"]["reach"])):
        assert torch.equal(before, now)
    env.close()


class _OwnReward(FrankaLiftEnv):
    def compute_dense_reward(self, obs, action, info):
        return super().compute_dense_reward(obs, action, info) * 2


@pytest.mark.parametrize("make, fast", [
    (lambda: FrankaLiftEnv(num_envs=1), True),
    (lambda: FrankaLiftEnv(num_envs=1, obs_mode="state_dict"), False),
    (lambda: FrankaLiftEnv(num_envs=1, sim_backend="physx_cuda_emulated"), False),
    (lambda: _OwnReward(num_envs=1), False),
])
def test_fast_path_only_where_it_stands_for_the_hooks(make, fast):
    env = make()
    assert env._fast_step is fast
    if not fast:  # a subclass's own reward is what step returns
        _, reward, _, _, info = env.step(torch.zeros(1, 8))
        if isinstance(env, _OwnReward):
            slow = env.get_reward(env.get_obs(info, unflattened=True), None, env.get_info())
            assert torch.equal(reward, slow) and reward.item() > 0
    env.close()


@pytest.mark.parametrize("velocity, fault", [((12.0, 0.0, 0.0), False), ((12.0, 12.0, 12.0), True), ((11.0, 11.0, 11.0), False),
                                             ((0.0, 0.0, 19.9), False), ((0.0, 0.0, 20.1), True)])
def test_packed_fault_prefilter_sends_close_calls_to_the_exact_scan(velocity, fault):
    env = FrankaLiftEnv(num_envs=2)
    env.step(torch.zeros(2, 8))  # builds the scanner
    assert env.faults.scanner._packed is not None  # physx_cpu: the packed prefilter runs
    env.block.set_velocity(torch.tensor([[0.0] * 6, [*velocity, 0.0, 0.0, 0.0]]))
    reason = env.faults.scanner.scan()  # the state as written, no step
    if fault:
        assert reason.tolist() == [0, 2]  # LINEAR_SPEED in env 1 only (20 m/s limit)
    else:
        assert reason is None or not reason.any()
    env.close()


# ---------------------------------------------------------------- finiteness tests raise no FP warning
@pytest.mark.parametrize("control_mode", ["pd_joint_delta_pos", "pd_joint_pos"])
def test_huge_finite_actions_are_clipped_silently_even_under_strict_numpy(control_mode):
    # The float32 sum of these overflows: they are finite, so clipped to the bounds like before,
    # with no floating-point warning (a user's np.errstate(all="raise") must not turn it into an error).
    envs = [FrankaLiftEnv(num_envs=2, control_mode=control_mode) for _ in range(2)]
    huge = np.tile(np.array([3e38, -3e38], dtype=np.float32), (2, 4))
    bounds = np.where(huge > 0, envs[0].action_space.high, envs[0].action_space.low)
    for e in envs:
        e.reset(seed=4)
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        out = envs[0].step(huge)
    for fast, slow in zip(out[:2], envs[1].step(bounds)[:2]):
        assert torch.equal(fast, slow)
    assert not out[4]["sim_fault"].any()
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="NaN or inf"):  # bad input: the documented error, nothing else
            envs[0].step(np.tile(np.array([np.inf, -np.inf], dtype=np.float32), (2, 4)))
    for e in envs:
        e.close()


def test_fault_prefilter_on_a_huge_finite_state_raises_no_fp_warning():
    env = FrankaLiftEnv(num_envs=2)
    env.step(torch.zeros(2, 8))
    # Finite, far outside the box, put into PhysX past the writers' range check (as an exploding
    # simulation could): the float32 sum of the packed state overflows.
    env.backend._rigid[env.block._gid].entities[1].set_pose(sapien.Pose([3e38, 3e38, 3e38]))
    env.backend._version += 1  # repack on the next read
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        reason = env.faults.scanner.scan()
    assert reason.tolist() == [0, int(FaultReason.OUT_OF_BOX)]
    env.close()


@pytest.mark.parametrize("size", [6, 4096, 4097, 20000])
def test_all_finite_is_exact_at_every_size(size):
    values = np.full(size, 3e38, dtype=np.float32)  # finite; squares and sums overflow
    with np.errstate(all="raise"):
        assert all_finite(values) and all_finite(values[::2])  # also a strided view
        for bad in (np.nan, np.inf, -np.inf):
            poisoned = values.copy()
            poisoned[size // 2] = bad
            assert not all_finite(poisoned)
        assert all_finite(np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("hook", ["compute_dense_reward", "evaluate"])
def test_a_hook_set_on_the_instance_is_what_step_uses(hook):
    env = FrankaLiftEnv(num_envs=2, reward_mode="dense")
    env.reset(seed=0)
    if hook == "compute_dense_reward":
        env.compute_dense_reward = lambda obs, action, info: torch.full((2,), 7.0)
        assert env.step(torch.zeros(2, 8))[1].tolist() == [7.0, 7.0]
    else:
        plain = env.evaluate
        env.evaluate = lambda: {**plain(), "success": torch.ones(2, dtype=torch.bool)}
        _, reward, terminated, _, _ = env.step(torch.zeros(2, 8))
        assert terminated.tolist() == [True, True] and reward.tolist() == [env.cfg.success_reward] * 2
    del env.__dict__[hook]
    _, reward, terminated, _, _ = env.step(torch.zeros(2, 8))  # the class's hooks (the fast path) again
    assert not terminated.any() and 0 < reward.max().item() < 1
    env.close()
