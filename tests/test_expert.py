"""The scripted expert lifts the block: the end-to-end proof of physics, gripper, task, resets."""

import gymnasium as gym
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert


def test_expert_succeeds_on_8_seeded_episodes_with_partial_resets():
    env = gym.make("FrankaLift-v1", num_envs=4, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=100)
    results = []
    for _ in range(400):
        _, _, terminated, truncated, info = env.step(expert.act())
        done = terminated | truncated
        for i in done.nonzero().flatten().tolist():
            if len(results) < 8:
                results.append((bool(info["success"][i]), bool(info["is_grasped"][i])))
        if len(results) >= 8:
            break
        if done.any():
            env.reset(options={"env_idx": done})  # mid-rollout partial reset: expert restarts those envs
    env.close()
    assert len(results) == 8
    successes = [r for r in results if r[0]]
    assert len(successes) >= 7, results
    assert all(grasped for _, grasped in successes), results


def test_expert_restarts_phase_after_partial_reset():
    env = gym.make("FrankaLift-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    expert = LiftExpert(env)
    env.reset(seed=7)
    for _ in range(25):
        env.step(expert.act())
    assert (expert.phase > 0).all()
    env.reset(options={"env_idx": [0]})
    expert.act()
    assert expert.phase[0] == 0 and expert.phase[1] > 0
    env.close()


def test_expert_requires_ee_control():
    env = gym.make("FrankaLift-v1", num_envs=1)
    try:
        LiftExpert(env)
    except ValueError as exc:
        assert "pd_ee_delta_pos" in str(exc)
    else:
        raise AssertionError("LiftExpert accepted a joint-space env")
    finally:
        env.close()


def _lift_info(tcp, block, grasped):
    """The info keys LiftExpert reads, for two envs (world frame, metres)."""
    pose = lambda p: torch.tensor([[*xyz, 1.0, 0.0, 0.0, 0.0] for xyz in p])  # noqa: E731
    return {"elapsed_steps": torch.tensor([5, 5]), "block_pose": pose(block), "tcp_pose": pose(tcp),
            "height_gain": torch.zeros(2), "is_grasped": torch.tensor(grasped)}


def test_a_missed_grasp_opens_the_gripper_and_approaches_again():
    from types import SimpleNamespace

    from simulo_envs.policies.lift_expert import APPROACH, LIFT, LiftExpertConfig

    view = SimpleNamespace(num_envs=2, device=torch.device("cpu"), control_freq=20, control_mode="pd_ee_delta_pos")
    view.unwrapped = view
    expert = LiftExpert(view, LiftExpertConfig(pos_bound=0.1))
    expert.phase[:] = LIFT
    block = [(0.5, 0.0, 0.02), (0.5, 0.0, 0.02)]
    # env 0 rose 4 cm with nothing in the gripper: missed; env 1 holds the block (TCP at its centre)
    action = expert.act(_lift_info([(0.5, 0.0, 0.06), (0.5, 0.0, 0.02)], block, [False, True]))
    assert expert.phase.tolist() == [APPROACH, LIFT]
    assert action[1, 2] > 0 and action[1, 3] == -1.0  # env 1 lifts, gripper closed
    action = expert.act(_lift_info([(0.5, 0.0, 0.06), (0.5, 0.0, 0.04)], block, [False, True]))
    assert action[0, 3] == 1.0  # env 0 opens again
    # risen only 2 cm without a grasp: still lifting (the jaw may be closing on it)
    expert.phase[:] = LIFT
    expert.act(_lift_info([(0.5, 0.0, 0.04), (0.5, 0.0, 0.04)], block, [False, False]))
    assert expert.phase.tolist() == [LIFT, LIFT]
