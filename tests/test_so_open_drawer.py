"""SO101OpenDrawer-v1 (and SO100OpenDrawer-v1): the two-drawer chest (``drawer_chest``), the target
drawer named by its label's colour, success (target open, the other shut, the handle let go),
fail (the other drawer opened), rewards, variants and the scripted expert."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

import simulo_envs  # noqa: F401  (registers the tasks)
from simulo_envs.authoring.cabinet import drawer_chest
from simulo_envs.authoring.shapes import Cuboid, Cylinder
from simulo_envs.policies import EXPERTS
from simulo_envs.tasks.so_suite import COLORS


def test_drawer_chest_builds_one_prismatic_drawer_per_bay_with_its_handle():
    chest = drawer_chest(drawers=3, width=0.3, round_handle=True)
    assert [link.name for link in chest.links] == ["body", "drawer0", "drawer1", "drawer2"]
    assert chest.dof == 3 and all(link.joint.kind == "prismatic" for link in chest.links[1:])
    ys = [link.joint.origin.position[1] for link in chest.links[1:]]
    assert ys[0] < ys[1] < ys[2] and abs(ys[1]) < 1e-9 and abs(ys[0] + ys[2]) < 1e-9
    handle = next(s for s in chest.links[1].shapes if s.name == "handle")
    assert isinstance(handle, Cylinder) and handle.pose.position[0] == pytest.approx(-0.093 / 2 - 0.03 - 0.004)  # drawer depth 0.10 - wall - clearance
    square = next(s for s in drawer_chest().links[1].shapes if s.name == "handle")
    assert isinstance(square, Cuboid) and square.size == pytest.approx((0.008, 0.04, 0.008))
    with pytest.raises(ValueError, match="room"):
        drawer_chest(drawers=4, width=0.12)
    with pytest.raises(ValueError, match="drawers"):
        drawer_chest(drawers=0)


@pytest.mark.parametrize("env_id, robot", [("SO101OpenDrawer-v1", "so101"), ("SO100OpenDrawer-v1", "so100")])
def test_registered_with_37_floats_and_the_target_labels_colour_in_the_instruction(env_id, robot):
    env = gym.make(env_id, num_envs=8, render_mode="rgb_array")
    try:
        base = env.unwrapped
        obs, info = env.reset(seed=2)
        assert obs.shape == (8, 37) and base.agent.uid == robot
        assert not info["success"].any() and not info["fail"].any()
        assert base.instructions() == [f"Open the {color} drawer." for color in base.color_names(0)]
        assert sorted(set(base.target.tolist())) == [0, 1]  # both drawers are targets among these seeds
        for i, label in enumerate(base.labels):  # the target's label wears colour role 0, the other role 1
            for env_i, target in enumerate(base.target.tolist()):
                name = base.color_names(0 if target == i else 1)[env_i]
                assert torch.allclose(label.color[env_i, :3], torch.tensor(COLORS[name]), atol=1e-6)
        # The target's grip point is the handle of the drawer the target index names.
        state = base.chest.state
        for env_i, target in enumerate(base.target.tolist()):
            link = state.link_pose(f"drawer{target}")[env_i, :3]
            # 0.093 / 2 (the drawer box's half depth) + 0.045 (gap) + 0.004 (half the bar) in front of its centre
            assert float((info["handle_pos"][env_i] - link).norm()) == pytest.approx(0.0955, abs=1e-5)
    finally:
        env.close()


def test_success_needs_the_target_open_the_other_shut_and_the_handle_let_go():
    env = gym.make("SO101OpenDrawer-v1", num_envs=16, reward_mode="dense")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        k = base.cfg
        target = base.target.clone()
        opening = torch.linspace(0.0, 0.07, 16)
        other = torch.where(torch.arange(16) % 4 == 0, 0.02, 0.0)  # every fourth env: the other drawer opened
        qpos = torch.zeros(16, 2)
        qpos[torch.arange(16), target] = opening
        qpos[torch.arange(16), 1 - target] = other
        base.chest.set_qpos(qpos)
        info = base.get_info()
        assert torch.allclose(info["drawer_qpos"][:, 0], opening, atol=1e-6)
        assert torch.allclose(info["other_qpos"][:, 0], other, atol=1e-6)
        released = info["tcp_to_handle"].norm(dim=1) >= k.release_distance
        expected = (opening >= k.open_distance) & (other < k.wrong_open) & released
        assert info["success"].tolist() == expected.tolist() and expected.any() and not expected.all()
        assert info["fail"].tolist() == (other >= k.wrong_open).tolist()
        reward = base.compute_dense_reward(None, None, info)
        assert reward[info["fail"]].tolist() == [0.0] * 4
        assert torch.all(reward[info["success"]] == k.success_reward)
        assert base.compute_sparse_reward(None, None, info)[info["fail"]].tolist() == [-1.0] * 4
    finally:
        env.close()


def test_dense_terms_reach_then_open_then_release():
    env = gym.make("SO101OpenDrawer-v1", num_envs=2, reward_mode="normalized_dense")
    try:
        base = env.unwrapped
        env.reset(seed=5)
        _, reward, _, _, info = env.step(torch.zeros(2, 6))
        terms, k = info["reward_terms"], base.cfg
        assert sorted(terms) == ["open", "reach", "release"]
        distance = info["tcp_to_handle"].norm(dim=1)
        assert torch.allclose(terms["reach"], 1 - torch.tanh(distance * k.reach_scale), atol=1e-5)
        assert terms["release"].tolist() == [0.0, 0.0]
        assert torch.allclose(reward, (terms["reach"] + 2 * terms["open"]) / k.success_reward, atol=1e-5)
        qpos = torch.zeros(2, 2)
        qpos[torch.arange(2), base.target] = torch.tensor([0.02, 0.06])  # half way; open
        base.chest.set_qpos(qpos)
        info = base.get_info()
        base.compute_dense_reward(None, None, info)
        terms = info["reward_terms"]
        assert terms["open"].tolist() == pytest.approx([0.5, 1.0])
        assert float(terms["reach"][1]) == 1.0  # open: the reach term stays at its best
        distance = float(info["tcp_to_handle"][1].norm())
        assert float(terms["release"][1]) == pytest.approx(min(distance / k.release_distance, 1.0), abs=1e-5)
    finally:
        env.close()


def test_heldout_builds_round_handles_two_distractors_off_the_chest_in_heldout_colours():
    env = gym.make("SO101OpenDrawer-v1", num_envs=16, variant="heldout")
    try:
        base = env.unwrapped
        env.reset(seed=1)
        k = base.cfg
        assert isinstance(next(s for s in base.chest.articulation.links[1].shapes if s.name == "handle"), Cylinder)
        assert len(base.distractors) == 2 and k.colors == ("orange", "purple", "cyan", "pink")
        assert all(len(set(row)) == 4 for row in zip(*(base.color_names(role) for role in range(4))))
        chest = base.local(base.chest.state.root_pose)[:, :2]
        bearing = torch.atan2(chest[:, 1], chest[:, 0]).abs()
        assert torch.all((bearing >= 0.5 - 1e-4) & (bearing <= 0.75 + 1e-4))
        for prop in base.distractors:
            gap = (base.local(prop.state.pose)[:, :2] - chest).norm(dim=1)
            assert torch.all(gap >= k.chest_clearance + k.object_clearance + k.clearance_gap - 1e-4)
    finally:
        env.close()


@pytest.mark.parametrize("variant", ["train", "heldout"])
def test_the_expert_opens_the_named_drawer_and_lets_go(variant):
    # 64 seeds per split: docs/suite_benchmark.md; 8 here, terminations ignored.
    env = gym.make("SO101OpenDrawer-v1", num_envs=8, control_mode="pd_ee_delta_pos", variant=variant)
    try:
        expert = EXPERTS["SO101OpenDrawer-v1"](env)
        env.reset(seed=0)
        for _ in range(env.unwrapped.default_max_episode_steps):
            _, _, _, _, info = env.step(expert.act())
        assert info["success"].float().mean() >= 0.875, info["success"]
        assert not info["fail"].any()
        assert torch.all(info["other_qpos"][:, 0] < 0.005)  # the other drawer never moved
    finally:
        env.close()
