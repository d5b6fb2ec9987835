"""Our tasks as LeRobot environments: ``make_env(task, n_envs)`` returns a Gymnasium vector env in
LeRobot's env convention, which ``lerobot-eval`` and ``lerobot-train`` drive through the
``lerobot_env_simulo`` plugin (``integrations/lerobot_env_simulo/``, ``--env.type=simulo``) or a
hub-style ``env.py`` (``integrations/lerobot_env_simulo/hub/env.py``); and ``SimFollower``, a
task's scene behind a LeRobot follower arm's protocol (``follower.py``), which the
``lerobot_robot_simulo`` plugin (``integrations/lerobot_robot_simulo/``) makes a LeRobot robot.

This package does not import LeRobot: it follows LeRobot 0.6.1's conventions, cited where they
are used (``vector_env.py``: the observation, action, info and ``call`` contract read by
``lerobot/scripts/lerobot_eval.py`` and ``lerobot/envs/utils.py``; ``request.py``: the checks;
the SO arms' units: ``agents/so100.py``'s ``LEROBOT`` map, from
``lerobot/robots/so_follower/so_follower.py``). ``policy_folder`` / ``policy_env`` find a LeRobot
policy folder and the env it is evaluated in (``simulo_envs/training/lerobot_policies.py``), for
the plugin's evaluation (``lerobot_env_simulo/evaluation.py``). The guide: ``docs/lerobot.md``.
"""

from simulo_envs.datasets.episode_outcomes import write_episode_outcomes
from simulo_envs.lerobot.follower import FollowerCamera, SimFollower, tasks_for_robot
from simulo_envs.lerobot.make import build, describe, make_env
from simulo_envs.lerobot.request import OBS_TYPES, LeRobotRequest, check_request
from simulo_envs.lerobot.vector_env import NEW_ROLLOUT_OPTION, LeRobotVectorEnv
from simulo_envs.training.lerobot_policies import policy_env, policy_folder

__all__ = ["make_env", "describe", "build", "check_request", "LeRobotRequest", "LeRobotVectorEnv", "OBS_TYPES",
           "NEW_ROLLOUT_OPTION", "SimFollower", "FollowerCamera", "tasks_for_robot", "write_episode_outcomes",
           "policy_folder", "policy_env"]
