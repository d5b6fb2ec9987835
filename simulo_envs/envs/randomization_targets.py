"""What a randomization table entry names: the object an entry's path leads to from the env, and,
for an error message, the names a path may take next (``Randomizer.build`` calls ``resolve``)."""

from __future__ import annotations

from collections.abc import Mapping

from simulo_envs.envs.randomization_params import parameters_of

_CONTAINERS = ("lights", "floor", "sensor_cameras", "visual_distractors")
"""The env's properties that hold randomization targets (besides its attributes)."""


def resolve(env, path: list, term):
    """The object ``path`` (a ``Randomize`` entry's names before its parameter) leads to from
    ``env``, by attribute or mapping key.

    Raises:
        ValueError: a name leads nowhere (the message lists what may come there), or the object
            has no randomizable parameters.
    """
    obj = env
    for i, segment in enumerate(path):
        try:
            obj = obj[segment] if isinstance(obj, Mapping) else getattr(obj, segment)
        except (KeyError, AttributeError):
            where = ".".join(path[:i]) or type(env).__name__
            choices = sorted(obj) if isinstance(obj, Mapping) else _targets(obj)
            raise ValueError(f"Randomize({term.param!r}): {where} has no {segment!r}; its randomization targets "
                             f"are {choices}") from None
    if not parameters_of(obj):
        raise ValueError(f"Randomize({term.param!r}): {'.'.join(path)} is a {type(obj).__name__}, which has no "
                         "randomizable parameters (a Prop, Robot, env.lights or env.sensor_cameras[name] has)")
    return obj


def _targets(obj, depth: int = 2) -> list[str]:
    """The names under ``obj`` (its public attributes, and an env's ``_CONTAINERS``) that are, or
    lead within ``depth`` more names to, something with randomizable parameters: what a
    ``Randomize`` path may name next."""
    return sorted(name for name, value in _children(obj).items() if _leads_to_parameters(value, depth - 1))


def _leads_to_parameters(value, depth: int) -> bool:
    if parameters_of(value):
        return True
    return depth > 0 and any(_leads_to_parameters(child, depth - 1) for child in _children(value).values())


def _children(obj) -> dict:
    """``obj``'s public attributes (a mapping's items); for an env (it holds the randomizer as
    ``randomization``), that component left out and its ``_CONTAINERS`` added (its ``lights``, ``floor``,
    ``sensor_cameras`` and ``visual_distractors`` properties)."""
    if isinstance(obj, Mapping):
        return dict(obj)
    attributes = getattr(obj, "__dict__", {})
    children = {k: v for k, v in attributes.items() if not k.startswith("_")}
    if "randomization" in attributes:  # an env
        children.pop("randomization")
        for name in _CONTAINERS:
            try:
                children[name] = getattr(obj, name)
            except RuntimeError:   # lights of an env that does not render
                pass
    return children
