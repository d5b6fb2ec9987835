"""Whole-env state for ``BaseEnv`` (a mixin): read and write every prop and robot at once.

Used for trajectory recording and replay, and ManiSkill-style ``reset_to`` workflows. All
poses are world frame; rows are envs (or ``len(env_idx)``).

Keys: each object's state key, its prototype path below ``/World`` with ``/`` written ``.``
(``/World/Block`` -> ``"Block"``, ``/World/Table/Drawer`` -> ``"Table.Drawer"``): names
without slashes, like ManiSkill's actor names, so the dict survives HDF5 files (ManiSkill's
``RecordEpisode`` writes it there). ``set_state_dict`` also takes the full paths.
"""

from __future__ import annotations

import numpy as np
import torch

from simulo_envs.env_ids import normalize_env_ids
from simulo_envs.tensors import as_float_array, normalized_poses


class StateMixin:
    """State half of ``BaseEnv``; expects ``self.scene``, ``self.num_envs``, ``self.device``."""

    _state_excluded: frozenset = frozenset()
    """Scene paths left out of the env state (``remove_from_state_dict_registry``)."""

    def _state_objects(self):
        """``(props, articulations)``: state key -> object, in scene order (registry applied)."""
        from simulo_envs.prop import Prop

        excluded = self._state_excluded
        objects = {state_key(p): o for p, o in self.scene.objects.items() if p not in excluded}
        props = {p: o for p, o in objects.items() if isinstance(o, Prop)}
        robots = {p: o for p, o in objects.items() if not isinstance(o, Prop)}
        return props, robots

    def remove_from_state_dict_registry(self, obj) -> None:
        """Leave the scene object ``obj`` (a Prop or Robot) out of ``get_state_dict`` /
        ``get_state`` and ``set_state*`` (e.g. a visual-only marker). Raises KeyError for an
        object this env's scene does not hold."""
        self._state_excluded = self._state_excluded | {self._state_path(obj)}

    def add_to_state_dict_registry(self, obj) -> None:
        """Put ``obj`` back into the env state (every scene object is in it by default). Raises
        KeyError for an object this env's scene does not hold."""
        self._state_excluded = self._state_excluded - {self._state_path(obj)}

    def _state_path(self, obj) -> str:
        for path, held in self.scene.objects.items():
            if held is obj:
                return path
        raise KeyError(f"{obj!r} is not an object of this env's scene")

    def get_state_dict(self) -> dict:
        """``{"actors": {key: (N, 13)}, "articulations": {key: (N, 13 + 2 dof)}}`` (state keys: the module
        docstring), world frame.

        Actor rows: ``[pose(7), linear velocity(3), angular velocity(3)]``; articulation rows:
        ``[root pose(7), root velocity(6, zero for a fixed base), qpos, qvel]`` (robots and
        articulated props). Fresh tensors.
        """
        props, robots = self._state_objects()
        actors = {p: torch.cat([o.state.pose, o.state.linear_velocity, o.state.angular_velocity], 1) for p, o in props.items()}
        arts = {}
        for p, r in robots.items():
            s = r.state
            arts[p] = torch.cat([s.root_pose, s.root_linear_velocity, s.root_angular_velocity, s.qpos, s.qvel], 1)
        return {"actors": actors, "articulations": arts}

    def set_state_dict(self, state: dict, env_idx=None) -> None:
        """Write a state dict (rows = ``len(env_idx)``, or N) into ``env_idx`` (None: all).

        Everything is validated before anything is written. Drive targets are set to the written
        qpos and stateful controllers (end-effector targets) are re-anchored for those envs.

        Raises:
            KeyError: a missing path; ValueError: wrong shapes, NaN/inf or a zero quaternion
            (nothing written).
        """
        ids = normalize_env_ids(env_idx, self.num_envs, "env_idx")
        self._write_state_dict(self._check_state_dict(state, ids), ids)

    def _check_state_dict(self, state: dict, ids) -> dict:
        """Validate a state dict for the envs ``ids``; returns it as float arrays. Writes nothing."""
        props, robots = self._state_objects()
        state = _with_state_keys(state)
        for kind, expected in (("actors", props), ("articulations", robots)):
            given = state.get(kind) if isinstance(state, dict) else None
            if not isinstance(given, dict):
                raise KeyError(f"state must be a dict with 'actors' and 'articulations' dicts (see get_state_dict); "
                               f"'{kind}' is missing")
            missing, unknown = sorted(set(expected) - set(given)), sorted(set(given) - set(expected))
            if missing or unknown:
                raise KeyError(f"state['{kind}']: missing keys {missing}, unknown keys {unknown}")
        actors = {p: as_float_array(state["actors"][p], (len(ids), 13), f"state['actors'][{p!r}]") for p in props}
        for p, row in actors.items():
            normalized_poses(row[:, :7], f"state['actors'][{p!r}] pose")
        arts = {p: as_float_array(state["articulations"][p], (len(ids), 13 + 2 * r.dof), f"state['articulations'][{p!r}]")
                for p, r in robots.items()}
        for p in self._movable_articulations(robots):
            normalized_poses(arts[p][:, :7], f"state['articulations'][{p!r}] root pose")
        return {"actors": actors, "articulations": arts}

    @staticmethod
    def _movable_articulations(robots: dict) -> set:
        """Paths of the articulations whose root moves (ArticulatedProp); a Robot's base is fixed."""
        from simulo_envs.articulated_prop import ArticulatedProp

        return {p for p, r in robots.items() if isinstance(r, ArticulatedProp)}

    def _write_state_dict(self, checked: dict, ids) -> None:
        """Write a state dict ``_check_state_dict`` returned into the envs ``ids`` (numpy int64)."""
        if not len(ids):
            return
        props, robots = self._state_objects()
        actors, arts = checked["actors"], checked["articulations"]
        movable = self._movable_articulations(robots)
        for p, o in props.items():
            o.set_pose(actors[p][:, :7], ids)
            o.set_velocity(actors[p][:, 7:13], ids)
        for p, r in robots.items():
            row = arts[p]
            if p in movable:
                r.set_pose(row[:, :7], ids)
                r.set_velocity(row[:, 7:13], ids)
            r.set_qpos(row[:, 13:13 + r.dof], ids)
            r.set_qvel(row[:, 13 + r.dof:], ids)
            if p not in movable:
                r.set_drive_targets(row[:, 13:13 + r.dof], ids)
        controller = getattr(getattr(self, "agent", None), "controller", None)
        if controller is not None and hasattr(controller, "reset"):
            controller.reset(torch.from_numpy(np.asarray(ids)))  # e.g. EE targets follow the teleported robot

    def get_state(self) -> torch.Tensor:
        """The state dict flattened to float32 (N, D), actors then articulations, in scene order."""
        sd = self.get_state_dict()
        return torch.cat([*sd["actors"].values(), *sd["articulations"].values()], dim=1)

    def set_state(self, state, env_idx=None) -> None:
        """Inverse of ``get_state`` for ``env_idx``: ``state`` is float (len(env_idx), D).

        Raises:
            ValueError: wrong shape, NaN/inf (nothing written).
        """
        rows = len(normalize_env_ids(env_idx, self.num_envs, "env_idx"))
        self.set_state_dict(self._state_dict_from_flat(state, rows), env_idx)

    def _state_dict_from_flat(self, state, rows: int) -> dict:
        """Split a flat ``get_state()`` layout (rows, D) into the state dict; checks the shape only.

        Raises:
            ValueError: a shape other than (rows, D).
        """
        props, robots = self._state_objects()
        widths = [(p, "actors", 13) for p in props] + [(p, "articulations", 13 + 2 * r.dof) for p, r in robots.items()]
        total = sum(w for _, _, w in widths)
        state = torch.as_tensor(state, dtype=torch.float32)
        if state.ndim != 2 or state.shape != (rows, total):
            raise ValueError(f"state must have shape ({rows}, {total}) for {rows} envs, got {tuple(state.shape)}")
        sd, col = {"actors": {}, "articulations": {}}, 0
        for p, kind, width in widths:
            sd[kind][p] = state[:, col:col + width]
            col += width
        return sd


def state_key(path: str) -> str:
    """The state-dict key of the object at ``path``: below ``/World``, ``/`` written ``.``."""
    rel = path[len("/World/"):] if path.startswith("/World/") else path.lstrip("/")
    return rel.replace("/", ".")


def _with_state_keys(state):
    """``state`` with any full-path keys of its ``actors`` / ``articulations`` turned into state keys."""
    if not isinstance(state, dict):
        return state
    out = dict(state)
    for kind in ("actors", "articulations"):
        if isinstance(state.get(kind), dict):
            out[kind] = {state_key(k) if isinstance(k, str) and k.startswith("/") else k: v
                         for k, v in state[kind].items()}
    return out
