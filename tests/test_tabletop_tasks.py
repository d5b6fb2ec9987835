"""The table-top tasks (push, stack, pick-and-place, open a drawer): shapes, rewards, the success
predicates set up by hand, and each scripted expert on a few seeds with partial resets."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.policies import EXPERTS
from simulo_envs.training.rsl_rl_train import train_config_for

# env id -> (state observation width, whether the task defines a fail state)
TASKS = {
    "FrankaPush-v1": (41, True),
    "FrankaPickPlace-v1": (42, False),
    "FrankaStack-v1": (46, False),
    "FrankaOpenDrawer-v1": (40, False),
}


@pytest.fixture(params=sorted(TASKS))
def env_id(request):
    return request.param


def test_reset_step_shapes_and_reward_ranges(env_id):
    width, has_fail = TASKS[env_id]
    env = gym.make(env_id, num_envs=3, reward_mode="normalized_dense")
    try:
        obs, info = env.reset(seed=1)
        assert obs.shape == (3, width) and obs.dtype == torch.float32
        assert env.unwrapped.single_observation_space.shape == (width,)
        assert info["success"].shape == (3,) and not info["success"].any()
        assert ("fail" in info) == has_fail
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            assert obs.shape == (3, width) and torch.isfinite(obs).all()
            assert reward.shape == (3,) and reward.dtype == torch.float32
            assert ((reward >= 0) & (reward <= 1)).all()
            assert terminated.dtype == torch.bool and truncated.dtype == torch.bool and not truncated.any()
            terms = info["reward_terms"]
            assert terms and all(t.shape == (3,) for t in terms.values())
    finally:
        env.close()


def test_dense_reward_is_the_weighted_sum_of_its_terms(env_id):
    env = gym.make(env_id, num_envs=2, reward_mode="dense")
    try:
        env.reset(seed=2)
        _, reward, _, _, info = env.step(env.action_space.sample())
        cfg = env.unwrapped.cfg
        total = sum(getattr(cfg, f"{name}_weight") * value for name, value in info["reward_terms"].items())
        expected = torch.where(info["success"], torch.tensor(cfg.success_reward), total)
        torch.testing.assert_close(reward, expected)
        assert cfg.success_reward > sum(getattr(cfg, f"{n}_weight") for n in info["reward_terms"])
    finally:
        env.close()


def test_every_task_has_a_ppo_config(env_id):
    config = train_config_for(env_id)
    assert config["env_kwargs"]["reward_mode"] == "normalized_dense"
    assert config["runner"]["algorithm"]["class_name"] in ("PPO", "simulo_envs.training.rsl_rl_ppo:FinalValuePPO")
    env = gym.make(env_id, num_envs=1, **config["env_kwargs"])  # the config's env kwargs are valid
    env.close()


def test_push_trains_with_the_lift_holding_recipe_on_30_step_episodes():
    """FrankaPush-v1 trains on full episodes (terminations ignored) as FrankaLift-v1 does, with
    30-step training episodes and a discount of 0.95; all else is the lift's recipe."""
    from simulo_envs.tasks.franka_lift_ppo import TRAIN_CONFIG as LIFT
    config = train_config_for("FrankaPush-v1")
    assert config["vector_kwargs"]["ignore_terminations"] is True
    assert config["train_max_episode_steps"] == 30 and config["runner"]["algorithm"]["gamma"] == 0.95
    assert config["runner"]["algorithm"]["bootstrap"] == "dones"
    assert config["num_envs"] == 128 and config["runner"]["num_steps_per_env"] == 50
    rest = {k: v for k, v in config["runner"]["algorithm"].items() if k != "gamma"}
    assert rest == {k: v for k, v in LIFT["runner"]["algorithm"].items() if k != "gamma"}
    assert config["runner"]["actor"] == LIFT["runner"]["actor"] and LIFT["runner"]["algorithm"]["gamma"] == 0.8


def test_pick_place_trains_with_the_lift_partial_reset_recipe():
    """FrankaPickPlace-v1 reuses FrankaLift-v1's partial-reset recipe with a larger budget."""
    from simulo_envs.tasks.franka_lift_ppo import PARTIAL_RESET_CONFIG as LIFT
    config = train_config_for("FrankaPickPlace-v1")
    assert config["vector_kwargs"]["ignore_terminations"] is False
    assert config["total_timesteps"] == 3_200_000
    assert {**config, "total_timesteps": LIFT["total_timesteps"]} == LIFT


