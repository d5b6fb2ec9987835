"""``LeRobotVectorEnv``: one batched env of ours, seen as the Gymnasium vector env LeRobot's
evaluation loop drives (``lerobot/scripts/lerobot_eval.py: rollout``, LeRobot 0.6.1).

What LeRobot reads, and what this class gives (numpy everywhere, as ``rollout`` calls
``torch.from_numpy`` on the observations and the reward):

=======================================  ===================================================
LeRobot reads                            here
=======================================  ===================================================
``obs["pixels"][camera]``                uint8 ``(N, H, W, 3)`` RGB of that sensor camera
                                         (``envs/utils.py: preprocess_observation`` asserts
                                         uint8 channel-last and maps it to
                                         ``observation.images.<camera>``)
``obs["agent_pos"]``                     float32 ``(N, D)``, -> ``observation.state``: the
                                         robot's joint readings in its LeRobot follower's
                                         units when the robot describes one (SO arms:
                                         ``shoulder_pan.pos`` ... in degrees, ``gripper.pos``
                                         0-100, as ``so_follower`` with ``use_degrees=True``),
                                         else the flat state observation (agent, then task
                                         extras: the columns our LeRobot datasets store as
                                         ``observation.state``)
``step(action)``                         float32 ``(N, A)`` in the action space: for a
                                         follower, joint targets in its units (the
                                         ``action`` its ``send_action`` takes)
``info["is_success"]``                   bool ``(N,)``, every step (the task's ``success``)
``info["final_info"]["is_success"]``     on a step where some env finished: the finished
                                         episodes' success (autoreset ``SAME_STEP``, the mode
                                         ``EnvConfig.create_envs`` asks Gymnasium for)
``call("task_description")``, ``call("task")``  each env's one-sentence instruction for its
                                         current episode (``BaseEnv.instructions``: the task's
                                         sentence, or the episode's where it names what the
                                         episode drew, "Put the red cube in the bowl.") and the
                                         task id, one per env
``call("_max_episode_steps")``           the episode limit, one per env
``call("render")``                       one uint8 ``(H, W, 3)`` frame per env
``metadata["render_fps"]``               the control rate [Hz]: one frame per step
=======================================  ===================================================

``reset(seed=..., options=...)`` takes one seed per env (``rollout`` passes a list) and drops
LeRobot's ``"lerobot_new_rollout"`` option (``envs/utils.py: NEW_ROLLOUT_OPTION``, meant for its
per-process freeze wrapper; a batched env has nothing to freeze). ``use_async_envs`` has no
meaning here: all envs step together in one PhysX system of this process.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from simulo_envs.envs.observations import flatten_obs
from simulo_envs.vector.numpy_view import to_numpy
from simulo_envs.vector.vector_env import SimuloVectorEnv

NEW_ROLLOUT_OPTION = "lerobot_new_rollout"
"""The ``reset`` option LeRobot's ``rollout`` passes (``lerobot/envs/utils.py``); dropped here."""
_PER_ENV_ATTRIBUTES = ("task", "_max_episode_steps", "max_episode_steps")


