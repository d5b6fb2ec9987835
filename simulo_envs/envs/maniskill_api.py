"""The maniskill-baseenv seed's remaining names on ``BaseEnv`` (a mixin): attributes that
ManiSkill's own clients (``ManiSkillVectorEnv``, ``RecordEpisode``, its PPO baseline) and
ported task code read, mapped onto ours. Each is documented where it differs from the seed;
``docs/parity.md`` lists every seed point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.envs.reset import episode_seeds
from simulo_envs.envs.rng import BatchedRNG
from simulo_envs.envs.sensors import obs_mode_state
from simulo_envs.sim.render import keepalive_render_system, sapien_device


@dataclass(frozen=True)
class VisualStruct:
    """Which textures the sensor cameras render."""

    rgb: bool = False
    depth: bool = False
    segmentation: bool = False
    normal: bool = False
    albedo: bool = False
    position: bool = False


@dataclass(frozen=True)
class ObsModeStruct:
    """``obs_mode`` spelled out (the seed's ``obs_mode_struct``): ``state`` / ``state_dict``: the
    observation carries the privileged state (flat, or as dicts; ``"state"``, ``"rgb+state"``,
    ``"state_dict"``, ``"rgb+state_dict"``); ``visual``: the textures the cameras render."""

    state: bool
    state_dict: bool
    visual: VisualStruct

    @property
    def use_state(self) -> bool:
        """True when the observation carries privileged state (object poses...): ManiSkill's name,
        which task code ported from it reads."""
        return self.state or self.state_dict


class ManiSkillApiMixin:
    """Seed names for ``BaseEnv``; expects ``self._rng`` (an ``EpisodeRNG``)."""

    _batched_rng_backend = "numpy:random_state"
    """The streams are ``numpy.random.RandomState`` (the seed's backend)."""
    _sample_video_link = None
    """A link to a sample video of the task (for generated docs; none here)."""

    # ------------------------------------------------------------------ the seed's private names
    @property
    def _sim_freq(self) -> int:
        return self.sim_config.sim_freq

    @property
    def _control_freq(self) -> int:
        return self.sim_config.control_freq

    @property
    def _sim_steps_per_control(self) -> int:
        return self.sim_config.sim_steps_per_control

    @property
    def _control_mode(self):
        return self.control_mode

    @property
    def _obs_mode(self) -> str:
        return self.obs_mode

    @property
    def _reward_mode(self) -> str:
        return self.reward_mode

    @property
    def _default_sim_config(self):
        """The task's ``SimConfig`` before user overrides (``default_sim_config``)."""
        return self.default_sim_config

    @property
    def _custom_sensor_configs(self):
        """The ``sensor_configs`` overrides given at construction (``{}`` when none)."""
        return {} if self._sensor_overrides is None else self._sensor_overrides

    @property
    def _custom_human_render_camera_configs(self):
        """The ``human_render_camera_configs`` overrides given at construction (``{}`` when none)."""
        return {} if self._human_overrides is None else self._human_overrides

    @property
    def _custom_viewer_camera_configs(self):
        """The ``viewer_camera_configs`` overrides given at construction (``{}`` when none)."""
        return {} if self._viewer_overrides is None else self._viewer_overrides

    @property
    def _agent_sensor_configs(self) -> dict:
        """Cameras the agent carries (name -> ``CameraConfig``); our agents carry none."""
        return dict(getattr(self.agent, "sensor_configs", {}))

    @property
    def _sensors(self) -> dict:
        """Sensor camera name -> its ``CameraRig`` (one camera per env)."""
        return dict(self._sensor_rigs)

    @property
    def _human_render_cameras(self) -> dict:
        """Human render camera name -> its ``CameraRig``."""
        return dict(self._human_rigs)

    @property
    def _sim_device(self):
        """The ``sapien.Device`` the physics runs on."""
        return sapien_device(self.device)

    @property
    def _render_device(self):
        """The ``sapien.Device`` this process renders with (None when the env does not render)."""
        return keepalive_render_system().device if self._render else None

    @property
    def obs_mode_struct(self) -> "ObsModeStruct":
        """What ``obs_mode`` asks for: ``state`` (flat state), ``state_dict`` and ``visual`` (a
        ``VisualStruct`` of texture flags)."""
        textures = self._textures
        visual = VisualStruct(**{name: name in textures for name in VisualStruct.__dataclass_fields__})
        state = obs_mode_state(self.obs_mode)
        return ObsModeStruct(state=state == "state", state_dict=state == "state_dict", visual=visual)

    def _clear_sim_state(self, env_idx=None) -> None:
        """Zero every prop's and robot's velocity in ``env_idx`` (None: all envs)."""
        ids = normalize_env_ids(env_idx, self.num_envs, "env_idx")
        props, robots = self._state_objects()
        for prop in props.values():
            prop.set_velocity(torch.zeros(len(ids), 6), ids)
        for robot in robots.values():
            robot.set_qvel(torch.zeros(len(ids), robot.dof), ids)

    def _set_scene_config(self) -> None:
        """PhysX's global settings come from ``sim_config`` when the backend is made (applied
        in ``simulo_envs/sim/physx_cpu.py``); nothing to do here."""

    # ------------------------------------------------------------------ properties
    @property
    def sim_timestep(self) -> float:
        """PhysX timestep [s]: ``1 / sim_freq``."""
        return 1.0 / self.sim_config.sim_freq

    @property
    def gpu_sim_enabled(self) -> bool:
        """Whether the physics runs on PhysX's GPU system (``physx_cuda``; also its CPU emulator)."""
        return self.sim_backend.startswith("physx_cuda")

    @property
    def robot_link_names(self) -> list[str]:
        """The agent's link names (the ``"robot_path:link_name"`` entries of ``segmentation_id_map``
        use them)."""
        return list(self.agent.robot_link_names)

    # ------------------------------------------------------------------ observation space, details
    def update_obs_space(self, obs) -> None:
        """Derive ``single_observation_space`` / ``observation_space`` from a batched observation
        ``obs`` (a tensor, an array or a nested dict of them), e.g. what an observation wrapper
        makes of ``self._init_raw_obs``; ``obs`` becomes the new ``_init_raw_obs``."""
        self._set_observation_space(_as_tensors(obs))

    def print_sim_details(self) -> None:
        """Print the task, env count, backend, modes, rates, cameras and spaces (a debugging aid)."""
        task = self.spec.id if getattr(self, "spec", None) is not None else type(self).__name__
        cameras = ", ".join(f"{name}({rig.width}x{rig.height})" for name, rig in self._sensor_rigs.items())
        print("# " + "-" * 74 + " #")
        print(f"Task ID: {task}, num_envs={self.num_envs}, sim_backend={self.sim_backend}, device={self.device}")
        print(f"obs_mode={self.obs_mode}, control_mode={self.control_mode}, reward_mode={self.reward_mode}")
        print(f"render_mode={self.render_mode}, sensors: {cameras or 'none'}")
        print(f"sim_freq={self.sim_freq}, control_freq={self.control_freq}, max_episode_steps={self.max_episode_steps}")
        print(f"observation space: {self.observation_space}")
        print(f"(single) action space: {self.single_action_space}")
        print("# " + "-" * 74 + " #")

    # ------------------------------------------------------------------ random streams
    @property
    def _episode_seed(self) -> np.ndarray:
        """int64 (N,) episode seed of each env: the seed its episode streams last restarted from
        (a copy). With ``enhanced_determinism`` each reset draws a new one, so
        ``reset(seed=[_episode_seed[i]])`` on one env replays env ``i``'s episode."""
        return self._rng.episode_seeds.copy()

    @property
    def _main_seed(self) -> np.ndarray:
        """int64 (N,) seed each env's main stream last restarted from (``2022 + i`` at creation)."""
        return self._rng.main_seeds.copy()

    @property
    def _batched_episode_rng(self) -> BatchedRNG:
        """The per-env numpy episode streams, ManiSkill-style: ``self._batched_episode_rng[env_idx]
        .uniform(low, high, size=(2,))`` is float64 ``(len(env_idx), 2)``, a row per env stream."""
        return self._rng.batched

    @property
    def _episode_rng(self) -> np.random.RandomState:
        """Env 0's numpy episode stream (the seed keeps it for old task code; prefer
        ``_batched_episode_rng`` or ``episode_rng``)."""
        return self._rng.batched[0]

    @property
    def _batched_main_rng(self) -> BatchedRNG:
        """The per-env main streams (they only hand out episode seeds; internal in the seed too)."""
        return self._rng.main

    @property
    def _main_rng(self) -> np.random.RandomState:
        """Env 0's main stream."""
        return self._rng.main[0]

    def _set_main_rng(self, seed) -> None:
        """Restart the main streams of all envs: an int ``s`` gives env ``i`` the seed ``s + i``, a
        list one seed per env; None keeps them (the seed's behaviour)."""
        if seed is None:
            return
        seeds = episode_seeds(seed, np.arange(self.num_envs) + self._first_env)
        self._rng.seed(np.arange(self.num_envs), seeds)

    def _set_episode_rng(self, seed, env_idx) -> None:
        """Restart the episode streams of ``env_idx``: at ``seed`` (an int ``s`` gives ``s + i``, or
        one per env), or, when None, at fresh episode seeds from their main streams."""
        ids = np.asarray(torch.as_tensor(env_idx).cpu().numpy(), dtype=np.int64).reshape(-1)
        if seed is None:
            self._rng.draw_episode_seeds(ids)
            return
        seeds = episode_seeds(seed, ids + self._first_env)
        self._rng.seed_episodes(ids, seeds)


def _as_tensors(obs):
    if isinstance(obs, dict):
        return {k: _as_tensors(v) for k, v in obs.items()}
    return obs if isinstance(obs, torch.Tensor) else torch.as_tensor(np.asarray(obs))
