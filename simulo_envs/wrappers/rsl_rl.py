"""``RslRlVecEnv``: our envs as the ``VecEnv`` of rsl-rl-lib 5.5.1, so ``OnPolicyRunner`` trains on them.

rsl-rl-lib 5.x wants (``rsl_rl/env/vec_env.py``): ``num_envs``, ``num_actions``,
``max_episode_length``, a writable ``episode_length_buf``, ``device``, ``cfg``,
``get_observations() -> TensorDict`` and ``step(actions) -> (obs TensorDict, rewards (N,),
dones (N,), extras)``, with the env resetting done envs itself (same-step autoreset) and
``extras["time_outs"]`` marking truncations so PPO bootstraps them. We give exactly that on top
of ``SimuloVectorEnv`` in ``SAME_STEP`` mode, torch tensors on the env's device throughout.

Observations: the TensorDict holds the group ``"policy"`` (the flat ``state`` observation);
point ``obs_groups`` at it: ``{"actor": ["policy"], "critic": ["policy"]}``. An env with a
domain randomization table adds the group ``"privileged"`` (``info["privileged"]``: each env's
randomized values, of its new episode for envs just reset): ``{"actor": ["policy"], "critic":
["policy", "privileged"]}`` trains an asymmetric actor-critic.

Image observations (``obs_mode="rgb"`` or ``"rgb+state"``): one group per sensor camera, named
after it (``"base_camera"``: its RGB image, uint8 (N, 3, H, W), channels first as torch
convolutions take it) and ``"proprio"`` (float32 (N, P): what the ``"rgb"`` observation keeps of
the state: the agent's qpos and qvel, then the task's ``image_obs_extra`` such as the TCP pose, in
flat-state order; no object state). ``"rgb+state"`` adds ``"policy"``, the whole flat state, the
same columns as ``obs_mode="state"`` gives: what a state teacher reads while an image student
learns from it (``simulo_envs.training.distillation``).
Extras: ``time_outs`` (bool (N,): truncated and not terminated); ``final_obs`` (a TensorDict
like the observations: each env's observation before its reset; present only on steps where
some env finished, its other rows hold their current observation), read by
``simulo_envs.training.rsl_rl_ppo.FinalValuePPO``; ``episode`` (a dict of 1-D tensors over the envs that finished
in this step: ``success_once``, ``success_at_end`` as float, ``return``, ``length``), present only
on steps where some env finished, so rsl_rl's logger averages over finished episodes.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from simulo_envs.envs.observations import flatten_obs, proprio_columns
from simulo_envs.envs.sensors import obs_mode_state
from simulo_envs.tensors import as_step_counts
from simulo_envs.vector.vector_env import SimuloVectorEnv

__all__ = ["RslRlVecEnv"]


class RslRlVecEnv(VecEnv):
    """rsl-rl-lib ``VecEnv`` over a simulo_envs env.

    Args:
        env: a ``SimuloVectorEnv`` in SAME_STEP mode, or a simulo_envs env (then wrapped with
            ``vector_kwargs``).
        vector_kwargs: ``SimuloVectorEnv`` options when ``env`` is not one yet
            (e.g. ``{"ignore_terminations": True}``); ``record_metrics`` is always on.

    Raises:
        ValueError: a vector env in NEXT_STEP mode, or an env whose obs_mode is not ``state``
            (rsl_rl's MLPs need flat observations), or with no ``max_episode_steps``.
    """

    IMAGE_OBS_MODES = ("rgb", "rgb+state")
    """The image obs modes the adapter takes besides ``"state"`` (module docstring)."""

    def __init__(self, env, vector_kwargs: Optional[dict] = None):
        if not isinstance(env, SimuloVectorEnv):
            env = SimuloVectorEnv(env, **{**(vector_kwargs or {}), "record_metrics": True})
        if env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError("rsl_rl needs same-step autoreset: use SimuloVectorEnv(env, autoreset_mode=SAME_STEP)")
        env.record_metrics = True
        base = env.base_env
        if base.obs_mode != "state" and base.obs_mode not in self.IMAGE_OBS_MODES:
            raise ValueError(f"RslRlVecEnv needs obs_mode 'state' (flat observations) or one of "
                             f"{self.IMAGE_OBS_MODES} (camera images + proprioception), got {base.obs_mode!r}")
        if base.max_episode_steps is None:
            raise ValueError("RslRlVecEnv needs an env with max_episode_steps")
        self.venv = env
        self.base_env = base
        self.num_envs = env.num_envs
        self.num_actions = int(env.single_action_space.shape[0])
        self.max_episode_length = int(base.max_episode_steps)
        self.device = env.device
        self.render_mode = base.render_mode
        self.metadata = {k: v for k, v in env.metadata.items() if k != "autoreset_mode"}
        """The env's ``render_modes`` and ``render_fps`` (for video recorders)."""
        self.cfg = {"env_id": getattr(getattr(base, "spec", None), "id", type(base).__name__),
                    "num_envs": self.num_envs, "max_episode_steps": self.max_episode_length,
                    "control_mode": base.control_mode, "reward_mode": base.reward_mode,
                    "ignore_terminations": env.ignore_terminations}
        self.proprio_columns = self._proprio_columns(base)
        """For ``"rgb+state"``: the columns of the flat state that make ``"proprio"`` (else None)."""
        obs, info = env.reset()
        self._obs = self._wrap(obs, info)
        self.last_info: dict = {}
        """The vector env's full info of the last step (``final_info`` included)."""

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """int64 (N,) steps since each env's last reset. Writable (rsl_rl's
        ``init_at_random_ep_len`` spreads the first time-outs by writing it): whole numbers
        ``(N,)`` >= 0, those above ``max_episode_length - 1`` lowered to it (the env then times
        out at the next step), written with the env's ``set_elapsed_steps`` (in the workers too).
        Raises as ``set_elapsed_steps`` (TypeError, ValueError: NaN, a fraction, a negative
        count, another shape); nothing is written then."""
        return self.base_env.elapsed_steps.to(torch.long)

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        counts = as_step_counts(value, self.num_envs, "episode_length_buf")
        self.base_env.set_elapsed_steps(np.minimum(counts, self.max_episode_length - 1))

    @staticmethod
    def _proprio_columns(base) -> Optional[torch.Tensor]:
        """The flat-state columns of the ``agent`` leaves and the ``image_obs_extra`` extras (the
        ``"rgb"`` observation's state), for an env in ``"rgb+state"`` (a ``BaseEnv``, or a
        ``ShardedEnv`` whose workers are asked); None otherwise."""
        if base.obs_mode == "state" or obs_mode_state(base.obs_mode) is None:
            return None
        if hasattr(base, "get_obs"):
            raw, extras = base.get_obs(unflattened=True), base.image_obs_extra
        else:   # envs in worker processes (ShardedEnv): ask them; the extras are the task class's
            raw, extras = base.call("get_obs", unflattened=True), base.env_cls.image_obs_extra
        return torch.from_numpy(proprio_columns(raw, extras))

    def _wrap(self, obs, info: dict) -> TensorDict:
        if isinstance(obs, dict):
            groups = self._image_groups(obs)
        else:
            groups = {"policy": obs}
        if "privileged" in info:
            groups["privileged"] = info["privileged"]
        return TensorDict(groups, batch_size=[self.num_envs], device=self.device)

    def _image_groups(self, obs: dict) -> dict:
        """An image observation's groups: each camera's RGB (uint8 (N, 3, H, W)), ``"proprio"``,
        and with ``"rgb+state"`` the whole flat state as ``"policy"``."""
        groups = {}
        for name, textures in obs["sensor_data"].items():
            if "rgb" in textures:
                groups[name] = textures["rgb"][..., :3].permute(0, 3, 1, 2).contiguous()
        if "state" in obs:
            state = obs["state"]
            groups["policy"] = state
            groups["proprio"] = state[:, self.proprio_columns.to(state.device)]
        else:
            groups["proprio"] = flatten_obs({"agent": obs["agent"], "extra": obs["extra"]})
        return groups

    def get_observations(self) -> TensorDict:
        """The current observations, ``{"policy": float32 (N, obs_dim)}`` (and ``"privileged"``
        (N, D) with a randomization table)."""
        return self._obs

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[TensorDict, dict]:
        """Reset every env (``options`` as ``BaseEnv.reset``'s, e.g. ``{"reconfigure": True}``);
        returns ``(obs, {})``."""
        obs, info = self.venv.reset(seed=seed, options=options)
        self._obs = self._wrap(obs, info)
        return self._obs, {}

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Step, autoreset the done envs; returns ``(obs, rewards float32 (N,), dones long (N,), extras)``."""
        obs, reward, terminated, truncated, info = self.venv.step(actions)
        done = terminated | truncated
        # A time-out is a truncation that is not also a termination: only those are bootstrapped.
        extras: dict[str, Any] = {"time_outs": truncated & ~terminated}
        if "_final_obs" in info:
            # final_info is the step's info before the reset: the finished episodes' privileged values.
            extras["final_obs"] = self._wrap(info["final_obs"], info.get("final_info", info))
        if "_final_info" in info:
            finished = info["_final_info"]
            episode = info["final_info"]["episode"]
            extras["episode"] = {key: value[finished].to(torch.float32) for key, value in episode.items()}
        self._obs = self._wrap(obs, info)
        self.last_info = info
        return self._obs, reward.to(torch.float32), done.to(torch.long), extras

    def close(self) -> None:
        """Close the env."""
        self.venv.close()

