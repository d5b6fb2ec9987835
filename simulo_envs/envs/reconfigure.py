"""Building and releasing an env's simulation (a ``BaseEnv`` mixin).

``_reconfigure`` builds the scene from scratch, at creation, on ``reset(options={"reconfigure":
True})`` and every ``reconfiguration_freq`` full resets: a fresh ``Scene`` (env origins on the
grid), the task's ``_load_agent``, ``_load_scene`` and ``_load_lighting``, the randomization
table's build-time draws, then a backend (``simulo_envs.sim``) the scene attaches to, the sensor
cameras, the agent's controllers and the task's ``_after_reconfigure``. ``_clear`` releases it
(at the next rebuild and at ``close``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import torch

from simulo_envs.cloner.plan import CloneCfg
from simulo_envs.scene import Scene
from simulo_envs.sim import make_backend


class ReconfigureMixin:
    """Scene (re)building for ``BaseEnv``."""

    # ------------------------------------------------------------------ the state ReconfigureMixin owns
    scene: Scene
    """The scene of the current build (``_setup_scene``)."""
    _backend: Any = None
    """The simulation backend of the current build (``backend``); None before the first and after ``close``."""
    _env_origins: torch.Tensor
    """float32 (N, 3) on ``device`` (``env_origins``)."""
    _origin_poses: torch.Tensor
    """float32 (N, 7) on ``device`` (``env_origin_poses``)."""
    _origins_np: tuple
    """``(env origins (N, 3), origin poses (N, 7))`` as numpy arrays, for ``local`` on the fast path."""
    _step_hooks: tuple
    """The task's step hooks of this build (``StepMixin._overridden_step_hooks``)."""
    _fast_step: bool
    """Whether ``step`` may take the CPU fast path in this build (``NumpyStepMixin._numpy_step_applies``)."""
    _reconfig_count: int = 0
    """Scene builds so far (1 after construction)."""
    _reconfig_counter: int = 0
    """Full resets left before ``reconfiguration_freq`` rebuilds the scene."""

    def _reconfigure(self, options: Optional[dict] = None) -> None:
        """Build the scene from scratch: clear the old one, then the hooks in the module docstring's
        order. Runs at creation, on ``reset(options={"reconfigure": True})`` and every
        ``reconfiguration_freq`` full resets. ``options`` (default ``{}``) goes to the load hooks."""
        options = {} if options is None else options
        self._clear()
        self._setup_scene()
        self._clear_hidden_objects()  # hide_from_sensors fills it again in _load_scene
        self._reconfig_count += 1
        self._load_agent(options)
        self._check_agent_uids()
        self._load_scene(options)
        self._load_lighting(options)
        self.randomization.build()
        origins = self.scene.env_origins.cpu().numpy()
        self._backend = make_backend(self.sim_backend, self.num_envs, origins, self.sim_config, render=self._render,
                                     render_config=self._render_config)
        self.scene.attach(self._backend)
        self._setup_sensors(options)
        self.randomization.attach()
        self._env_origins = self.scene.env_origins
        self.agent.on_attached(self._env_origins)
        # Origins padded to pose width: pose_world - _origin_poses is the env-local pose (N, 7).
        self._origin_poses = torch.cat([self._env_origins, torch.zeros(self.num_envs, 4, device=self.device)], dim=1)
        self._origins_np = (self._env_origins.cpu().numpy(), self._origin_poses.cpu().numpy())  # for local() on numpy
        self._after_reconfigure(options)
        self._step_hooks = self._overridden_step_hooks()
        self._fast_step = self._numpy_step_applies()
        self._reconfig_counter = self.reconfiguration_freq

    @property
    def env_origins(self) -> torch.Tensor:
        """float32 (N, 3): each env's origin [m], world frame: where its robot base sits and what
        env-local positions are measured from (``world - env_origins``). The env's own tensor on
        ``device``, replaced at each scene build: read it, never write it."""
        return self._env_origins

    @property
    def env_origin_poses(self) -> torch.Tensor:
        """float32 (N, 7): ``env_origins`` padded to pose width, ``[x, y, z, 0, 0, 0, 0]`` [m], world
        frame, so that ``world_pose - env_origin_poses`` is the env-local pose (env frames are
        not rotated: the quaternion is unchanged). The env's own tensor on ``device``, replaced
        at each scene build: read it, never write it."""
        return self._origin_poses

    @property
    def backend(self):
        """The simulation backend (``simulo_envs.sim``): the only object that talks to SAPIEN."""
        return self._backend

    def _rebuild_due(self) -> bool:
        """Whether this full reset must rebuild the scene: the ``reconfiguration_freq``-th since the last build."""
        return bool(self.reconfiguration_freq) and self._reconfig_counter <= 0

    def _count_full_reset(self) -> None:
        """A full reset happened (every env reset): one fewer before ``reconfiguration_freq`` rebuilds."""
        self._reconfig_counter -= 1

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

    def _clear(self, why: str = "the scene was rebuilt by reset(options={'reconfigure': True}); use the env's "
                                "new objects") -> None:
        """Release the simulation (the backend, its SAPIEN scenes) and detach every scene object,
        whose later use then raises with ``why``. Called by ``_reconfigure`` and ``close``."""
        if self._backend is not None:
            for obj in self.scene.objects.values():
                obj._detach(why)
            self._backend.close()
            self._backend = None
