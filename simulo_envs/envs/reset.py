"""``BaseEnv.reset`` (a mixin): validate the seed and every option, then reseed, rebuild or
restore and initialise the reset envs only.

``reset`` is a short sequence of named steps: parse ``options`` (``reset_options.py`` checks the
keys), parse the seed (``episode_seeds``), reseed the episode streams (``rng.py``), rebuild the
scene when asked (``_reconfigure``), then per reset env: elapsed steps to zero, a quarantined
env's home state back (``faults.py``), the randomization table's reset draws
(``randomization.py``) and the task's ``_initialize_episode``, or a saved state restored
(``reset_to_env_states``). Everything is validated before the first write: a bad argument
raises and changes nothing.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import gymnasium as gym
import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.envs.reset_options import check_reset_option_keys
from simulo_envs.envs.torch_rng import per_env_torch_draws


def is_int(value) -> bool:
    """True for a Python or numpy integer (bools excluded)."""
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
    if is_int(seed):
        seeds = [int(seed) + int(i) for i in env_idx]
    else:
        if isinstance(seed, (str, bytes, dict, set)) or not hasattr(seed, "__len__"):
            raise TypeError(f"reset: seed must be None, an int or a list of ints, got {seed!r}")
        values = seed.tolist() if isinstance(seed, (np.ndarray, torch.Tensor)) else list(seed)
        if not all(is_int(v) for v in values):
            raise TypeError(f"reset: seed list must hold ints, got {values!r}")
        seeds = [int(v) for v in values]
        if len(seeds) != len(env_idx):
            raise ValueError(f"reset: got {len(seeds)} seeds for {len(env_idx)} envs being reset")
    if seeds and (min(seeds) < 0 or max(seeds) >= 2**63):
        raise ValueError(f"reset: seeds must be >= 0 and < 2**63, got {seeds if len(seeds) < 9 else (min(seeds), max(seeds))}")
    return seeds


class ResetMixin:
    """``reset`` for ``BaseEnv``; expects the state mixin beside it, ``_reconfigure``
    (``reconfigure.py``), and the env's ``randomization`` and ``faults``. It owns no state: what it changes, it changes
    through the owners' methods (docs/architecture.md)."""

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
        if len(env_idx) == self.num_envs:
            reconfigure = reconfigure or self._rebuild_due()  # every reconfiguration_freq-th full reset rebuilds
        if seed is not None and restore is None:  # a seed decides build-time draws too (randomization.py)
            reconfigure = reconfigure or self.randomization.seeded_reset_rebuilds(env_idx)
        if reconfigure:
            env_idx = np.arange(self.num_envs)  # rebuilding the scene resets every env
        seeds = episode_seeds(seed, env_idx + self._first_env)  # validated before anything changes
        if restore is not None:
            restore = self._check_restore(restore, env_idx)
        if seeds:
            # Gymnasium's env-level generator ``np_random`` is seeded with ``s`` (a list: its first
            # seed), as gym.Env.reset does; episodes are sampled from ``episode_rng``, never from it.
            scalar = is_int(seed) or (isinstance(seed, torch.Tensor) and seed.ndim == 0)
            gym.Env.reset(self, seed=int(seed) if scalar else seeds[0])
        if seeds is not None:
            self._rng.seed(env_idx, seeds)
        elif reconfigure or self._enhanced_determinism:
            self._rng.draw_episode_seeds(env_idx)
        if seeds is not None or reconfigure or self._enhanced_determinism:
            self.randomization.seed(env_idx, self._rng.episode_seeds[env_idx],  # new episode seeds
                                    redraw_startup=seeds is not None and not reconfigure and restore is None)
        if reconfigure:
            with self._torch_draws(env_idx):
                self._reconfigure(options)
            self._rng.restart(env_idx)  # episode draws do not depend on what building drew
        if len(env_idx) == self.num_envs:
            self._count_full_reset()
        idx = torch.from_numpy(env_idx).to(self.device)
        if len(env_idx):
            self._restart_step_counts(idx)
            self.randomization.begin_episodes(env_idx)  # the image noise's episode count
            self.faults.restore(env_idx)  # a quarantined env gets its home state back first
            if restore is None:
                self.randomization.reset(env_idx)  # before the task's episode draws
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
        self._remember_obs(obs)
        if reconfigure:
            self.faults.record_home()
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
