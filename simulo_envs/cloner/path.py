"""Prim-path algebra that respects segment boundaries.

The bug this module prevents: treating a prim path as a character string. A text prefix test
says ``"/World/RobotArm"`` lies under ``"/World/Robot"``, and ``"/World/envs/env_10"`` under
``"/World/envs/env_1"``; ``str.replace`` rewrites an occurrence in the middle of a path. A prim
path is a sequence of ``/``-separated *segments*, and every test here compares whole segments.
No function in this module (or in code that uses it) needs ``str.startswith`` on a path.

Two words name the two kinds of prefix:

- a **root** is a concrete path, such as ``"/World/envs/env_0"`` or ``"/World/source/Robot"``.
  :func:`relative_to`, :func:`under` and :func:`rebase` take a root. ``"/"`` is the root of
  every absolute path; a trailing ``/`` on a root is insignificant.
- a **template** is a clone destination with exactly one ``"{}"`` *clone slot* standing for
  (part of) one segment, the instance id: ``"/World/envs/env_{}/Robot"``. Filling it with
  ``template.format(3)`` gives the clone in env 3. :func:`split`, :func:`match` and
  :func:`relativize` take a template. The *template root* is the template itself with its slot
  filled; what lies below it is the *suffix* (``""`` or text starting with ``/``).

On the clone side a path may be an *expression*: the clone slot may hold a wildcard such as
``".*"`` (every instance) or an alternation ``"(0|2)"``; it always stands for text within one
segment, never for a ``/``. Segments outside the slot are compared literally.

Paths are expected in normal form: absolute, no empty segments (``//``). Nothing here
touches the scene; these are pure functions of strings.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["TemplateMatch", "split", "match", "relative_to", "under", "rebase", "relativize"]

_SLOT = "{}"


class TemplateMatch(NamedTuple):
    """What :func:`match` captured.

    Attributes:
        instance: the text that filled the template's ``"{}"`` slot, e.g. ``"3"``, or a
            wildcard such as ``".*"``. Never empty and never contains ``/``.
        suffix: the part of the path below the template root: ``""`` when the path is the
            template root itself, else text starting with ``/``.
    """

    instance: str
    suffix: str


def _strip(path: str, what: str) -> str:
    """Type-check ``path`` and drop trailing slashes (``"/"`` stays ``"/"``)."""
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a str prim path, got {type(path).__name__}")
    if path == "":
        raise ValueError(f"{what} must be a non-empty prim path, got ''")
    return path.rstrip("/") or "/"


def _segments(path: str) -> list[str]:
    """``"/a/b"`` -> ``["", "a", "b"]``; ``"/"`` -> ``[""]`` (only the leading empty segment)."""
    return [""] if path == "/" else path.split("/")


def _join(segments: list[str]) -> str:
    """Suffix text for the segments below a prefix: ``""`` or ``"/a/b"``."""
    return "".join("/" + s for s in segments)


def relative_to(path: str, root: str) -> str | None:
    """Strip the concrete ``root`` off ``path``, on a segment boundary.

    Args:
        path: the path to make relative.
        root: a concrete subtree root; a trailing ``/`` is insignificant and ``"/"`` is the
            root of every absolute path.

    Returns:
        The part of ``path`` below ``root``: ``""`` when ``path`` equals ``root``, otherwise
        text starting with ``/``. **None** when ``path`` is not under ``root`` -- never a
        remainder cut in the middle of a segment.

    Raises:
        TypeError: ``path`` or ``root`` is not a str.
        ValueError: ``path`` or ``root`` is empty.

    >>> relative_to("/World/envs/env_0/Robot/base", "/World/envs/env_0")
    '/Robot/base'
    >>> relative_to("/World/envs/env_0", "/World/envs/env_0/")
    ''
    >>> relative_to("/World/RobotArm", "/World/Robot") is None
    True
    >>> relative_to("/World/envs/env_10", "/World/envs/env_1") is None
    True
    >>> relative_to("/World", "/")
    '/World'
    """
    p = _segments(_strip(path, "path"))
    r = _segments(_strip(root, "root"))
    if p[: len(r)] != r:
        return None
    return _join(p[len(r):])


def under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or a descendant of it, comparing whole segments.

    Args:
        path: candidate descendant.
        root: concrete subtree root (trailing ``/`` insignificant).

    Returns:
        True when ``path`` equals ``root`` or lies below it; **False** otherwise, in particular
        when the two only share a character prefix.

    Raises:
        TypeError, ValueError: as :func:`relative_to`.

    >>> under("/World/Robot/base", "/World/Robot")
    True
    >>> under("/World/RobotArm", "/World/Robot")
    False
    >>> under("/World/envs/env_10/Cube", "/World/envs/env_1")
    False
    """
    return relative_to(path, root) is not None


def rebase(path: str, src_root: str, dst_root: str) -> str:
    """Move ``path`` from below ``src_root`` to the same place below ``dst_root``.

    Only the leading, boundary-aligned ``src_root`` is swapped; a later occurrence of the same
    text (``/World/A/World/A``) is left alone.

    Args:
        path: the path to rebase.
        src_root: concrete root ``path`` is expected to lie under.
        dst_root: concrete root to put in its place.

    Returns:
        The rebased path (without trailing ``/``). When ``path`` is **not** under ``src_root``,
        ``path`` is returned unchanged.

    Raises:
        TypeError, ValueError: as :func:`relative_to`, also for ``dst_root``.

    >>> rebase("/World/envs/env_0/Robot/base", "/World/envs/env_0", "/World/envs/env_7")
    '/World/envs/env_7/Robot/base'
    >>> rebase("/World/A/World/A", "/World/A", "/B")
    '/B/World/A'
    >>> rebase("/World/RobotArm", "/World/Robot", "/X")
    '/World/RobotArm'
    """
    dst = _strip(dst_root, "dst_root")
    rest = relative_to(path, src_root)
    if rest is None:
        return path
    if dst == "/":
        return rest or "/"
    return dst + rest


