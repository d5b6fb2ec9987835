"""``BaseEnv``: the batched Gymnasium environment every task subclasses (maniskill-baseenv seed).

Lifecycle (a task overrides the hooks, in this order)::

    __init__ -> _reconfigure: Scene -> _load_agent -> _load_scene -> _load_lighting -> attach backend
    reset(seed, options) -> _initialize_episode(env_idx, options) for the reset envs only
    step(action) -> _before_control_step -> agent.set_action -> sim_steps_per_control x
                    (_before_simulation_step, PhysX step, _after_simulation_step)
                 -> _after_control_step -> evaluate -> obs, reward, terminated, truncated, info

Everything is batched over ``num_envs``: observations, rewards, ``terminated`` and
``truncated`` have the env dimension first, on ``env.device``.

Episode end (Gymnasium's contract, per env):
- ``terminated[i]``: env ``i`` reached a terminal state of the task (``info["success"]`` or
  ``info["fail"]``); the value of later states is zero.
- ``truncated[i]``: env ``i`` ran ``max_episode_steps`` steps without terminating (a time-out,
  not a terminal state); bootstrap from its value.
The env does not reset by itself: reset the done envs with
``reset(options={"env_idx": done_ids})`` (a partial reset), or use the vector wrapper's autoreset.
Truncation is counted per env inside the env (``max_episode_steps``, settable): ``gym.make(id,
num_envs=N)`` applies the registered limit per env, ``gym.make(..., max_episode_steps=k)`` sets it
(-1: none); Gymnasium's one-counter ``TimeLimit`` never stays on a batched env (``gym_spec.py``).

Reset options: ``reset`` accepts the keys declared in ``reset_option_keys`` over the class
hierarchy (``BaseEnv``: ``env_idx``, ``reconfigure``; a task adds the keys its
``_initialize_episode`` reads); any other key raises ValueError naming them (``reset_options.py``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import dataclasses
import gc

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector.utils import batch_space

from simulo_envs.cloner.plan import CloneCfg
from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.envs.env_options import check_env_options
from simulo_envs.envs.maniskill_api import ManiSkillApiMixin
from simulo_envs.envs.actions import clip_action, clip_dict_action, dict_action_bounds
from simulo_envs.envs import viewer
from simulo_envs.envs.faults import FaultsMixin
from simulo_envs.envs.fast_step import NumpyStepMixin
from simulo_envs.envs.hook_checks import checked_reward
from simulo_envs.envs.observations import flatten_obs, space_from_obs
from simulo_envs.envs.pointcloud import fuse_pointcloud
from simulo_envs.envs.randomization import RandomizationMixin
from simulo_envs.envs.rendering import RenderingMixin
from simulo_envs.envs.reset_options import check_reset_option_keys
from simulo_envs.envs.rng import MAIN_SEED, EpisodeRNG
from simulo_envs.envs.state import StateMixin
from simulo_envs.envs.sensors import STATE_OBS_MODES, apply_overrides, parse_obs_mode
from simulo_envs.envs.torch_rng import per_env_torch_draws
from simulo_envs.envs.viewer import HumanViewerMixin
from simulo_envs.scene import Scene
from simulo_envs.sim import backend_device, make_backend, resolve_backend_name
from simulo_envs.sim.render import require_vulkan
from simulo_envs.sim.config import SimConfig


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def episode_seeds(seed, env_idx: np.ndarray) -> Optional[list[int]]:
    """The episode seed of each env in ``env_idx`` for ``reset(seed=...)``: None (streams
    continue), ``[seed + i for i in env_idx]`` for an int, or the list itself (one int per env).

    Raises:
        TypeError: not None, an int or a list of ints. ValueError: a list of the wrong length,
            or a negative seed.
    """
    if seed is None:
        return None
    if isinstance(seed, torch.Tensor) and seed.ndim == 0:
        seed = seed.item()
    if _is_int(seed):
        seeds = [int(seed) + int(i) for i in env_idx]
    else:
        if isinstance(seed, (str, bytes, dict, set)) or not hasattr(seed, "__len__"):
            raise TypeError(f"reset: seed must be None, an int or a list of ints, got {seed!r}")
        values = seed.tolist() if isinstance(seed, (np.ndarray, torch.Tensor)) else list(seed)
        if not all(_is_int(v) for v in values):
            raise TypeError(f"reset: seed list must hold ints, got {values!r}")
        seeds = [int(v) for v in values]
        if len(seeds) != len(env_idx):
            raise ValueError(f"reset: got {len(seeds)} seeds for {len(env_idx)} envs being reset")
    if seeds and (min(seeds) < 0 or max(seeds) >= 2**63):
        raise ValueError(f"reset: seeds must be >= 0 and < 2**63, got {seeds if len(seeds) < 9 else (min(seeds), max(seeds))}")
    return seeds


class BaseEnv(NumpyStepMixin, FaultsMixin, RandomizationMixin, RenderingMixin, HumanViewerMixin, StateMixin, ManiSkillApiMixin, gym.Env):
    """Superclass of simulo_envs tasks.

    Args:
        num_envs: parallel envs, stepped together (CPU or GPU).
        obs_mode: ``"state"`` (default; None means it too: flat float32 ``(N, D)``), ``"state_dict"`` (nested dict of tensors),
            ``"none"`` (empty dict), or visual: ``"rgb"``, ``"depth"``, ``"segmentation"``,
            ``"normal"``, ``"albedo"``, ``"rgbd"``, ``"sensor_data"`` and ``+`` combinations, giving
            ``{"agent", "extra", "sensor_data": {camera: {texture: (N, H, W, C)}}, "sensor_param"}``
            (see ``simulo_envs/envs/rendering.py``), or ``"pointcloud"`` (the cameras fused into
            ``obs["pointcloud"]``, see ``simulo_envs/envs/pointcloud.py``).
        reward_mode: ``"normalized_dense"`` (in [0, 1]; the default, ``SUPPORTED_REWARD_MODES[0]``,
            also for None), ``"dense"``, ``"sparse"`` (+1 success, -1 fail, else 0) or ``"none"`` (zeros).
        control_mode: the agent's control mode; None takes the agent's default.
        render_mode: None, ``"rgb_array"`` (``render()`` -> uint8 (N, H, W, 3) from the human
            render camera), ``"sensors"`` (every sensor texture as an image, side by side),
            ``"all"`` (both side by side) or ``"human"`` (SAPIEN's viewer window; refused at
            construction where no display exists). See ``simulo_envs/envs/rendering.py``.
        clone_cfg: how heterogeneous props pick their variant per env (``CloneCfg``); None takes
            the task's ``default_clone_cfg``.
        sensor_configs / human_render_camera_configs: overrides of the task's camera configs:
            ``{camera_name: {field: value}}`` or ``{field: value}`` for every camera (fields of
            ``CameraConfig``: pose, width, height, fov, near, far, shader_pack).
        sim_config: a dict of ``SimConfig`` fields overriding the task's defaults, or a ``SimConfig``.
        sim_backend: ``"auto"``, ``"physx_cpu"``, ``"physx_cuda"`` / ``"physx_cuda:N"`` (tensors on
            ``cuda:N``) or ``"physx_cuda_emulated"`` (the GPU code path on the CPU, for tests);
            see ``simulo_envs.sim``.
        max_episode_steps: per-env truncation limit [env steps]; None takes the task's default
            (``default_max_episode_steps``); -1: no limit (Gymnasium's convention). Settable later
            through the ``max_episode_steps`` property.
        enhanced_determinism: every reset draws fresh episode seeds from the per-env main streams
            (so each episode replays alone from ``_episode_seed``); by default an unseeded reset
            continues the episode streams (``simulo_envs/envs/rng.py``).
        randomization: a domain randomization table (``Randomize`` entries) replacing the task's
            ``default_randomization``; see ``simulo_envs/envs/randomization.py``.
        robot_uids, reconfiguration_freq, shader_dir, enable_shadow, viewer_camera_configs,
            render_backend, parallel_in_single_scene: the seed's keywords, with their meaning here
            in ``simulo_envs/envs/env_options.py``.

    Raises:
        ValueError: an unknown mode or bad ``num_envs`` / ``sim_config`` / camera override.
        RuntimeError: rendering asked for (``render_mode`` or a visual ``obs_mode``) where no
            Vulkan driver exists; the message says what to install. Raised before anything is built.
    """

    SUPPORTED_OBS_MODES = STATE_OBS_MODES + ("sensor_data", "any_textures", "pointcloud")
    """The seed's tuple; ``"any_textures"`` stands for any of ``rgb``, ``depth``, ``segmentation``,
    ``normal``, ``albedo`` (and ``rgbd``) joined with ``+``."""
    SUPPORTED_REWARD_MODES = ("normalized_dense", "dense", "sparse", "none")
    SUPPORTED_RENDER_MODES: tuple[str, ...] = ("human", "rgb_array", "sensors", "all")
    #: Per instance, ``render_fps`` is the env's ``control_freq`` (one frame per env step).
    metadata: dict[str, Any] = {"render_modes": ["human", "rgb_array", "sensors", "all"], "render_fps": 20}

    _first_env: int = 0
    """Index of env 0 in the batch these envs belong to: a worker shard of the sharded vector env
    holds envs ``_first_env ..`` of a bigger batch and seeds them as that batch does
    (``reset(seed=s)``: env ``i`` here gets ``s + _first_env + i``)."""

    default_sim_config = SimConfig()
    default_clone_cfg = CloneCfg()
    default_max_episode_steps: Optional[int] = None
    SUPPORTED_ROBOTS: Optional[Sequence] = None
    """``robot_uids`` values the task supports (None: any registered agent)."""
    default_robot_uids = None
    """The agent(s) built when ``robot_uids`` is None (a uid of ``simulo_envs.agents.REGISTERED_AGENTS``)."""
    default_control_mode: Optional[str] = None
    """The control mode when ``control_mode`` is None (None: the agent's own default)."""
    #: ``reset(options=...)`` keys this class reads; each subclass (or mixin) lists only its own
    #: additions, the accepted set is the union over the MRO (``reset_options.known_reset_option_keys``).
    reset_option_keys: tuple[str, ...] = ("env_idx", "reconfigure", "reset_to_env_states")

    def __init__(
        self,
        num_envs: int = 1,
        obs_mode: str = "state",
        reward_mode: Optional[str] = None,
        control_mode: Optional[str] = None,
        render_mode: Optional[str] = None,
        sim_config: Union[None, dict, SimConfig] = None,
        sim_backend: str = "auto",
        max_episode_steps: Optional[int] = None,
        sensor_configs: Optional[dict] = None,
        human_render_camera_configs: Optional[dict] = None,
        clone_cfg: Optional[CloneCfg] = None,
        enhanced_determinism: bool = False,
        randomization: Optional[Sequence] = None,
        robot_uids=None,
        reconfiguration_freq: Optional[int] = None,
        shader_dir: Optional[str] = None,
        enable_shadow: bool = False,
        viewer_camera_configs: Optional[dict] = None,
        render_backend: Optional[str] = "gpu",
        parallel_in_single_scene: bool = False,
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        obs_mode = self.SUPPORTED_OBS_MODES[0] if obs_mode is None else obs_mode
        reward_mode = self.SUPPORTED_REWARD_MODES[0] if reward_mode is None else reward_mode
        self._textures = parse_obs_mode(obs_mode)
        if render_mode == "sensors" and not self._textures:
            raise ValueError("render_mode='sensors' shows the sensor cameras: use a visual obs_mode such as 'rgb'")
        if sim_config is not None and not isinstance(sim_config, (dict, SimConfig)):
            raise TypeError(f"sim_config must be a dict of SimConfig fields or a SimConfig, got {type(sim_config).__name__}")
        if reward_mode not in self.SUPPORTED_REWARD_MODES:
            raise ValueError(f"reward_mode {reward_mode!r} not supported; choose from {self.SUPPORTED_REWARD_MODES}")
        if render_mode is not None and render_mode not in self.SUPPORTED_RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r} not supported; choose from {self.SUPPORTED_RENDER_MODES} or None")
        extra = check_env_options(
            type(self), textures=self._textures, render_mode=render_mode, robot_uids=robot_uids,
            reconfiguration_freq=reconfiguration_freq, render_backend=render_backend, shader_dir=shader_dir,
            enable_shadow=enable_shadow, viewer_camera_configs=viewer_camera_configs,
            parallel_in_single_scene=parallel_in_single_scene, enhanced_determinism=enhanced_determinism)
        limit = self.default_max_episode_steps if max_episode_steps is None else max_episode_steps
        self.num_envs = int(num_envs)
        self.obs_mode = obs_mode
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.sim_config = self.default_sim_config.merged(sim_config)
        # One frame per env step: videos play in real time at the control rate (20 Hz by default).
        self.metadata = {**type(self).metadata, "render_fps": self.sim_config.control_freq}
        self.sim_backend = resolve_backend_name(sim_backend)
        self.device = backend_device(self.sim_backend)
        self._requested_control_mode = control_mode
        self.clone_cfg = clone_cfg or self.default_clone_cfg
        self._sensor_overrides = sensor_configs
        self._human_overrides = human_render_camera_configs
        self._viewer_overrides = viewer_camera_configs
        self._shader_pack = extra.shader_pack
        self._render_config = extra.render
        self.robot_uids = extra.robot_uids
        self.reconfiguration_freq = extra.reconfiguration_freq
        self._reconfig_counter = 0
        self._reconfig_count = 0
        self.enable_shadow = extra.render.shadows
        self._parallel_in_single_scene = extra.render.single_scene
        self._render = bool(self._textures) or render_mode is not None
        if self._render:
            require_vulkan()
        if render_mode == "human":
            viewer.check_human_render()  # no display: a clear error now, not at the first render()
        self._viewer_camera_configs = apply_overrides(self._default_viewer_camera_configs, viewer_camera_configs)
        self._closed = False
        self._backend = None
        self._enhanced_determinism = extra.enhanced_determinism
        self._rng = EpisodeRNG(self.num_envs)  # main seeds MAIN_SEED + i
        self._last_obs = None
        self._init_randomization(randomization)
        self._init_faults()
        self._elapsed_steps = torch.zeros(self.num_envs, dtype=torch.int32, device=self.device)
        self._one = torch.tensor(1, dtype=torch.int32, device=self.device)
        self._limit = torch.zeros((), dtype=torch.int32, device=self.device)
        self.max_episode_steps = limit  # validated by the setter, before the scene is built
        # Built and reset as the seed does at creation: env i seeded MAIN_SEED + i, so the first
        # unseeded reset is the same episode in every fresh process.
        obs, _ = self.reset(seed=MAIN_SEED, options={"reconfigure": True})
        self.single_action_space = self.agent.single_action_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # A dict action space (several robots): per-key bounds; else one Box's.
        self._dict_action_bounds = dict_action_bounds(self.single_action_space)
        if self._dict_action_bounds is None:
            self._action_low_np = self.single_action_space.low.astype(np.float32)
            self._action_high_np = self.single_action_space.high.astype(np.float32)
            self._action_low = torch.from_numpy(self._action_low_np).to(self.device)
            self._action_high = torch.from_numpy(self._action_high_np).to(self.device)
        self._init_raw_obs = obs
        self._init_raw_state = self.get_state_dict()
        self.single_observation_space = space_from_obs(obs, batched=False)
        self.observation_space = space_from_obs(obs, batched=True)

    # ------------------------------------------------------------------ properties
    @property
    def control_mode(self) -> str:
        """The agent's control mode."""
        return self.agent.control_mode

    @property
    def sim_freq(self) -> int:
        """Physics rate [Hz]."""
        return self.sim_config.sim_freq

    @property
    def control_freq(self) -> int:
        """Env step rate [Hz]."""
        return self.sim_config.control_freq

    @property
    def control_timestep(self) -> float:
        """Seconds of simulated time per env step."""
        return 1.0 / self.sim_config.control_freq

    @property
    def max_episode_steps(self) -> Optional[int]:
        """Per-env time limit [env steps]: env ``i`` is truncated once ``elapsed_steps[i] >=
        max_episode_steps``; None: never. Settable (an int >= 1; None or -1: no limit), counted
        from each env's last reset. Raises ValueError for anything else (nothing changes)."""
        return self._max_episode_steps

    @max_episode_steps.setter
    def max_episode_steps(self, value: Optional[int]) -> None:
        if value is not None and value != -1 and (not _is_int(value) or value < 1):
            raise ValueError(f"max_episode_steps must be an int >= 1, -1 (no limit) or None, got {value!r}")
        self._max_episode_steps = None if value is None or value == -1 else int(value)
        self._limit.fill_(self._max_episode_steps or 0)

    @property
    def elapsed_steps(self) -> torch.Tensor:
        """int32 (N,) steps since each env's last reset; fresh."""
        return self._elapsed_steps.clone()

    @property
    def backend(self):
        """The simulation backend (``simulo_envs.sim``): the only object that talks to SAPIEN."""
        return self._backend

    @property
    def episode_rng(self) -> EpisodeRNG:
        """Per-env random streams for ``_initialize_episode`` (``uniform``/``integers`` give a row
        per reset env; see ``simulo_envs/envs/rng.py``). Torch's random functions called in
        ``_initialize_episode`` follow the same seeds (``simulo_envs/envs/torch_rng.py``)."""
        return self._rng

    # ------------------------------------------------------------------ hooks for tasks
    def _load_agent(self, options: dict, initial_agent_poses=None, build_separate: bool = False) -> None:
        """Create ``self.agent`` from ``self.robot_uids`` and add its robot(s) to ``self.scene``.

        Args:
            options: the reset options (unused by the default).
            initial_agent_poses: env-local pose of the robot's fixed base (a ``Pose``, a
                ``sapien.Pose`` or ``[x, y, z, qw, qx, qy, qz]``, the same in every env), or a list
                of them, one per robot of a ``robot_uids`` tuple; default the env origin.
            build_separate: accepted for the seed's signature; every env's robot is always its
                own articulation here, so per-env randomisation of robot properties works
                either way.

        Override it to build the agent yourself. Raises ValueError when no robot is named
        (neither ``robot_uids`` nor the task's ``default_robot_uids``).
        """
        from simulo_envs.agents import load_agents

        if self.robot_uids is None:
            raise ValueError(f"{type(self).__name__} names no robot: pass robot_uids=... or set default_robot_uids")
        self.agent = load_agents(self.scene, self.robot_uids, self._requested_control_mode or self.default_control_mode,
                                 initial_agent_poses)

    def _load_scene(self, options: dict) -> None:
        """Add props (``self.scene.add``) and global things (ground)."""

    def _load_lighting(self, options: dict) -> None:
        """Set the scene's lights (``self.scene.set_lighting``); the default is an ambient light
        and one directional light from above and behind. Used only when rendering."""
        self.scene.set_lighting()

    def _after_reconfigure(self, options: dict) -> None:
        """Runs after the scene is attached to a backend."""

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        """Set the initial state of the envs in ``env_idx`` (int64 (k,)) only."""

    def evaluate(self) -> dict:
        """Task predicates, batched: ``{"success": bool (N,), "fail": bool (N,), ...}``."""
        return {}

    def compute_dense_reward(self, obs: Any, action: torch.Tensor, info: dict) -> torch.Tensor:
        """Task hook: dense reward, float32 (N,), from ``info`` (``evaluate``'s predicates).

        Raises:
            NotImplementedError: the task defines none (use another ``reward_mode``).
        """
        raise NotImplementedError(f"{type(self).__name__} has no dense reward")

    def compute_normalized_dense_reward(self, obs: Any, action: torch.Tensor, info: dict) -> torch.Tensor:
        """Task hook: the dense reward scaled into [0, 1], float32 (N,).

        Raises:
            NotImplementedError: the task defines none.
        """
        raise NotImplementedError(f"{type(self).__name__} has no normalized dense reward")

    def compute_sparse_reward(self, obs: Any, action: torch.Tensor, info: dict) -> torch.Tensor:
        """+1 where ``info["success"]``, -1 where ``info["fail"]``, else 0; float32 (N,)."""
        reward = torch.zeros(self.num_envs, device=self.device)
        if "success" in info:
            reward = reward + info["success"].to(torch.float32)
        if "fail" in info:
            reward = reward - info["fail"].to(torch.float32)
        return reward

    def _get_obs_agent(self) -> dict:
        """Proprioception: ``{"qpos": (N, dof), "qvel": (N, dof)}`` (per agent key for several robots)."""
        if hasattr(self.agent, "get_proprioception"):
            return self.agent.get_proprioception()
        state = self.agent.robot.state
        return {"qpos": state.qpos, "qvel": state.qvel}

    def _get_obs_extra(self, info: dict) -> dict:
        """Task observations (env-local frame), a dict of (N, ...) tensors."""
        return {}

    def _before_control_step(self) -> None: ...

    def _after_control_step(self) -> None: ...

    def _before_simulation_step(self) -> None: ...

    def _after_simulation_step(self) -> None: ...

    # ------------------------------------------------------------------ reconfigure
    def _reconfigure(self, options: Optional[dict] = None) -> None:
        """Build the scene from scratch: clear the old one, then the hooks in the module docstring's
        order. Runs at creation, on ``reset(options={"reconfigure": True})`` and every
        ``reconfiguration_freq`` full resets. ``options`` (default ``{}``) goes to the load hooks."""
        options = {} if options is None else options
        self._clear()
        self._setup_scene()
        self._reconfig_count += 1
        self._load_agent(options)
        self._check_agent_uids()
        self._load_scene(options)
        self._load_lighting(options)
        self._randomize_build()
        origins = self.scene.env_origins.cpu().numpy()
        self._backend = make_backend(self.sim_backend, self.num_envs, origins, self.sim_config, render=self._render,
                                     render_config=self._render_config)
        self.scene.attach(self._backend)
        self._setup_sensors(options)
        self._randomize_startup()
        self._env_origins = self.scene.env_origins
        self.agent.on_attached(self._env_origins)
        # Origins padded to pose width: pose_world - _origin_poses is the env-local pose (N, 7).
        self._origin_poses = torch.cat([self._env_origins, torch.zeros(self.num_envs, 4, device=self.device)], dim=1)
        self._after_reconfigure(options)
        self._sim_hooks = self._overridden_sim_hooks()
        self._fast_step = self._numpy_step_applies()
        self._reconfig_counter = self.reconfiguration_freq

    def _clone_cfg_for_build(self) -> CloneCfg:
        """The clone config of this build: the k-th rebuild (k >= 1) of a ``"random"`` strategy
        draws with ``CloneCfg.seed + k``, so a rebuild re-samples the heterogeneous props, the
        same way in every process and worker shard."""
        cfg = self.clone_cfg
        if self._reconfig_count == 0 or cfg.clone_strategy != "random":
            return cfg
        return dataclasses.replace(cfg, seed=cfg.seed + self._reconfig_count)

    def _check_agent_uids(self) -> None:
        """A task's own ``_load_agent`` must build the robot ``robot_uids`` asked for."""
        wanted, built = self.robot_uids, getattr(self.agent, "uid", None)
        if wanted is not None and built is not None and not isinstance(wanted, type):
            if (tuple(wanted) if isinstance(wanted, tuple) else wanted) != built:
                raise ValueError(f"robot_uids={wanted!r}, but {type(self).__name__} builds {built!r}")

    def _setup_scene(self) -> None:
        """Make the empty ``self.scene`` the hooks fill (``_make_scene``)."""
        self.scene = self._make_scene()

    def _make_scene(self) -> Scene:
        """The empty ``Scene`` a (re)configuration fills: env origins on the grid of
        ``num_envs`` (all at the world origin with ``sim_config.isolate_envs``: each env is a
        world of its own). The sharded vector env overrides it to build a slice of a bigger batch."""
        spacing = 0.0 if self.sim_config.isolate_envs else self.sim_config.env_spacing
        return Scene(self.num_envs, spacing, self.device, clone_cfg=self._clone_cfg_for_build())

    def _overridden_sim_hooks(self):
        base = BaseEnv
        before = self._before_simulation_step if type(self)._before_simulation_step is not base._before_simulation_step else None
        after = self._after_simulation_step if type(self)._after_simulation_step is not base._after_simulation_step else None
        return before, after

    # ------------------------------------------------------------------ reset
    def reset(self, seed: Union[None, int, Sequence[int]] = None, options: Optional[dict] = None):
        """Reset all envs, or only ``options["env_idx"]``.

        Args:
            seed: None (each env's episode streams continue), an int ``s`` (env ``i`` restarts its
                streams at ``s + i``, so env ``k`` of a batch matches a single env seeded ``s + k``),
                or one int per reset env; ints in ``[0, 2**63)``. See ``simulo_envs/envs/rng.py``:
                numpy draws (``episode_rng``) and torch draws in ``_initialize_episode`` both
                follow these seeds. A seed also seeds Gymnasium's ``np_random`` (with ``s``, or
                the list's first seed); episodes never draw from it.
            options: ``"env_idx"``: envs to reset (any ``env_ids`` form; default all). Envs not
                listed keep their state bit for bit. ``"reconfigure"``: True rebuilds the scene
                (all envs). ``"reset_to_env_states"``: ``{"env_states": state, "obs": optional}``
                restores ``state`` (a ``get_state_dict()`` dict or a ``get_state()`` flat tensor,
                rows = reset envs) instead of calling ``_initialize_episode``; with ``"obs"`` (the
                reset envs' observation rows, as ``reset`` returns them) the observation is not
                recomputed. Keys a task declares in ``reset_option_keys`` are passed to
                ``_initialize_episode``; any other key is refused.

        With a randomization table, the reset envs (only they) draw their ``"reset"`` entries
        before ``_initialize_episode``; a seed also restarts their randomization streams.

        Returns:
            ``(obs, info)`` for all envs; ``info["reconfigure"]`` says whether the scene was rebuilt.

        Raises:
            ValueError: an unknown ``options`` key (the message lists the known ones), or a seed
                list of the wrong length. IndexError/ValueError/TypeError: bad ``env_idx``.
                KeyError/ValueError: a ``reset_to_env_states`` that does not fit the scene.
            Nothing changes when it raises.
        """
        self._require_open()
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset: options must be a dict or None, got {type(options).__name__}")
        options = dict(options or {})
        check_reset_option_keys(type(self), options)
        env_idx = normalize_env_ids(options.pop("env_idx", None), self.num_envs, "options['env_idx']")
        reconfigure = options.pop("reconfigure", False)
        if not isinstance(reconfigure, (bool, np.bool_)):
            raise TypeError(f"reset: options['reconfigure'] must be a bool, got {reconfigure!r}")
        reconfigure = bool(reconfigure)
        restore = options.pop("reset_to_env_states", None)
        if len(env_idx) == self.num_envs and self.reconfiguration_freq:
            reconfigure = reconfigure or self._reconfig_counter <= 0  # every k-th full reset rebuilds
        if seed is not None and restore is None:  # a seed decides build-time draws too (randomization.py)
            reconfigure = reconfigure or self._seeded_reset_rebuilds(env_idx)
        if reconfigure:
            env_idx = np.arange(self.num_envs)  # rebuilding the scene resets every env
        seeds = episode_seeds(seed, env_idx + self._first_env)  # validated before anything changes
        if restore is not None:
            restore = self._check_restore(restore, env_idx)
        if seeds:
            # Gymnasium's env-level generator ``np_random`` is seeded with ``s`` (a list: its first
            # seed), as gym.Env.reset does; episodes are sampled from ``episode_rng``, never from it.
            scalar = _is_int(seed) or (isinstance(seed, torch.Tensor) and seed.ndim == 0)
            super().reset(seed=int(seed) if scalar else seeds[0])
        if seeds is not None:
            self._rng.seed(env_idx, seeds)
        elif reconfigure or self._enhanced_determinism:
            self._rng.draw_episode_seeds(env_idx)
        if seeds is not None or reconfigure or self._enhanced_determinism:
            self._randomize_seed(env_idx, self._rng.episode_seeds[env_idx],  # new episode seeds
                                 redraw_startup=seeds is not None and not reconfigure and restore is None)
        if reconfigure:
            with self._torch_draws(env_idx):
                self._reconfigure(options)
            self._rng.restart(env_idx)  # episode draws do not depend on what building drew
        if len(env_idx) == self.num_envs:
            self._reconfig_counter -= 1
        idx = torch.from_numpy(env_idx).to(self.device)
        if len(env_idx):
            self._elapsed_steps[idx] = 0
            self._restore_faulted(env_idx)  # a quarantined env gets its home state back first
            if restore is None:
                self._randomizer.reset(env_idx)  # before the task's episode draws
                with self._torch_draws(env_idx):
                    self._initialize_episode(idx, options)
            else:
                self._write_state_dict(restore[0], env_idx)
        info = self.get_info()
        if restore is not None and restore[1] is not None:
            obs = _replace_rows(self._last_obs, idx, restore[1])
        else:
            obs = self.get_obs(info)
        info["reconfigure"] = reconfigure
        self._last_obs = obs
        if reconfigure:
            self._record_home_state()
        return obs, info

    def _torch_draws(self, env_idx: np.ndarray):
        """Context in which torch's random functions draw per env (``simulo_envs/envs/torch_rng.py``)."""
        rng = self._rng
        return per_env_torch_draws(rng.torch_generators(env_idx), rng.fallback_seed(env_idx), self.device)

    def _check_restore(self, restore, env_idx: np.ndarray) -> tuple[dict, Any]:
        """Validate ``options["reset_to_env_states"]``; returns (parsed state, obs rows or None)."""
        if not isinstance(restore, dict) or "env_states" not in restore:
            raise KeyError("reset: options['reset_to_env_states'] must be a dict with 'env_states' "
                           "(a get_state_dict() dict or a get_state() tensor) and optionally 'obs'")
        unknown = sorted(set(restore) - {"env_states", "obs"})
        if unknown:
            raise KeyError(f"reset: options['reset_to_env_states'] has unknown keys {unknown}; known: ['env_states', 'obs']")
        states = restore["env_states"]
        if not isinstance(states, dict):
            states = self._state_dict_from_flat(states, len(env_idx))
        parsed = self._check_state_dict(states, env_idx)
        obs = restore.get("obs")
        if obs is not None:
            obs = _check_obs_rows(obs, self._last_obs, len(env_idx), self.device)
        return parsed, obs

    # ------------------------------------------------------------------ step
    def step(self, action):
        """Apply ``action`` to every env and advance ``sim_steps_per_control`` physics steps.

        Args:
            action: ``(N, action_dim)`` (or ``(action_dim,)`` when ``num_envs == 1``), torch or
                numpy; clipped to ``action_space``. None steps physics with the previous targets.

        Returns:
            ``obs``, ``reward`` float32 (N,), ``terminated`` bool (N,), ``truncated`` bool (N,), ``info``.

        Raises:
            ValueError: wrong action shape or a NaN/inf entry; nothing is simulated.
        """
        self._require_open()
        action = self._step_action(action)
        self._elapsed_steps.add_(self._one)
        if self._randomizer.has_interval:
            self._randomizer.interval(self._elapsed_steps)
        self._detect_faults()  # quarantines envs whose physics went bad (faults.py)
        finite = None
        # A hook set on the instance (env.evaluate = ...) is honoured: the torch path calls it.
        if self._fast_step and self.__dict__.keys().isdisjoint(self._NUMPY_STEP_HOOK_SET):
            info, obs, reward, terminated, finite = self._numpy_outputs()
        else:
            info = self.get_info()
            raw_obs = self.get_obs(info, unflattened=True)
            reward = checked_reward(self, info, raw_obs, action)  # get_reward; outputs checked once per build
            obs = self._flatten_raw_obs(raw_obs)
            terminated = self._terminated(info)
        if self.max_episode_steps is None:
            truncated = self._false()
        else:
            truncated = self._elapsed_steps >= self._limit
        obs, reward, terminated, truncated = self._quarantine_outputs(obs, reward, terminated, truncated, info, finite)
        self._last_obs = obs
        return obs, reward, terminated, truncated, info

    def _step_action(self, action):
        """Validate and clip ``action``, apply it and advance the physics by one env step (with
        the control- and simulation-step hooks); returns the clipped action (None for None).

        Raises:
            ValueError: a bad action; nothing is simulated.
        """
        action = self._prepare_action(action)
        self._before_control_step()
        if action is not None:
            self.agent.set_action(action)
        before, after = self._sim_hooks
        self._backend.step(self.sim_config.sim_steps_per_control, before, after)
        self._after_control_step()
        return action

    def _terminated(self, info: dict) -> torch.Tensor:
        success, fail = info.get("success"), info.get("fail")
        if success is None and fail is None:
            return self._false()
        if fail is None:
            return success.clone()
        if success is None:
            return fail.clone()
        return success | fail

    def _false(self) -> torch.Tensor:
        return torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)

    def _prepare_action(self, action) -> Optional[torch.Tensor]:
        """Validate and clip an action (``clip_action``); returns float32 (N, action_dim) on
        ``self.device``, or None for None. Off the CPU the checks run in torch on the device."""
        if action is None:
            return None
        if self._dict_action_bounds is not None:
            return clip_dict_action(action, self.num_envs, self._dict_action_bounds, self.device)
        if isinstance(action, torch.Tensor) and action.device.type != "cpu" and self.device.type != "cpu":
            if action.is_complex() or action.dtype == torch.bool:
                raise ValueError(f"action must be real-valued, got dtype {action.dtype}")
            dim = self._action_low_np.shape[0]
            action = action.detach().to(torch.float32)
            if action.shape == (dim,) and self.num_envs == 1:
                action = action.unsqueeze(0)
            if tuple(action.shape) != (self.num_envs, dim):
                raise ValueError(f"action must have shape ({self.num_envs}, {dim}), got {tuple(action.shape)}")
            if not bool(torch.isfinite(action).all()):
                raise ValueError("action contains NaN or inf; no env was stepped")
            return torch.clamp(action.to(self.device), self._action_low, self._action_high)
        clipped = torch.from_numpy(clip_action(action, self.num_envs, self._action_low_np, self._action_high_np))
        return clipped if self.device.type == "cpu" else clipped.to(self.device)

    # ------------------------------------------------------------------ obs / info / reward
    def render(self):
        """See ``RenderingMixin.render``. Raises RuntimeError once the env is closed."""
        self._require_open()
        return super().render()

    def get_info(self) -> dict:
        """``evaluate()`` plus ``"elapsed_steps"`` (int32 (N,)) and, with a randomization table,
        ``"privileged"`` (float32 (N, D): the randomized values, ``randomization.privileged_names``)."""
        info = self.evaluate()
        info["elapsed_steps"] = self._elapsed_steps.clone()
        self._add_privileged(info)
        return info

    def get_obs(self, info: Optional[dict] = None, unflattened: bool = False):
        """The observation of every env in ``obs_mode``.

        Args:
            info: ``get_info()``'s dict (computed when None).
            unflattened: return the raw dict even in ``"state"`` mode (what the reward hooks get).
        """
        if info is None:
            info = self.get_info()
        if self.obs_mode == "none":
            return {}
        if not self._textures:
            obs = self._get_obs_state_dict(info)
        elif self.obs_mode == "pointcloud":
            obs = self._get_obs_with_sensor_data(info)
            obs["pointcloud"] = fuse_pointcloud(obs["sensor_data"], obs["sensor_param"])
            obs["sensor_data"] = {}  # consumed, as in the seed
        else:
            obs = self._get_obs_with_sensor_data(info)
        return obs if unflattened else self._flatten_raw_obs(obs)

    def _get_obs_state_dict(self, info: dict) -> dict:
        """``{"agent": _get_obs_agent(), "extra": _get_obs_extra(info)}``."""
        return {"agent": self._get_obs_agent(), "extra": self._get_obs_extra(info)}

    def _get_obs_with_sensor_data(self, info: dict, apply_texture_transforms: bool = True) -> dict:
        """The state dict plus ``"sensor_data"`` (images) and ``"sensor_param"`` (camera matrices)."""
        obs = self._get_obs_state_dict(info)
        obs["sensor_data"] = self._get_obs_sensor_data(apply_texture_transforms)
        obs["sensor_param"] = self.get_sensor_params()
        return obs

    def _flatten_raw_obs(self, obs: Any):
        """The raw observation as returned: flat float32 (N, D) in ``"state"`` mode, else unchanged."""
        if self.obs_mode == "state":
            return flatten_obs(obs)
        return obs

    def get_reward(self, obs, action, info) -> torch.Tensor:
        """float32 (N,) reward of ``reward_mode``. ``obs`` is the raw observation dict
        (``get_obs(info, unflattened=True)``) in every obs mode."""
        mode = self.reward_mode
        if mode == "dense":
            return self.compute_dense_reward(obs, action, info)
        if mode == "normalized_dense":
            return self.compute_normalized_dense_reward(obs, action, info)
        if mode == "sparse":
            return self.compute_sparse_reward(obs, action, info)
        return torch.zeros(self.num_envs, device=self.device)

    # ------------------------------------------------------------------ close
    def close(self) -> None:
        """Release the simulation; calling it again does nothing.

        The released SAPIEN scenes hold reference cycles (entities and their components), so
        CPython's cyclic collector runs once here: their memory is returned at ``close()``, not
        at some later collection (without it, make/close loops raise the process's memory
        high-water mark by about 7 % before it levels off; measured by ``scripts/soak.py``).
        """
        if self._closed:
            return
        self._closed = True
        self._close_viewer()
        self._clear("its env was closed")
        gc.collect()

    def _clear(self, why: str = "the scene was rebuilt by reset(options={'reconfigure': True}); use the env's "
                                "new objects") -> None:
        """Release the simulation (the backend, its SAPIEN scenes) and detach every scene object,
        whose later use then raises with ``why``. Called by ``_reconfigure`` and ``close``."""
        if self._backend is not None:
            for obj in self.scene.objects.values():
                obj._detach(why)
            self._backend.close()
            self._backend = None

    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError("this env is closed; make a new one")


def _check_obs_rows(obs, like, rows: int, device):
    """``obs`` (the rows of ``rows`` envs, laid out as ``like``) as tensors on ``device``.

    Raises:
        ValueError: a structure or shape that differs from ``like``'s rows, or NaN/inf.
    """
    if isinstance(like, dict):
        if not isinstance(obs, dict) or set(obs) != set(like):
            raise ValueError(f"reset: reset_to_env_states['obs'] must be a dict with keys {sorted(like)}")
        return {k: _check_obs_rows(obs[k], like[k], rows, device) for k in like}
    value = torch.as_tensor(obs, device=device)
    expected = (rows, *like.shape[1:])
    if tuple(value.shape) != expected:
        raise ValueError(f"reset: reset_to_env_states['obs'] leaf must have shape {expected}, got {tuple(value.shape)}")
    if value.is_floating_point() and not bool(torch.isfinite(value).all()):
        raise ValueError("reset: reset_to_env_states['obs'] contains NaN or inf; nothing was reset")
    return value.to(like.dtype)


def _replace_rows(obs, idx: torch.Tensor, rows):
    """A copy of ``obs`` with the rows ``idx`` replaced by ``rows`` (same structure)."""
    if isinstance(obs, dict):
        return {k: _replace_rows(obs[k], idx, rows[k]) for k in obs}
    out = obs.clone()
    out[idx] = rows
    return out
