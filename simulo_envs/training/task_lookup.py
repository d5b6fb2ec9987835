"""Which task a script means, and what comes with it: the task class behind an id or a
``"module:Class"`` / ``"module:EnvId"`` string (imported from the current directory too, as
``python -m`` would, so no ``PYTHONPATH=.`` is needed), the keywords its registration gives, its
PPO config, and its scripted expert.

A task of one's own subclassing a task that has a config or an expert inherits them: the search
goes up the class's bases (``train_config_for``, ``expert_for``).
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from typing import Optional, Sequence

import gymnasium as gym

__all__ = ["import_task_modules", "resolve_task", "registered_kwargs", "train_config_for", "expert_for",
           "check_variant"]

PACKAGED = {"tasks": "simulo_envs.tasks", "agents": "simulo_envs.agents"}
"""The repository's folders that install as parts of the package (pyproject.toml): their modules
are imported, and their tasks registered, by ``import simulo_envs``."""


def _installed_name(module: str) -> Optional[str]:
    """``simulo_envs.tasks.x`` for ``tasks.x`` (``agents`` alike) when that module is part of the
    installed package and ``tasks`` is not some other package of the user's (one from another
    folder than the package's own ``tasks``); else None."""
    top, _, rest = module.partition(".")
    if top not in PACKAGED:
        return None
    installed = PACKAGED[top] + (f".{rest}" if rest else "")
    try:
        ours = importlib.util.find_spec(installed)
    except ImportError:
        return None
    theirs = importlib.machinery.PathFinder.find_spec(top, [os.getcwd(), *sys.path])
    package = importlib.util.find_spec(PACKAGED[top])
    same = theirs is None or list(theirs.submodule_search_locations or []) == list(package.submodule_search_locations)
    return installed if ours is not None and same else None


def _packaged_tasks(installed: str) -> str:
    """The ids of the tasks module ``installed`` defines, for a message."""
    from simulo_envs.envs.registration import REGISTERED

    return ", ".join(env_id for env_id, cls in REGISTERED.items() if cls.__module__ == installed) or "none"


def import_task_modules(modules: Sequence[str]) -> None:
    """Import the user's task modules (each registers its tasks on import), searching the current
    directory first, as ``python -m`` does.

    Raises:
        ImportError: a module cannot be imported (the message names it); a module of the
            repository's ``tasks/`` folder, which ``import simulo_envs`` has registered already as
            ``simulo_envs.tasks`` (the message names its ids).
    """
    if modules and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        installed = _installed_name(module)
        if installed is not None:
            top = module.partition(".")[0]
            raise ImportError(f"{top}/ is installed as {PACKAGED[top]} and registered with simulo_envs: leave out "
                              f"--task-module {module} (its task ids: {_packaged_tasks(installed)})")
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise ImportError(f"task module {module!r} cannot be imported: {error}") from error