def split(template: str) -> tuple[str, str]:
    """Split a clone destination template around its ``"{}"`` clone slot.

    Args:
        template: destination template with exactly one ``"{}"`` standing for the instance id.
            A trailing ``/`` is insignificant.

    Returns:
        ``(prefix, suffix)``: the text before and after the slot, so that
        ``prefix + str(i) + suffix == template.format(i)``. An instance-root template
        (``".../env_{}"``) gives an empty suffix. There is no "no match" case: every valid
        template splits.

    Raises:
        TypeError: ``template`` is not a str.
        ValueError: ``template`` holds zero or several ``"{}"`` slots (a second slot would
            survive into the suffix and break the ``str.format`` that fills the first), or any
            other brace, or the slot sits in the first (empty) segment.

    >>> split("/World/envs/env_{}/Robot")
    ('/World/envs/env_', '/Robot')
    >>> split("/World/envs/env_{}/")
    ('/World/envs/env_', '')
    >>> split("/World/envs/env_{}/{}")
    Traceback (most recent call last):
    ...
    ValueError: template must hold exactly one '{}' clone slot, found 2 in '/World/envs/env_{}/{}'
    """
    t = _strip(template, "template")
    count = t.count(_SLOT)
    if count != 1:
        raise ValueError(f"template must hold exactly one '{{}}' clone slot, found {count} in {template!r}")
    prefix, suffix = t.split(_SLOT)
    if any(c in prefix + suffix for c in "{}"):
        raise ValueError(f"template may hold no brace besides its '{{}}' clone slot, got {template!r}")
    if "/" not in prefix:
        raise ValueError(f"template's clone slot must lie below '/', got {template!r}")
    return prefix, suffix


def match(path_expr: str, template: str) -> TemplateMatch | None:
    """Match a clone-side path (or expression) against ``template``, capturing the slot.

    The slot's segment of ``path_expr`` must carry the template's literal text around the slot,
    and the captured text in between must be non-empty; it may be a concrete id (``"3"``) or a
    wildcard (``".*"``, ``"(0|2)"``). All other template segments compare literally.

    Args:
        path_expr: clone-side path or path expression.
        template: destination template with one ``"{}"`` (see :func:`split`).

    Returns:
        A :class:`TemplateMatch` ``(instance, suffix)``, or **None** when ``path_expr`` is not at
        or below the template root (another segment differs, the slot's segment lacks the
        template's text around the slot, or the slot would capture nothing).

    Raises:
        TypeError, ValueError: a non-str or empty ``path_expr``; an invalid ``template``
            (see :func:`split`).

    >>> match("/World/envs/env_3/Robot/base", "/World/envs/env_{}/Robot")
    TemplateMatch(instance='3', suffix='/base')
    >>> match("/World/envs/env_.*/Robot", "/World/envs/env_{}/Robot")
    TemplateMatch(instance='.*', suffix='')
    >>> match("/World/envs/env_3/RobotArm", "/World/envs/env_{}/Robot") is None
    True
    >>> match("/World/envs/env_/Robot", "/World/envs/env_{}/Robot") is None
    True
    """
    prefix, suffix = split(template)
    head_segments = prefix.split("/")  # last item: literal text before the slot in its segment
    tail_segments = suffix.split("/")  # first item: literal text after the slot in its segment
    head, tail = head_segments[-1], tail_segments[0]
    t = head_segments[:-1] + [None] + tail_segments[1:]  # None marks the slot's segment
    p = _segments(_strip(path_expr, "path_expr"))
    if len(p) < len(t):
        return None
    instance = None
    for seg, want in zip(p, t):
        if want is None:
            n_head, n_tail = len(head), len(tail)
            if len(seg) <= n_head + n_tail or seg[:n_head] != head or seg[len(seg) - n_tail:] != tail:
                return None
            instance = seg[n_head: len(seg) - n_tail]
        elif seg != want:
            return None
    return TemplateMatch(instance, _join(p[len(t):]))


def relativize(path_expr: str, template: str) -> str | None:
    """The suffix half of :func:`match`: the part of ``path_expr`` below the template root.

    Args:
        path_expr: clone-side path or path expression.
        template: destination template with one ``"{}"``.

    Returns:
        ``""`` when ``path_expr`` is exactly the template root, text starting with ``/`` below
        it, or **None** when ``path_expr`` is not under the template root.

    Raises:
        TypeError, ValueError: as :func:`match`.

    >>> relativize("/World/envs/env_.*/Robot/link_0", "/World/envs/env_{}/Robot")
    '/link_0'
    >>> relativize("/World/envs/env_2/Robot", "/World/envs/env_{}/Robot")
    ''
    >>> relativize("/World/envs/env_2/Plate", "/World/envs/env_{}/Robot") is None
    True
    """
    m = match(path_expr, template)
    return None if m is None else m.suffix