class LeRobotVectorEnv(VectorEnv):
    """LeRobot's env convention over a ``SimuloVectorEnv`` (module docstring).

    Args:
        venv: a ``SimuloVectorEnv`` in autoreset ``SAME_STEP`` over a visual obs mode (or a
            state dict mode when ``cameras`` is empty), with ``render_mode="rgb_array"``.
        task: the task id. task_description: its instruction.
        cameras: LeRobot camera name -> our sensor camera name (empty: no ``pixels``).
        follower_units: True: ``agent_pos`` in the robot's LeRobot units (``agent.lerobot``);
            False: the flat state observation.
    """

    def __init__(self, venv: SimuloVectorEnv, task: str, task_description: str, cameras: dict[str, str],
                 follower_units: bool):
        if venv.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError("LeRobotVectorEnv needs a SimuloVectorEnv with autoreset_mode SAME_STEP")
        self.venv = venv
        self.num_envs = venv.num_envs
        self.task = task
        self.task_description = task_description
        self.cameras = dict(cameras)
        self.follower_units = bool(follower_units)
        self._max_episode_steps = int(venv.max_episode_steps)
        self.max_episode_steps = self._max_episode_steps
        base = venv.base_env
        self.render_mode = "rgb_array"
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": int(base.control_freq),
                         "autoreset_mode": AutoresetMode.SAME_STEP}
        self.spec = venv.spec or gym.registry.get(task)  # its id names the suite of a hub env in LeRobot
        act = base.single_action_space
        self.single_action_space = spaces.Box(act.low.astype(np.float32), act.high.astype(np.float32),
                                              act.shape, np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._device = venv.device
        self.single_observation_space = self._space(base.single_observation_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._needs_reset = True

    # ------------------------------------------------------------------ features
    @property
    def features(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """What LeRobot's ``EnvConfig.features`` holds for this env: key -> (kind, shape), kind
        ``"ACTION"``, ``"STATE"`` or ``"VISUAL"``; keys ``action``, ``agent_pos``,
        ``pixels/<camera>``; image shapes ``(H, W, 3)``."""
        out = {"action": ("ACTION", tuple(self.single_action_space.shape)),
               "agent_pos": ("STATE", tuple(self.single_observation_space["agent_pos"].shape))}
        if "pixels" in self.single_observation_space.spaces:
            for name, space in self.single_observation_space["pixels"].spaces.items():
                out[f"pixels/{name}"] = ("VISUAL", tuple(space.shape))
        return out

    # ------------------------------------------------------------------ reset / step
    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Reset every env (or ``options["env_idx"]``); ``seed``: None, an int (env ``i`` gets
        ``seed + i``) or one int per env. Returns ``(obs, info)`` in LeRobot's convention.

        Raises:
            ValueError / TypeError: as ``BaseEnv.reset`` (a seed list of the wrong length, an
                unknown option); nothing changes.
        """
        options = {k: v for k, v in (options or {}).items() if k != NEW_ROLLOUT_OPTION} or None
        obs, info = self.venv.reset(seed=seed, options=options)
        self._needs_reset = False
        return self._convert_obs(obs), self._convert_info(info)

    def step(self, actions):
        """Step every env with ``actions`` (float ``(N, A)``, the action space's units); the done
        envs reset in the same step (their ``obs`` row is the new episode's first observation;
        ``info["final_obs"]`` / ``info["final_info"]`` hold the finished one's).

        Raises:
            ValueError: ``actions`` not of shape ``(num_envs, A)``, or not finite.
            RuntimeError: ``step`` before the first ``reset``.
        """
        if self._needs_reset:
            raise RuntimeError("step() before reset(): call reset() first")
        actions = np.asarray(actions, dtype=np.float32)
        if actions.shape != self.action_space.shape:
            raise ValueError(f"actions must be of shape {self.action_space.shape} (num_envs, action_dim), "
                             f"got {actions.shape}")
        if not np.isfinite(actions).all():
            raise ValueError("actions hold NaN or inf")
        obs, reward, terminated, truncated, info = self.venv.step(torch.as_tensor(actions, device=self._device))
        out_info = self._convert_info({k: v for k, v in info.items() if k not in _FINALS})
        if "final_info" in info:
            out_info["final_info"] = self._convert_info(info["final_info"])
            out_info["_final_info"] = to_numpy(info["_final_info"])
            out_info["final_obs"] = self._convert_obs(info["final_obs"])
            out_info["_final_obs"] = to_numpy(info["_final_obs"])
        return (self._convert_obs(obs), to_numpy(reward).astype(np.float32, copy=False),
                to_numpy(terminated).astype(bool, copy=False), to_numpy(truncated).astype(bool, copy=False), out_info)

    # ------------------------------------------------------------------ conversions
    def _space(self, ours: spaces.Dict) -> spaces.Dict:
        """The single-env observation space, from our env's (``ours``) without stepping it."""
        parts: dict[str, gym.Space] = {}
        if self.cameras:
            sensors = ours["sensor_data"]
            parts["pixels"] = spaces.Dict({name: sensors[cam]["rgb"] for name, cam in self.cameras.items()})
        width = agent_pos_width(ours, self.venv.base_env.agent, self.follower_units)
        parts["agent_pos"] = spaces.Box(-np.inf, np.inf, (width,), np.float32)
        return spaces.Dict(parts)

    def _convert_obs(self, obs: dict) -> dict:
        out = {}
        if self.cameras:
            sensors = obs["sensor_data"]
            out["pixels"] = {name: to_numpy(sensors[ours]["rgb"]) for name, ours in self.cameras.items()}
        out["agent_pos"] = to_numpy(self._agent_pos(obs)).astype(np.float32, copy=False)
        return out

    def _agent_pos(self, obs: dict) -> torch.Tensor:
        if self.follower_units:
            return self.venv.base_env.agent.lerobot_from_qpos(obs["agent"]["qpos"])
        return flatten_obs({key: obs[key] for key in ("agent", "extra") if key in obs})

    @staticmethod
    def _convert_info(info: dict) -> dict:
        out = to_numpy(info)
        if "success" in out:
            out["is_success"] = np.asarray(out["success"], dtype=bool).copy()
        return out

    # ------------------------------------------------------------------ the rest of the API
    def render(self) -> tuple:
        """One uint8 ``(H, W, 3)`` frame of the task's render camera per env, as a tuple."""
        frames = self.venv.render()
        return tuple(frames.detach().cpu().numpy()) if isinstance(frames, torch.Tensor) else tuple(frames)

    def call(self, name: str, *args, **kwargs) -> tuple:
        """One result per env, as ``SyncVectorEnv.call``: ``"render"`` gives the frames; the task,
        its description and episode limit are repeated per env; any other attribute or method
        of our env is called once and split per env when it has the env dimension first."""
        if name == "render":
            return self.render()
        if name in _PER_ENV_ATTRIBUTES:
            return (getattr(self, name),) * self.num_envs
        if name == "task_description":
            return self.task_descriptions()
        return self._per_env(self.venv.call(name, *args, **kwargs))

    def get_attr(self, name: str) -> tuple:
        """Attribute ``name``, one value per env (as ``call`` without calling)."""
        if name in _PER_ENV_ATTRIBUTES:
            return (getattr(self, name),) * self.num_envs
        if name == "task_description":
            return self.task_descriptions()
        return self._per_env(self.venv.get_attr(name))

    def task_descriptions(self) -> tuple:
        """Each env's instruction for its current episode (``BaseEnv.instructions``), one str per env."""
        return tuple(self.venv.base_env.instructions())

    def _per_env(self, value: Any) -> tuple:
        value = to_numpy(value)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == self.num_envs:
            return tuple(value)
        return (value,) * self.num_envs

    @property
    def unwrapped(self):
        """This env itself (Gymnasium's ``unwrapped``: no wrapper below it)."""
        return self

    @property
    def base_env(self):
        """Our batched env (a ``BaseEnv``)."""
        return self.venv.base_env

    def close_extras(self, **kwargs) -> None:
        """Close our env."""
        self.venv.close()


_FINALS = ("final_obs", "_final_obs", "final_observation", "_final_observation", "final_info", "_final_info")


def agent_pos_width(ours: spaces.Dict, agent, follower_units: bool) -> int:
    """Width of ``agent_pos`` for an env whose single observation space is ``ours``: the
    follower's joint count, or the flat state's columns (agent, then extra)."""
    if follower_units:
        return len(agent.lerobot.names)
    return sum(_width(ours[key]) for key in ("agent", "extra") if key in ours.spaces)


def _width(space: gym.Space) -> int:
    """Number of float columns ``flatten_obs`` gives for a (nested) Box space."""
    if isinstance(space, spaces.Dict):
        return sum(_width(s) for s in space.spaces.values())
    return int(np.prod(space.shape)) if space.shape else 1