def test_randomisation_stays_in_the_documented_ranges(env_id):
    env = gym.make(env_id, num_envs=16)
    u = env.unwrapped
    try:
        _, info = env.reset(seed=3)
        local = lambda pose: pose[:, :3] - u.scene.env_origins  # noqa: E731
        cfg = u.cfg
        if env_id == "FrankaOpenDrawer-v1":
            cab = local(info["cabinet_pose"])
            assert (cab[:, 0] - cfg.cabinet_x).abs().max() <= cfg.x_range + 1e-6
            assert (cab[:, 1] - cfg.cabinet_y).abs().max() <= cfg.y_range + 1e-6
            yaw = 2 * torch.atan2(info["cabinet_pose"][:, 6], info["cabinet_pose"][:, 3])
            assert yaw.abs().max() <= cfg.yaw_range + 1e-5 and yaw.std() > 0.3 * cfg.yaw_range
            assert torch.count_nonzero(info["drawer_qpos"]) == 0
            return
        key = {"FrankaStack-v1": "a_pose"}.get(env_id, "cube_pose")
        cube = local(info[key])
        assert (cube[:, 0] - cfg.spawn_x).abs().max() <= cfg.x_range + 1e-6
        assert (cube[:, 1] - cfg.spawn_y).abs().max() <= cfg.y_range + 1e-6
        assert torch.allclose(cube[:, 2], torch.full((16,), cfg.cube_size / 2), atol=1e-4)
        if env_id == "FrankaPush-v1":
            offset = u.goal_pos[:, :2] - info["cube_pose"][:, :2]
            assert offset.norm(dim=1).min() >= cfg.goal_distance[0] - 1e-5
            assert offset.norm(dim=1).max() <= cfg.goal_distance[1] + 1e-5
            assert torch.atan2(offset[:, 1], offset[:, 0]).abs().max() <= cfg.goal_angle + 1e-5
        elif env_id == "FrankaStack-v1":
            gap = (info["b_pose"][:, :2] - info["a_pose"][:, :2]).norm(dim=1)
            assert gap.min() >= cfg.separation[0] - 1e-5 and gap.max() <= cfg.separation[1] + 1e-5
        else:
            goal = u.goal_pos - u.scene.env_origins
            assert goal[:, 2].min() >= cfg.goal_z[0] and goal[:, 2].max() <= cfg.goal_z[1]
    finally:
        env.close()


# ---------------------------------------------------------------- success predicates, set up by hand
def test_push_success_and_fail():
    env = gym.make("FrankaPush-v1", num_envs=3)
    u = env.unwrapped
    try:
        env.reset(seed=0)
        pose = u.cube.state.pose
        goal = u.goal_pos
        pose[0, :2] = goal[0, :2] + torch.tensor([0.05, 0.0])        # inside the 0.06 m region
        pose[1, :2] = goal[1, :2] + torch.tensor([0.0, 0.07])        # just outside
        pose[2, :2] = u.scene.env_origins[2, :2] + torch.tensor([0.85, 0.0])  # out of the arm's reach
        u.cube.set_pose(pose)
        info = u.evaluate()
        assert info["success"].tolist() == [True, False, False]
        assert info["fail"].tolist() == [False, False, True]
    finally:
        env.close()


def test_pick_place_success_and_hidden_goal():
    env = gym.make("FrankaPickPlace-v1", num_envs=2)
    u = env.unwrapped
    try:
        env.reset(seed=0)
        assert u._hidden_objects == [u.goal]  # drawn in renders, never in sensor images
        pose = u.cube.state.pose
        pose[:, :3] = u.goal_pos + torch.tensor([[0.02, 0.0, 0.0], [0.0, 0.0, -0.03]])  # inside 0.025 m / not
        u.cube.set_pose(pose)
        assert u.evaluate()["success"].tolist() == [True, False]
    finally:
        env.close()