def resolve_task(spec: str) -> tuple[str, type]:
    """``(env_id, env class)`` for a registered id or a ``"module:Class"`` / ``"module:EnvId"`` string.

    ``env_id`` is the registered id when the class is registered, else ``spec`` itself (so a
    checkpoint names a task ``load_policy`` can find again).

    Raises:
        KeyError: an unknown id (the message names the closest registered id and lists them all); a
            module without that name.
        ImportError: the module of ``"module:..."`` cannot be imported, or is one of the
            repository's ``tasks/`` (``tasks.so101_pick_place:SO101PickPlaceEnv``: installed as
            ``simulo_envs.tasks`` and registered; the message names the id to use).
        TypeError: the name is not a simulo_envs task class.
    """
    from simulo_envs.envs.base_env import BaseEnv
    from simulo_envs.envs.registration import REGISTERED, unknown_env_id

    if spec in REGISTERED:
        return spec, REGISTERED[spec]
    if ":" not in spec:
        raise unknown_env_id(spec, " (a task of your own: import its module with --task-module, or name it "
                                   "'module:Class')")
    module_name, name = spec.split(":", 1)
    installed = _installed_name(module_name)
    if installed is not None:
        cls = getattr(importlib.import_module(installed), name, None)
        ids = [env_id for env_id, known in REGISTERED.items() if known is cls] or ([name] if name in REGISTERED else [])
        top = module_name.partition(".")[0]
        raise ImportError(f"{top}/ is installed as {PACKAGED[top]}"
                          + (f" and {name} is registered already as {ids[0]}: --env-id {ids[0]}" if ids else
                             f", whose tasks are registered already by their ids: {_packaged_tasks(installed)}"))
    import_task_modules([module_name])
    module = importlib.import_module(module_name)
    if name in REGISTERED:
        return name, REGISTERED[name]
    cls = getattr(module, name, None)
    if cls is None:
        raise KeyError(f"module {module_name!r} has neither a task class nor a registered id {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, BaseEnv)):
        raise TypeError(f"{spec!r} is not a simulo_envs task (a BaseEnv subclass), got {cls!r}")
    registered = [env_id for env_id, known in REGISTERED.items() if known is cls]
    return (registered[0] if registered else spec), cls


def registered_kwargs(env_id: str) -> dict:
    """What Gymnasium's registry holds for ``env_id`` as env keywords: the spec's ``kwargs`` and its
    ``max_episode_steps`` (the per-env limit ``gym.make`` gives); ``{}`` if unregistered."""
    spec = gym.registry.get(env_id)
    if spec is None:
        return {}
    kwargs = {k: v for k, v in spec.kwargs.items() if v is not None}
    if spec.max_episode_steps is not None and "max_episode_steps" not in kwargs:
        kwargs["max_episode_steps"] = spec.max_episode_steps
    if kwargs.get("max_episode_steps") == -1:   # Gymnasium's "no limit": the class default applies
        del kwargs["max_episode_steps"]
    return kwargs


def train_config_for(env_id: str) -> dict:
    """The task's PPO hyperparameters (a deep copy): the class's ``train_config``, else
    ``<module>_ppo.TRAIN_CONFIG``, searched up the task's base classes.

    Raises:
        KeyError / ImportError / TypeError: as ``resolve_task``.
        LookupError: neither the task nor a parent task has a training config.
    """
    _, cls = resolve_task(env_id)
    for klass in cls.__mro__:
        config = klass.__dict__.get("train_config")
        if config is None and klass.__module__ != "builtins":
            sibling = f"{klass.__module__}_ppo"
            try:
                config = getattr(importlib.import_module(sibling), "TRAIN_CONFIG", None)
            except ModuleNotFoundError as error:
                if error.name != sibling:
                    raise
        if config is not None:
            return copy.deepcopy(config)
    raise LookupError(f"{env_id} has no PPO config: give {cls.__name__} a train_config dict, or add "
                      f"{cls.__module__}_ppo.TRAIN_CONFIG (layout: simulo_envs/training/rsl_rl_train.py; docs/writing_a_task.md)")


def expert_for(cls: type) -> Optional[type]:
    """The scripted expert (``simulo_envs.policies.EXPERTS``) of task class ``cls``: the one of its
    own registered id, else of the nearest base class that has one (a user's subclass of
    FrankaLift-v1 gets the lift expert); None when no class up the hierarchy has one."""
    from simulo_envs.envs.registration import REGISTERED
    from simulo_envs.policies import EXPERTS

    for klass in cls.__mro__:
        for env_id, registered in REGISTERED.items():
            if registered is klass and env_id in EXPERTS:
                return EXPERTS[env_id]
    return None


def check_variant(env_id: str, cls: type, variant: Optional[str]) -> None:
    """Refuse a ``variant`` (``--variant``) the task ``cls`` (registered as ``env_id``) does not
    have: the SO table-top suite's tasks list theirs in ``SUPPORTED_VARIANTS``
    (``tasks/so_suite.py``); other tasks have none. None (the task's default) always passes.

    Raises:
        ValueError: the message names the task's variants (and the closest one), or says it has none.
    """
    from simulo_envs.envs.env_keywords import did_you_mean_hint

    if variant is None:
        return
    variants = tuple(getattr(cls, "SUPPORTED_VARIANTS", None) or ())
    if not variants:
        raise ValueError(f"--variant {variant}: {env_id} has no variants (the SO table-top suite's tasks have "
                         f"them: docs/writing_a_task.md); leave it out")
    if variant not in variants:
        raise ValueError(f"--variant {variant}: {env_id} has the variants {', '.join(variants)}"
                         + did_you_mean_hint(variant, variants))
