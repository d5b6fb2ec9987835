"""``make_rsl_env``: a task, by id, ``"module:Class"`` string or class, as the ``RslRlVecEnv``
(``simulo_envs.wrappers.rsl_rl``) a training or an evaluation of rsl-rl-lib runs on, built from a
training config (``simulo_envs.training.rsl_rl_train``'s layout): the registration's keywords,
the config's env and vector keywords, the training time limit, expert start states, seeds.
"""

from __future__ import annotations

from typing import Sequence, Union

from simulo_envs.training.start_states import start_states_wrapper
from simulo_envs.training.task_lookup import registered_kwargs, resolve_task
from simulo_envs.vector.vector_env import make_vector_env
from simulo_envs.wrappers.rsl_rl import RslRlVecEnv

__all__ = ["make_rsl_env"]


def make_rsl_env(env: Union[str, type], num_envs: int, config: dict, seed: Union[None, int, Sequence[int]],
                 evaluation: bool = False, full_episodes: bool = False,
                 num_workers: Union[None, int, str] = None):
    """An ``RslRlVecEnv`` over ``env`` (an id, a ``"module:Class"`` string or a class) built from ``config``.

    A registered id gets its registration's keywords (``max_episode_steps``), as ``gym.make`` would;
    ``config["env_kwargs"]`` override them.

    ``seed``: as ``BaseEnv.reset`` (an int ``s`` gives env ``i`` the seed ``s + i``; a list gives
    one seed per env). ``evaluation=True`` keeps the env's terminations (``ignore_terminations``
    off), so an episode ends at its first success: success then means "reached within
    ``max_episode_steps``"; with ``full_episodes=True`` as well, an evaluation env ignores
    terminations instead, so every episode runs to the time limit. ``config["train_max_episode_steps"]``
    (optional) shortens the episodes of training only: an evaluation env always runs the task's own
    time limit, the one its success is judged by. ``config["start_states"]`` (optional, training
    only): ``{"fraction": p, "expert_episodes": k}`` starts each training episode with probability
    ``p`` from a state of ``k`` scripted-expert episodes (``simulo_envs.training.start_states``;
    their seeds are ``seed + 2**20 ...`` with ``seed`` this env's first, far from any training or
    evaluation seed; under ``torchrun`` each rank has its own). ``num_workers``: the vector
    env's worker processes; ``None`` means the config's for training and 1 (this process) for
    evaluation (how many processes trained a policy does not change it).
    """
    env_kwargs = dict(config.get("env_kwargs", {}))
    if isinstance(env, str):
        env_id, cls = resolve_task(env)
        env_kwargs = {**registered_kwargs(env_id), **env_kwargs}
    else:
        cls = env
    if not evaluation and config.get("train_max_episode_steps") is not None:
        env_kwargs["max_episode_steps"] = int(config["train_max_episode_steps"])
    vector_kwargs = dict(config.get("vector_kwargs", {}))
    if evaluation:
        vector_kwargs["ignore_terminations"] = bool(full_episodes)
        vector_kwargs["num_workers"] = 1
    if num_workers is not None:
        vector_kwargs["num_workers"] = num_workers
    start = None if evaluation else config.get("start_states")
    if start is not None:
        vector_kwargs["env_wrapper"] = start_states_wrapper(cls, start, seed, env_kwargs,
                                                            vector_kwargs.get("num_workers", 1))
    venv = make_vector_env(cls, num_envs=num_envs, record_metrics=True, **env_kwargs, **vector_kwargs)
    env = RslRlVecEnv(venv)
    env.reset(seed=seed)   # after the adapter's own unseeded reset, so episode 0 of env i uses seed s + i
    return env
