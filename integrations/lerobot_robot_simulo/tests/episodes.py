"""Episodes for the tests, written with LeRobot's own ``LeRobotDataset.create`` / ``add_frame`` /
``save_episode`` in the schema of LeRobot's real SO-101 follower (``SO101Follower``'s features
through LeRobot's ``hw_to_dataset_features``, ``robot_type`` ``so_follower``).

- ``write_expert_episode``: our scripted expert solving SO101PickPlace-v1 at 30 Hz (driving
  ``pd_ee_delta_pos``), recorded as a real follower records: ``observation.state`` the joint
  readings before each step, ``action`` the joint targets the step set (degrees, gripper
  0-100). Replayed as joint targets from the same seed, it reproduces the episode.
- ``write_synthetic_real_episode``: synthetic values in a real recording's schema (a 480x640
  front camera, 30 fps): smooth joint targets, and joint readings that follow them one frame
  late, as a servo reaching its target within a frame would.
"""

from __future__ import annotations

import numpy as np
from lerobot.cameras.opencv import OpenCVCameraConfig
from lerobot.datasets import LeRobotDataset
from lerobot.robots.so_follower import SO101Follower, SOFollowerRobotConfig
from lerobot.utils.feature_utils import hw_to_dataset_features

FPS = 30
TASK = "SO101PickPlace-v1"


def real_follower_features(cameras: dict | None = None) -> dict:
    """The dataset features ``lerobot-record`` makes for a real SO-101 follower with ``cameras``."""
    robot = SO101Follower(SOFollowerRobotConfig(port="/dev/null", cameras=cameras or {}))
    return {**hw_to_dataset_features(robot.action_features, "action"),
            **hw_to_dataset_features(robot.observation_features, "observation")}


def _write(root: str, features: dict, states: np.ndarray, actions: np.ndarray, task: str, images=None) -> None:
    dataset = LeRobotDataset.create("local/" + task.lower().replace(" ", "_")[:20], FPS, root=root,
                                    robot_type=SO101Follower.name, features=features, use_videos=True)
    for t in range(len(actions)):
        frame = {"observation.state": states[t].astype(np.float32), "action": actions[t].astype(np.float32), "task": task}
        for key, frames in (images or {}).items():
            frame[key] = frames(t)
        dataset.add_frame(frame)
    dataset.save_episode()
    dataset.finalize()


def expert_trajectory(seed: int, hold: int = 6):
    """(states, actions, success_step) of the expert on ``TASK`` from ``seed`` at ``FPS``; the
    episode runs ``hold`` steps past the first success."""
    from simulo_envs.envs.registration import REGISTERED
    from simulo_envs.policies import EXPERTS

    env = REGISTERED[TASK](num_envs=1, obs_mode="state_dict", control_mode="pd_ee_delta_pos",
                           sim_config={"control_freq": FPS}, max_episode_steps=-1)
    try:
        env.reset(seed=seed)
        expert, agent = EXPERTS[TASK](env), env.agent
        states, actions, success = [], [], None
        for t in range(300):
            states.append(agent.lerobot_from_qpos(agent.robot.state.qpos)[0].numpy().copy())
            _, _, _, _, info = env.step(expert.act())
            actions.append(agent.lerobot_from_qpos(agent.robot.state.drive_targets)[0].numpy().copy())
            if success is None and bool(info["success"][0]):
                success = t
            if success is not None and t >= success + hold:
                break
    finally:
        env.close()
    if success is None:
        raise RuntimeError(f"the expert did not solve {TASK} from seed {seed}")
    return np.array(states), np.array(actions), success


def write_expert_episode(root: str, seed: int) -> int:
    """The expert's episode from ``seed`` as a LeRobot dataset at ``root``; returns the step of
    its first success."""
    states, actions, success = expert_trajectory(seed)
    _write(root, real_follower_features(), states, actions, "Carry the cube to the goal")
    return success


def synthetic_targets(frames: int = 45) -> np.ndarray:
    """Smooth joint targets (T, 6), degrees and gripper 0-100, inside every joint's range and
    clear of the floor and the cube (the arm raised: ``shoulder_lift`` around -30 deg), ending on
    a held pose (the last 10 frames)."""
    t = np.minimum(np.arange(frames), frames - 10) / FPS
    return np.stack([25 * np.sin(2 * np.pi * 0.5 * t), -30 + 15 * np.sin(2 * np.pi * 0.4 * t),
                     10 + 20 * np.sin(2 * np.pi * 0.3 * t), 40 + 15 * np.cos(2 * np.pi * 0.5 * t),
                     30 * np.sin(2 * np.pi * 0.25 * t), 50 + 30 * np.cos(2 * np.pi * 0.25 * t)], axis=1)


def write_synthetic_real_episode(root: str) -> np.ndarray:
    """A synthetic recording in the real SO-101 follower's schema (module docstring) at ``root``;
    returns its actions (T, 6)."""
    actions = synthetic_targets()
    states = np.concatenate([actions[:1], actions[:-1]])  # the servos one frame behind
    cameras = {"front": OpenCVCameraConfig(index_or_path=0, width=640, height=480, fps=FPS)}
    gradient = np.linspace(0, 255, 640, dtype=np.uint8)[None, :, None].repeat(480, 0).repeat(3, 2)
    _write(root, real_follower_features(cameras), states, actions, "Wave the arm",
           images={"observation.images.front": lambda t: np.roll(gradient, 8 * t, axis=1)})
    return actions
