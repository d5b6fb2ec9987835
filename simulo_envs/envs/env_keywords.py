"""Which keywords an env's constructor accepts, the check that refuses the others before anything
is built, and the "did you mean" hint every such refusal shares (``reset(options=...)`` keys,
env ids, constructor keywords).

A mistyped keyword (``gym.make("SO101PickPlace-v1", num_env=2)``) or one the task does not take
(``variant=`` for a task outside the SO table-top suite) would otherwise reach the user as
Python's ``TypeError: BaseEnv.__init__() got an unexpected keyword argument`` from deep inside
the construction, after a task's own ``__init__`` had run. ``BaseEnv.__new__`` calls
``check_env_keywords`` first instead.

The keywords a class accepts are the named parameters of the ``__init__`` methods up its MRO,
from the class itself down to the first ``__init__`` that takes no ``**kwargs`` (``BaseEnv``'s):
a task's ``__init__(self, *args, variant="train", **kwargs)`` adds ``variant`` to ``BaseEnv``'s.
A task that reads a keyword of its own names it as a parameter of its ``__init__`` (not by
taking it out of ``**kwargs``), so the check sees it.
"""

from __future__ import annotations

import difflib
import inspect
from functools import lru_cache
from typing import Iterable, Optional

__all__ = ["did_you_mean", "did_you_mean_hint", "env_keywords", "check_env_keywords"]

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def did_you_mean(name: object, known: Iterable[str]) -> Optional[str]:
    """The entry of ``known`` closest to ``name`` (``difflib``'s ratio of at least 0.6), or None
    when none is close or ``name`` is not a string."""
    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def did_you_mean_hint(name: object, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the entry of ``known`` closest to ``name``
    (``did_you_mean``), or ``""`` when none is close: the hint a refusal of an unknown name ends with."""
    close = did_you_mean(name, known)
    return f" (did you mean {close!r}?)" if close else ""


@lru_cache(maxsize=None)
def env_keywords(cls: type) -> Optional[tuple[str, ...]]:
    """The keywords ``cls(...)`` accepts (see the module docstring), the class's own first; None
    when every ``__init__`` up the MRO takes ``**kwargs`` (nothing to check against)."""
    names: list[str] = []
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        parameters = list(inspect.signature(init).parameters.values())[1:]   # without self
        names += [p.name for p in parameters if p.kind in _NAMED and p.name not in names]
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return tuple(names)
    return None


def check_env_keywords(cls: type, kwargs: dict) -> None:
    """Raise unless ``cls(**kwargs)`` accepts every key of ``kwargs``.

    Raises:
        ValueError: an unknown keyword; the message names it, the closest accepted one and every
            accepted one (a ``ValueError`` as for a bad value: Gymnasium's ``make`` passes it on
            as it is, where it would reword a ``TypeError``).
    """
    known = env_keywords(cls)
    unknown = [key for key in kwargs if known is not None and key not in known]
    if not unknown:
        return
    hints = [f"{key!r} -> did you mean {close!r}?" for key in unknown for close in [did_you_mean(key, known)] if close]
    raise ValueError(f"{cls.__name__}: unknown keyword argument(s) {unknown}"
                     + (f" ({'; '.join(hints)})" if hints else "")
                     + f"; it accepts {sorted(known)}")
