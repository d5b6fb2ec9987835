"""The committed RL policies still do their tasks: FrankaLift-v1 (``tasks/franka_lift_ppo.pt``),
SO100Lift-v1 (``tasks/so100_lift_ppo.pt``), SO101Lift-v1 (``tasks/so101_lift_ppo.pt``),
SO101PickPlace-v1 (``tasks/so101_pick_place_ppo.pt``),
FrankaPush-v1 (``tasks/franka_push_ppo.pt``), FrankaPickPlace-v1 (``tasks/franka_pick_place_ppo.pt``),
FrankaOpenDrawer-v1 (``tasks/franka_open_drawer_ppo.pt``), the SO100Lift-v1 image student distilled
from the SO-100 policy (``tasks/so100_lift_student.pt``, 7 of the first 8 seeds, 0.92 over 100) and its
twin trained under visual randomization (``tasks/so100_lift_student_randomized.pt``, evaluated on
randomized scenes: 8 of 8, 0.82 over 100), the SO101Lift-v1 image student
(``tasks/so101_lift_student.pt``), the SO100Lift-v1 student trained under the full visual preset
(``tasks/so100_lift_student_visual.pt``) and FrankaStack-v2 (``tasks/franka_stack_v2_ppo.pt``),
each trained by the recipe beside it (``tasks/*_ppo.py``; ``docs/training.md``); and the Diffusion
Policies of SO101Stack-v1, FrankaStack-v1, FrankaOpenDrawer-v1, SO101Push-v1, SO101Pull-v1,
SO101PlaceInBowl-v1, SO101PlaceOnTarget-v1 and SO101OpenDrawer-v1 (``tasks/*_diffusion_state.pt``),
trained on expert demonstrations with the commands of ``docs/training.md``'s table.

A change to a task, an arm, its controller, the grasp test or the physics that breaks a trained
policy shows up here. When committed, on these evaluation seeds: the Franka lift policy succeeded
in 8 of 8 episodes and held the cube up to the last step in 4 of 4; the push policy succeeded in
8 of 8 and, run to the last step, kept the cube in the goal region in 8 of 8 (0.97 over 100);
the pick-and-place policy succeeded in 8 of 8, the SO-101 pick-and-place policy in 7 of 8 (0.99
over 100), the drawer policy in 8 of 8, the stacking policy in 6 of 8 (0.78 over 100).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("rsl_rl")

import simulo_envs  # noqa: F401,E402
from simulo_envs.training.evaluation import evaluate  # noqa: E402

TASKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks")
CHECKPOINT = os.path.join(TASKS, "franka_lift_ppo.pt")


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


# A lift or a pick-and-place takes a reach and a grasp first: never in the first few steps, well
# before the time limit. The SO-100's jaw needs about 0.4 s to close, so its lifts take longer.
@pytest.mark.parametrize(
    "checkpoint, env_id, shortest, longest",
    [("franka_lift_ppo.pt", "FrankaLift-v1", 5, 40), ("so100_lift_ppo.pt", "SO100Lift-v1", 8, 50),
     ("so101_lift_ppo.pt", "SO101Lift-v1", 8, 50), ("so101_pick_place_ppo.pt", "SO101PickPlace-v1", 8, 50),
     ("franka_pick_place_ppo.pt", "FrankaPickPlace-v1", 5, 50),
     ("franka_open_drawer_ppo.pt", "FrankaOpenDrawer-v1", 3, 30),
     ("so100_lift_student.pt", "SO100Lift-v1", 8, 50),    # the image student: 32x32 cameras + proprioception
     ("so100_lift_student_randomized.pt", "SO100Lift-v1", 8, 50),   # trained and evaluated under "visual_v1"
     ("so101_lift_student.pt", "SO101Lift-v1", 8, 50)],   # the SO-101's image student: 8 of 8 (0.94 over 100)
)
def test_committed_policy_succeeds(checkpoint, env_id, shortest, longest):
    summary = evaluate(os.path.join(TASKS, checkpoint), episodes=8, seed=10_000)
    assert summary["env_id"] == env_id and summary["episodes"] == 8
    assert summary["success_rate"] >= 7 / 8
    assert shortest <= summary["mean_length"] <= longest


def test_committed_franka_image_student_lifts():
    """tasks/franka_lift_student.pt: FrankaLift-v1 from the 32x32 front and hand cameras of the
    Panda that carries one (``panda_wristcam``) and proprioception (0.98 over 100 episodes; 8 of
    these 8)."""
    summary = evaluate(os.path.join(TASKS, "franka_lift_student.pt"), episodes=8, seed=10_000)
    assert summary["env_id"] == "FrankaLift-v1" and summary["success_rate"] >= 7 / 8
    assert 5 <= summary["mean_length"] <= 40
    env_kwargs = summary["provenance"]["env"]["env_kwargs"]
    assert env_kwargs["obs_mode"] == "rgb" and env_kwargs["robot_uids"] == "panda_wristcam"


def test_committed_full_preset_student_lifts_in_randomized_scenes():
    """tasks/so100_lift_student_visual.pt: trained under the full visual preset and evaluated in it
    by default (lights, colours, textures, camera pose, distractors, image noise of the evaluation
    seeds): 5 of these 8, 0.73 over 100 held-out episodes."""
    summary = evaluate(os.path.join(TASKS, "so100_lift_student_visual.pt"), episodes=8, seed=10_000)
    assert summary["env_id"] == "SO100Lift-v1" and summary["success_rate"] >= 4 / 8
    assert summary["provenance"]["env"]["env_kwargs"]["randomization"] == "visual"


def test_committed_policy_holds_the_cube_up():
    summary = evaluate(CHECKPOINT, episodes=4, seed=10_100, full_episodes=True)
    assert summary["mean_length"] == 100   # terminations ignored: every episode runs to the limit
    assert summary["success_rate"] == 1.0 and summary["success_at_end"] == 1.0


def test_committed_push_policy_pushes_and_leaves_the_cube_in_the_goal_region():
    checkpoint = os.path.join(TASKS, "franka_push_ppo.pt")
    once = evaluate(checkpoint, episodes=8, seed=10_000)
    assert once["env_id"] == "FrankaPush-v1" and once["success_rate"] >= 7 / 8
    assert 5 <= once["mean_length"] <= 40   # a push takes a reach first, and ends well before the limit
    held = evaluate(checkpoint, episodes=8, seed=10_100, full_episodes=True)
    assert held["mean_length"] == 100 and held["success_rate"] >= 7 / 8 and held["success_at_end"] >= 7 / 8


def test_committed_stack_policy_stacks():
    summary = evaluate(os.path.join(TASKS, "franka_stack_v2_ppo.pt"), episodes=8, seed=10_000)
    assert summary["env_id"] == "FrankaStack-v2" and summary["episodes"] == 8
    assert summary["success_rate"] >= 5 / 8
    # grasp, carry, place and let go: never within 20 steps; the failures run to the 120-step limit
    assert 20 <= summary["mean_length"] <= 90


# State policies (Diffusion Policy; BC for SO101Sort-v1), trained on expert demonstrations recorded to the time limit
# (``collect_demos.py --full-episodes``; docs/training.md): they do the task and keep it done to the
# last step. When committed: 4 of these 4 at the end each, SO101PlaceInBowl-v1 3 of 4 (over 100 episodes at
# the end: SO101Stack-v1 0.99, FrankaStack-v1 0.96, FrankaOpenDrawer-v1 1.00; SO101Push-v1 0.91,
# SO101Pull-v1 0.97, SO101PlaceInBowl-v1 0.91 and SO101OpenDrawer-v1 0.97, from 100 such demonstrations;
# SO101PlaceOnTarget-v1 0.96 from 200: docs/training_so_arms.md); and BC on 2,000 for SO101Sort-v1 (0.96:
# docs/training_so101_sort.md).
@pytest.mark.parametrize("checkpoint, env_id, policy, limit", [
    ("so101_stack_diffusion_state.pt", "SO101Stack-v1", "diffusion", 100),
    ("franka_stack_diffusion_state.pt", "FrankaStack-v1", "diffusion", 120),
    ("franka_open_drawer_diffusion_state.pt", "FrankaOpenDrawer-v1", "diffusion", 100),
    ("so101_push_diffusion_state.pt", "SO101Push-v1", "diffusion", 80),
    ("so101_pull_diffusion_state.pt", "SO101Pull-v1", "diffusion", 80),
    ("so101_place_in_bowl_diffusion_state.pt", "SO101PlaceInBowl-v1", "diffusion", 100),
    ("so101_place_on_target_diffusion_state.pt", "SO101PlaceOnTarget-v1", "diffusion", 100),
    ("so101_open_drawer_diffusion_state.pt", "SO101OpenDrawer-v1", "diffusion", 80),
    ("so101_sort_bc_state.pt", "SO101Sort-v1", "bc", 160)])
def test_committed_imitation_policy_keeps_the_task_done_to_the_last_step(checkpoint, env_id, policy, limit):
    from simulo_envs.imitation.rollout import evaluate as evaluate_imitation

    summary = evaluate_imitation(os.path.join(TASKS, checkpoint), episodes=4, seed=10_000, full_episodes=True)
    assert (summary["env_id"], summary["policy"], summary["obs"]) == (env_id, policy, "state")
    assert summary["mean_length"] == limit   # terminations ignored: every episode runs to the limit
    assert summary["success_rate"] >= 3 / 4 and summary["success_at_end"] >= 3 / 4
