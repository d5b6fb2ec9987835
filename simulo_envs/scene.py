"""``Scene``: the prim-path registry, the env origins, and attaching everything to a backend.

Authoring code registers *prototypes* under ``/World`` (``scene.add(block, at="/World/Block")``);
the scene clones each into every env at ``/World/envs/env_{i}/Block``, placed at
``scene.env_origins[i]``. Paths are compared on segment boundaries only
(``simulo_envs.cloner.path``): ``/World/Robot`` is not under ``/World/RobotArm``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Union

import torch

from simulo_envs.articulation import ArticulationObject
from simulo_envs.authoring import Capsule, Cuboid, Cylinder, Sphere
from simulo_envs.cloner.grid import grid_transforms
from simulo_envs.cloner.path import rebase, relative_to, under
from simulo_envs.cloner.plan import CloneCfg, ClonePlan, make_clone_plan, make_valid_clone_combinations
from simulo_envs.cloner.replicate import PrototypeCfg, replicate_cfgs
from simulo_envs.cloner.stage import ENV_TEMPLATE, ENVS_ROOT, WORLD
from simulo_envs.prop import Prop
from simulo_envs.tensors import MAX_ABS_VALUE


class Scene:
    """Registry of per-env objects and the env grid; the stage ``cloner.replicate`` writes into
    (``cloner.stage.ReplicationStage``: ``_check_add``, ``_check_replicable``, ``_commit_replication``).

    Args:
        num_envs: number of envs, >= 1.
        env_spacing: grid spacing of the env origins [m] (``grid_transforms``).
        device: torch device of the tensors the scene's objects return.
        clone_cfg: how heterogeneous props pick their variant per env (``CloneCfg``:
            ``clone_strategy`` "sequential" (default) or "random" with ``seed``).
        env_origins: float (num_envs, 3) origins [m] overriding the grid (a shard of a bigger
            batch keeps its envs' places on the batch's grid).

    Attributes:
        env_origins: (num_envs, 3) float32 world positions of the env origins [m]; read-only
            (a fresh copy is returned on each access).
    """

    def __init__(self, num_envs: int, env_spacing: float = 2.0, device: Union[str, torch.device] = "cpu",
                 clone_cfg: CloneCfg | None = None, env_origins: torch.Tensor | None = None):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.env_spacing = float(env_spacing)
        self.clone_cfg = clone_cfg or CloneCfg()
        self._origins, _ = grid_transforms(num_envs, env_spacing, device=self.device)
        self._explicit_origins = env_origins is not None
        if env_origins is not None:
            origins = torch.as_tensor(env_origins, dtype=torch.float32).to(self.device)
            if origins.shape != (num_envs, 3) or not bool(torch.isfinite(origins).all()):
                raise ValueError(f"env_origins must be finite with shape ({num_envs}, 3), got {tuple(origins.shape)}")
            self._origins = origins.clone()
        self._plan: ClonePlan | None = None
        self._variants: dict[str, list[int]] = {}  # scene path -> variant per env, set with the plan
        self.prototype_cfgs: list[PrototypeCfg] = []  # one per registered object when the scene plans itself
        self._objects: dict[str, Union[Prop, ArticulationObject]] = {}
        self._ground = False
        self._ground_color = None
        self.lighting = ((0.3, 0.3, 0.3), (((0.0, 1.0, -1.0), (1.0, 1.0, 1.0)),))
        self._backend = None

    @property
    def env_origins(self) -> torch.Tensor:
        """(num_envs, 3) float32 env origins in the world frame [m]; a fresh copy."""
        return self._origins.clone()

    @property
    def objects(self) -> dict:
        """Prototype path -> registered object, in registration order (a copy)."""
        return dict(self._objects)

    def add(self, obj, at: str):
        """Register a per-env object under prototype path ``at``; it is cloned into every env.

        Args:
            obj: a ``Prop``, an ``ArticulatedProp``, a ``Robot``, or a bare shape (wrapped in a ``Prop``, which is returned).
            at: prototype path under ``/World`` (not ``/World`` itself, not under ``/World/envs``).

        Returns:
            The registered object (the ``Prop`` made for a bare shape).

        Raises:
            ValueError: a path outside ``/World``, under the reserved ``/World/envs``, a path
                already registered, or adding after the scene was replicated or attached.
            TypeError: an object of another type.
        """
        obj, path = self._check_add(obj, at)
        obj._bind(path, path.rsplit("/", 1)[-1])
        self._objects[path] = obj
        return obj

    def _check_add(self, obj, at: str):
        """``(object, path)`` that ``add(obj, at)`` would register (a bare shape wrapped in a
        Prop); raises as ``add`` does and changes nothing."""
        if self._backend is not None:
            raise ValueError("scene.add: the scene is already attached to a simulation; add objects in _load_scene")
        if self._plan is not None:
            raise ValueError("scene.add: the scene's clone plan is already published (replicate() ran); "
                             "queue every object before replicating")
        if isinstance(obj, (Cuboid, Sphere, Cylinder, Capsule)):
            obj = Prop(obj)
        if not isinstance(obj, (Prop, ArticulationObject)):
            raise TypeError(f"scene.add takes a Prop, an ArticulatedProp, a Robot or a primitive shape, "
                            f"got {type(obj).__name__}")
        path = self._check_path(at)
        if any(existing is obj for existing in self._objects.values()):
            raise ValueError(f"scene.add: {obj!r} is already in the scene")
        return obj, path

    def add_ground(self, color=None) -> None:
        """Add the global ground plane (z = 0) once; it touches every env. ``color``: its RGB in
        [0, 1] in images (None: the backend's grey, ``GROUND_COLOR`` of ``simulo_envs/sim/render.py``).

        Raises:
            ValueError: a colour that is not 3 numbers in [0, 1].
        """
        if color is not None:
            color = tuple(float(c) for c in color)
            if len(color) != 3 or not all(0.0 <= c <= 1.0 for c in color):
                raise ValueError(f"add_ground: color must be 3 numbers in [0, 1] (RGB), got {color!r}")
        self._ground = True
        self._ground_color = color

    @property
    def ground_color(self) -> Optional[tuple]:
        """The ground's RGB as ``add_ground`` set it; None: the backend's grey (``GROUND_COLOR``) or no ground."""
        return self._ground_color

    def set_lighting(self, ambient=(0.3, 0.3, 0.3), directional=(((0.0, 1.0, -1.0), (1.0, 1.0, 1.0)),)) -> None:
        """Global lighting, added to every env's render scene (used only when rendering):
        ambient RGB in [0, 1] and directional lights ``((direction xyz, RGB), ...)``, world frame.

        Raises:
            ValueError: a colour or direction that is not 3 finite numbers.
        """
        def triple(value, what):
            values = tuple(float(v) for v in value)
            if len(values) != 3 or not all(math.isfinite(v) and abs(v) <= MAX_ABS_VALUE for v in values):
                raise ValueError(f"set_lighting: {what} must be 3 finite numbers (|x| <= {MAX_ABS_VALUE:g}), got {value!r}")
            return values

        self.lighting = (triple(ambient, "ambient"), tuple((triple(d, "direction"), triple(c, "colour"))
                                                            for d, c in directional))

    def env_path(self, path: str, env: int) -> str:
        """The clone of prototype ``path`` in env ``env``: ``/World/X`` -> ``/World/envs/env_{env}/X``.

        Raises:
            KeyError: ``path`` is not a registered prototype. IndexError: ``env`` out of range.
        """
        if path not in self._objects:
            raise KeyError(f"no prototype registered at {path!r}; registered: {list(self._objects)}")
        if not 0 <= env < self.num_envs:
            raise IndexError(f"env {env} outside [0, {self.num_envs})")
        return rebase(path, WORLD, ENV_TEMPLATE.format(env))

    @property
    def clone_plan(self) -> ClonePlan:
        """The replication layout (``simulo_envs.cloner.ClonePlan``): the plan published by
        ``cloner.replicate(plan, stage=scene)``, or, when none was, the scene's own (one row per
        prototype variant, its source the prototype's clone in the first env it populates).

        Raises:
            RuntimeError: before a plan is published or the scene attached.
        """
        if self._plan is None:
            raise RuntimeError("the clone plan exists once the scene is replicated or attached")
        return self._plan

    def attach(self, backend) -> None:
        """Build every registered object in ``backend``, each env its own variant; called once by
        the env. Without a plan published by ``cloner.replicate``, the scene first plans itself
        (``make_clone_plan`` with its ``clone_cfg``) and replicates that plan."""
        if self._backend is not None:
            raise RuntimeError("scene.attach: already attached")
        if self._plan is None:
            self._plan_itself()
        if self._ground:
            backend.add_ground(color=self._ground_color)
        origins = self.env_origins
        for path, obj in self._objects.items():
            if isinstance(obj, Prop):
                obj._attach(backend, origins, self.device, variant_of_env=self._variants[path])
            else:
                obj._attach(backend, origins, self.device)
        backend.finalize()
        self._backend = backend

    def _plan_itself(self) -> None:
        cfgs = [PrototypeCfg(prim_path=ENV_TEMPLATE.format(".*") + relative_to(path, WORLD), spawn=obj)
                for path, obj in self._objects.items()]
        cc = self.clone_cfg
        valid_set = None
        if cc.clone_combinations is not None and cfgs:
            names = [relative_to(path, WORLD)[1:] for path in self._objects]
            counts = [len(obj.variants) if isinstance(obj, Prop) else 1 for obj in self._objects.values()]
            valid_set = make_valid_clone_combinations(names, counts, cc.clone_combinations)
        plan = make_clone_plan(cfgs, self.num_envs, self.env_spacing, device="cpu", clone_strategy=cc.clone_strategy,
                               valid_set=valid_set, seed=cc.seed, env_template=ENV_TEMPLATE)
        if self._explicit_origins:  # the plan places envs where the scene was told to (a shard's slice of a grid)
            plan = dataclasses.replace(plan, positions=self._origins.to("cpu"))
        replicate_cfgs(plan, self, cfgs)
        self.prototype_cfgs = cfgs

    # ------------------------------------------------------------------ replication (cloner.replicate)
    def _check_replicable(self) -> None:
        if self._backend is not None:
            raise RuntimeError("replicate: the scene is already attached to a simulation; replicate in _load_scene")
        if self._plan is not None:
            raise RuntimeError("replicate: the scene already holds a published clone plan; a scene is replicated once")

    def _commit_replication(self, objects: dict, variants: dict, origins: torch.Tensor | None,
                            plan: ClonePlan) -> None:
        """Register ``objects``, record each object's variant per env, move the origins and
        publish ``plan`` (``cloner.SceneReplicateContext.replicate``; validated there)."""
        for path, obj in objects.items():
            obj._bind(path, path.rsplit("/", 1)[-1])
            self._objects[path] = obj
        self._variants = dict(variants)
        if origins is not None:
            self._origins = origins.to(self.device)
        self._plan = plan

    def _check_path(self, at: str) -> str:
        if not isinstance(at, str) or not at:
            raise ValueError(f"scene path must be a non-empty string like '/World/Block', got {at!r}")
        path = at.rstrip("/")
        if "//" in path or not under(path, WORLD) or path == WORLD:
            raise ValueError(f"scene path {at!r} must lie under '/World' (e.g. '/World/Block')")
        if under(path, ENVS_ROOT):
            raise ValueError(f"scene path {at!r} is under '/World/envs', which the scene reserves for clones")
        if path in self._objects:
            raise ValueError(f"scene path {path!r} is already taken by {self._objects[path]!r}")
        return path
