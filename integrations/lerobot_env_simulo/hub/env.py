"""A hub-style ``env.py`` for LeRobot's ``make_env("<user>/<repo>", trust_remote_code=True)``
(``lerobot/envs/factory.py``; ``lerobot/envs/utils.py: _call_make_env`` calls ``make_env`` with
``n_envs``, ``use_async_envs`` and, for a ``HubEnvConfig``, ``cfg``).

Upload this file to a hub repository to share a task: ``TASK`` is the one it builds when LeRobot
passes no config (a config's ``task`` wins). It needs ``simulo-envs`` installed where it runs;
everything else is ``simulo_envs.lerobot.make_env``.
"""

from simulo_envs.lerobot import make_env as _make_simulo_env

TASK = "SO100Lift-v1"


def make_env(n_envs: int = 1, use_async_envs: bool = False, cfg=None):
    """``n_envs`` envs of ``cfg.task`` (else ``TASK``) in one batched env, in LeRobot's env convention."""
    task = getattr(cfg, "task", None) or TASK
    return _make_simulo_env(task, n_envs=n_envs, use_async_envs=use_async_envs)
