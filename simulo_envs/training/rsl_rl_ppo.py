"""Two small extensions of rsl-rl-lib 5.5.1's PPO, named from a training config's ``class_name``.

``FinalValuePPO`` (``"algorithm": {"class_name": "simulo_envs.training.rsl_rl_ppo:FinalValuePPO",
...}``): rsl_rl's PPO with the bootstrap at the end of an episode taken from the value of the
episode's *final* observation, where the library takes it from the observation one step earlier
(``PPO.process_env_step`` adds ``gamma * V(s_t)`` on time-outs: the value of the state the last
action was taken in, since the env has already reset by the time the step returns). Options:

- ``bootstrap="time_outs"`` (default): truncated episodes only (Gymnasium's rule: a
  truncation is not the end of the task, so its return continues past the cut).
- ``bootstrap="dones"``: every finished episode, terminations included, as ManiSkill 3's PPO
  baseline does (``examples/baselines/ppo/ppo.py``: the value of ``final_observation`` is added
  at every done). For tasks that *terminate on success*, this makes success worth its
  continuation (``V(success state)``), not one last reward: with a dense reward whose terms
  pay almost as much per step as success does (FrankaLift-v1's reach + grasp + lift), a
  terminal success is otherwise worth less than hovering just short of it.
- ``adam_eps``: Adam's epsilon (torch's default 1e-8; ManiSkill's baseline and CleanRL use 1e-5).

It reads ``extras["final_obs"]`` (a TensorDict of every env's observation before its reset,
``RslRlVecEnv`` puts it there on steps where an env finished) and ``extras["time_outs"]``; an env
without ``final_obs`` falls back to the library's own bootstrap.

``OrthogonalMLPModel`` (``"actor"`` / ``"critic"`` ``class_name``): rsl_rl's ``MLPModel`` with
orthogonal weights and zero biases, gain ``hidden_gain`` (sqrt(2)) on the hidden layers and
``output_gain`` on the last (ManiSkill's / CleanRL's ``layer_init``: 0.01 * sqrt(2) for the actor's
mean, so the first policy is close to zero-mean actions, and sqrt(2) for the critic).
PyTorch's default init of ``nn.Linear`` (rsl_rl's) starts the mean at random non-zero actions.
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from rsl_rl.algorithms import PPO
from rsl_rl.models import MLPModel
from tensordict import TensorDict

__all__ = ["FinalValuePPO", "OrthogonalMLPModel", "BOOTSTRAP_MODES"]

BOOTSTRAP_MODES = ("time_outs", "dones")


class FinalValuePPO(PPO):
    """rsl_rl ``PPO`` bootstrapping finished episodes on their final observation (module docstring).

    Args:
        bootstrap: ``"time_outs"`` or ``"dones"``.
        adam_eps: Adam's epsilon, or None for torch's default.
        *args, **kwargs: ``rsl_rl.algorithms.PPO``'s.

    Raises:
        ValueError: an unknown ``bootstrap``, or ``adam_eps`` <= 0.
    """

    def __init__(self, *args, bootstrap: str = "time_outs", adam_eps: Optional[float] = None, **kwargs):
        if bootstrap not in BOOTSTRAP_MODES:
            raise ValueError(f"bootstrap must be one of {BOOTSTRAP_MODES}, got {bootstrap!r}")
        if adam_eps is not None and not adam_eps > 0:
            raise ValueError(f"adam_eps must be > 0, got {adam_eps!r}")
        super().__init__(*args, **kwargs)
        self.bootstrap = bootstrap
        if adam_eps is not None:
            for group in self.optimizer.param_groups:
                group["eps"] = float(adam_eps)

    def process_env_step(self, obs: TensorDict, rewards: torch.Tensor, dones: torch.Tensor, extras: dict) -> None:
        """Record one env step, adding ``gamma * V(final obs)`` to the reward of each env whose
        episode ended in it (which ones: ``bootstrap``); rewards (N,), dones (N,)."""
        final_obs = extras.get("final_obs")
        if final_obs is None:
            return super().process_env_step(obs, rewards, dones, extras)
        time_outs = extras.get("time_outs")
        done = dones.to(self.device).bool()
        if self.bootstrap == "time_outs":
            mask = torch.zeros_like(done) if time_outs is None else time_outs.to(self.device).bool() & done
        else:
            mask = done
        rewards = rewards.clone()
        if bool(mask.any()):
            values = self.critic(final_obs.to(self.device)[mask]).detach().squeeze(-1)
            rewards[mask] += self.gamma * values
        # The library's own (one-step-early) time-out bootstrap is replaced, not added to.
        extras = {key: value for key, value in extras.items() if key != "time_outs"}
        super().process_env_step(obs, rewards, dones, extras)


class OrthogonalMLPModel(MLPModel):
    """rsl_rl ``MLPModel`` with orthogonal init (module docstring).

    Args:
        hidden_gain: gain of the hidden layers' orthogonal weights (default sqrt(2)).
        output_gain: gain of the last layer's (default sqrt(2); 0.01 * sqrt(2) for a policy mean).
        *args, **kwargs: ``rsl_rl.models.MLPModel``'s.
    """

    def __init__(self, *args, hidden_gain: float = math.sqrt(2), output_gain: float = math.sqrt(2), **kwargs):
        super().__init__(*args, **kwargs)
        linears = [module for module in self.mlp if isinstance(module, torch.nn.Linear)]
        for index, layer in enumerate(linears):
            torch.nn.init.orthogonal_(layer.weight, gain=output_gain if index == len(linears) - 1 else hidden_gain)
            torch.nn.init.zeros_(layer.bias)
