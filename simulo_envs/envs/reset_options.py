"""Which ``reset(options=...)`` keys an env accepts, and the check that refuses the others.

A mistyped key (``{"env_ids": [0]}`` for ``{"env_idx": [0]}``) must not silently reset every
env, so ``BaseEnv.reset`` refuses keys nobody reads, before anything changes.

Each class may declare the keys it reads in its *own* ``reset_option_keys`` class attribute (a
tuple of str). The keys an env accepts are the union over its MRO: ``BaseEnv`` declares
``env_idx`` and ``reconfigure``, a task adds what its ``_initialize_episode`` reads, and a
mixin adds its own key (e.g. a state-restoring reset) without repeating anyone else's.
"""

from __future__ import annotations

from functools import lru_cache

from simulo_envs.envs.env_keywords import did_you_mean

__all__ = ["known_reset_option_keys", "check_reset_option_keys"]


@lru_cache(maxsize=None)
def known_reset_option_keys(cls: type) -> tuple[str, ...]:
    """Every ``reset_option_keys`` entry declared by ``cls`` or a class it derives from, base
    classes first, each key once."""
    keys: list[str] = []
    for klass in reversed(cls.__mro__):
        declared = vars(klass).get("reset_option_keys", ())
        if isinstance(declared, str) or not all(isinstance(key, str) for key in declared):
            raise TypeError(f"{klass.__name__}.reset_option_keys must be a tuple of str, got {declared!r}")
        for key in declared:
            if key not in keys:
                keys.append(key)
    return tuple(keys)


def check_reset_option_keys(cls: type, options: dict) -> None:
    """Raise unless every key of ``options`` is one ``cls`` declares.

    Raises:
        ValueError: an unknown key; the message names the known keys and the closest match.
    """
    known = known_reset_option_keys(cls)
    unknown = [key for key in options if key not in known]
    if not unknown:
        return
    hints = [f"{key!r} -> did you mean {close!r}?" for key in unknown for close in [did_you_mean(key, known)] if close]
    raise ValueError(
        f"reset: unknown options key(s) {unknown}; {cls.__name__} accepts {list(known)}"
        + (f" ({'; '.join(hints)})" if hints else "")
        + ". A task that reads other keys declares them in its reset_option_keys class attribute.")