def test_stack_success_needs_a_resting_on_b_and_released():
    env = gym.make("FrankaStack-v1", num_envs=3)
    u = env.unwrapped
    try:
        env.reset(seed=0)
        size = u.cfg.cube_size
        b = u.cube_b.state.pose
        a = b.clone()
        a[:, 2] += size
        a[1, 0] += 0.03          # overhanging B by more than the 0.02 m tolerance
        a[2, 2] += 0.02          # floating above B
        u.cube_a.set_pose(a)
        u.cube_a.set_velocity(torch.zeros(3, 6))
        info = u.evaluate()
        assert info["a_on_b"].tolist() == [True, False, False]
        assert info["success"].tolist() == [True, False, False]  # the gripper is open, far above
        u.cube_a.set_velocity(torch.tensor([[0.2, 0, 0, 0, 0, 0]] * 3))  # moving: not at rest yet
        assert not u.evaluate()["success"].any()
    finally:
        env.close()


def test_open_drawer_success_and_handle_following_the_drawer():
    env = gym.make("FrankaOpenDrawer-v1", num_envs=2)
    u = env.unwrapped
    try:
        env.reset(seed=0)
        for _ in range(2):  # the robot at rest clears the cabinet: holding still leaves the drawer shut
            env.step(torch.zeros(2, 8))
        assert u.cabinet.state.qpos.abs().max() < 1e-3
        closed = u.evaluate()
        u.cabinet.set_qpos(torch.tensor([[0.16], [0.14]]))  # open_distance is 0.15 m
        info = u.evaluate()
        assert info["success"].tolist() == [True, False]
        moved = info["handle_pos"] - closed["handle_pos"]  # the grip point rides on the drawer
        torch.testing.assert_close(moved, info["open_direction"] * torch.tensor([[0.16], [0.14]]), atol=1e-4, rtol=0)
        assert info["open_direction"][:, 0].max() < -0.99  # out of the front, towards the robot
    finally:
        env.close()


# ---------------------------------------------------------------- the scripted experts
@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_expert_succeeds_with_partial_resets(env_id):
    env = gym.make(env_id, num_envs=4, control_mode="pd_ee_delta_pos")
    expert = EXPERTS[env_id](env)
    env.reset(seed=500)
    results = []
    while len(results) < 6:
        _, _, terminated, truncated, info = env.step(expert.act())
        done = terminated | truncated
        results += [bool(info["success"][i]) for i in done.nonzero().flatten().tolist()]
        if done.any():
            env.reset(options={"env_idx": done})  # the expert restarts those envs only
    env.close()
    assert sum(results) >= len(results) - 1, results


def test_expert_drives_a_vector_env_from_its_info():
    """act(info): the state comes from the last info (as for envs in worker processes); the vector
    env autoresets done envs and its step info already describes the new episodes."""
    venv = gym.make_vec("FrankaPush-v1", num_envs=4, vectorization_mode="vector_entry_point",
                        control_mode="pd_ee_delta_pos")
    expert = EXPERTS["FrankaPush-v1"](venv)
    info = venv.reset(seed=600)[1]
    successes = 0
    for _ in range(80):
        _, _, terminated, truncated, info = venv.step(expert.act(info))
        successes += int(terminated.sum())
    venv.close()
    assert successes >= 4


def test_expert_restarts_a_reset_env_and_refuses_joint_control():
    env = gym.make("FrankaPush-v1", num_envs=2, control_mode="pd_ee_delta_pos")
    expert = EXPERTS["FrankaPush-v1"](env)
    env.reset(seed=7)
    for _ in range(40):
        env.step(expert.act())
        if (expert.phase > 0).all():
            break
    assert (expert.phase > 0).all()
    env.reset(options={"env_idx": [1]})
    expert.act()
    assert expert.phase[1] == 0 and expert.phase[0] > 0
    env.close()
    env = gym.make("FrankaPush-v1", num_envs=1)
    with pytest.raises(ValueError, match="pd_ee_delta_pos"):
        EXPERTS["FrankaPush-v1"](env)
    env.close()

def test_quat_apply_rotates_vectors():
    from simulo_envs.geometry import quat_apply

    half = math.pi / 4  # 90 degrees about +z, then 180 degrees about +x
    q = torch.tensor([[math.cos(half), 0.0, 0.0, math.sin(half)], [0.0, 1.0, 0.0, 0.0]])
    out = quat_apply(q, torch.tensor([1.0, 0.0, 1.0]))
    torch.testing.assert_close(out, torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, -1.0]]), atol=1e-6, rtol=0)
