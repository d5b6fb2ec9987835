"""The maniskill-baseenv seed's remaining names on ``BaseEnv`` (a mixin): attributes that
ManiSkill's own clients (``ManiSkillVectorEnv``, ``RecordEpisode``, its PPO baseline) and
ported task code read, mapped onto ours. Each is documented where it differs from the seed;
``docs/parity.md`` lists every seed point.
"""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.envs.rng import BatchedRNG


class ManiSkillApiMixin:
    """Seed names for ``BaseEnv``; expects ``self._rng`` (an ``EpisodeRNG``)."""

    _batched_rng_backend = "numpy:random_state"
    """The streams are ``numpy.random.RandomState`` (the seed's backend)."""

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
        from simulo_envs.envs.base_env import episode_seeds

        seeds = episode_seeds(seed, np.arange(self.num_envs) + self._first_env)
        self._rng.seed(np.arange(self.num_envs), seeds)

    def _set_episode_rng(self, seed, env_idx) -> None:
        """Restart the episode streams of ``env_idx``: at ``seed`` (an int ``s`` gives ``s + i``, or
        one per env), or, when None, at fresh episode seeds from their main streams."""
        ids = np.asarray(torch.as_tensor(env_idx).cpu().numpy(), dtype=np.int64).reshape(-1)
        if seed is None:
            self._rng.draw_episode_seeds(ids)
            return
        from simulo_envs.envs.base_env import episode_seeds

        seeds = episode_seeds(seed, ids + self._first_env)
        self._rng.episode_seeds[ids] = seeds
        self._rng.restart(ids)
