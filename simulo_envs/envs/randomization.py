"""Domain randomization: a declarative table of per-env parameter draws, applied by ``BaseEnv``.

A task lists ``Randomize`` entries (``default_randomization``, usually from its config; users
replace the table with ``make(..., randomization=[...])``)::

    default_randomization = (
        Randomize("block.mass", Uniform(0.03, 0.15)),                               # kg, every reset
        Randomize("block.friction", Uniform(0.5, 1.5), when="startup"),             # once per build
        Randomize("agent.robot.joint_stiffness", LogUniform(0.7, 1.4), operation="scale"),
        Randomize("lights.intensity", Uniform(0.6, 1.4)),
        Randomize("sensor_cameras.base_camera.pose_jitter", Uniform(-0.01, 0.01)),  # m and rad
        Randomize("block.linear_damping", Uniform(0.0, 0.5), when="interval", interval=25),
    )

When an entry applies (``when``):

- ``"startup"``: when the scene is built (at creation and on ``reset(options={"reconfigure": True})``),
  for every env. Build-time parameters (a prop's ``scale``) can only be randomized here.
- ``"reset"``: at every reset, for the reset envs only, before the task's ``_initialize_episode``.
- ``"interval"``: after every ``interval``-th step of each env's episode (``elapsed_steps`` a
  multiple of ``interval``), for those envs only.

Values: ``operation="set"`` writes the draw; ``"scale"`` writes default x draw and ``"add"``
default + draw, where default is the value the env had when the scene was built (so repeated
draws never drift). Entries apply in table order, except that build-time entries come first
(they are drawn before the scene is attached). Before anything is drawn, the table is checked:
unknown objects or parameters, ``joints`` on a parameter without joints, a distribution whose
shape does not fit the parameter, or one whose values can leave the parameter's valid range
(a ``Gaussian`` needs ``clip`` for a mass; a light direction's range must exclude the zero
vector) raise ValueError naming the entry (KeyError for an unknown joint name).

Randomness: every env has its own random stream (``numpy.random.Generator``, PCG64), restarted
from the env's episode seed whenever that seed changes (``reset(seed=...)``, a reconfiguration,
every reset with ``enhanced_determinism``; at creation env ``i``'s seed is ``2022 + i``, see
``simulo_envs/envs/rng.py``), as ``SeedSequence([episode seed, 0x444F4D52])``: the seeds of
``episode_rng``, a separate stream, so adding or removing an entry never changes the task's own
draws, and the startup draws of a build are never reused by the first reset after it. A draw
for env ``k`` uses env ``k``'s stream alone, in table order, so env ``k`` seeded ``s`` gets the
same values whatever ``num_envs``, whichever other envs reset with it, and whether the env
renders or not (visual entries are drawn even where nothing renders, and written only where it
does). A seed decides every value of the envs it reseeds, ``startup`` ones included: ``reset(seed=...)``
draws the reseeded envs' ``startup`` entries again from their new streams (before the ``reset``
entries, the order of a build). A build-time entry (``scale``) is drawn again too: a seeded reset
of every env rebuilds the scene as ``reset(seed=..., options={"reconfigure": True})`` does; one of
some envs rebuilds only their props' bodies (``Prop.set_scale`` after the build) and leaves the
other envs' bodies alone (bit for bit with ``SimConfig.isolate_envs``; in a shared PhysX system
the others' next steps may differ at float-rounding level). The GPU backend cannot rebuild some
envs' bodies: there such a reset raises ValueError before anything changes. A restore (``reset(options={"reset_to_env_states": ...})``) draws nothing: parameters are
not part of the simulation state (``get_state``), they keep their values.

Privileged observations: ``info["privileged"]`` (float32 (N, D)) holds each randomized
parameter's current value per env, one column block per distinct (parameter, joints) in table
order, in SI units, as written (PhysX keeps a mass as its inverse: ``prop.mass`` reads it back
within a float32 rounding); ``env.randomization.privileged_names`` labels the D columns. Nothing of it
is in the policy's observation: give it to a critic (asymmetric actor-critic).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import torch

from simulo_envs.envs import randomization_rebuild as _rebuild
from simulo_envs.envs.distributions import Choice, Distribution, Gaussian, LogUniform, Uniform
from simulo_envs.envs.image_noise import ImageNoise
from simulo_envs.envs.randomization_params import Parameter, out_of_range, parameters_of, result_range
from simulo_envs.envs.randomization_targets import resolve
from simulo_envs.envs.distractors import Distractor
from simulo_envs.envs.visuals import Floor, Lights, SensorCamera

__all__ = ["Randomize", "Uniform", "LogUniform", "Gaussian", "Choice", "Randomizer", "RandomizationStreams"]

WHEN = ("startup", "reset", "interval")
OPERATIONS = ("set", "scale", "add")
STREAM_TAG = 0x444F4D52
"""Mixed into each env's seed for its randomization stream (``SeedSequence([seed, STREAM_TAG])``)."""


@dataclass(frozen=True)
class Randomize:
    """One entry of a randomization table (see the module docstring).

    Attributes:
        param: ``"<object path>.<parameter>"``, e.g. ``"block.mass"``.
        dist: ``Uniform``, ``LogUniform``, ``Gaussian`` or ``Choice``.
        when: ``"startup"``, ``"reset"`` (default) or ``"interval"``.
        interval: env steps between draws, an int >= 1; only with ``when="interval"``.
        operation: ``"set"`` (default), ``"scale"`` or ``"add"`` (relative to the built value).
        joints: joint names for robot joint parameters (None: every active joint).

    Raises:
        ValueError: a bad ``param`` string, ``when``, ``interval`` or ``operation``.
        TypeError: ``dist`` is not a distribution.
    """

    param: str
    dist: Distribution
    when: str = "reset"
    interval: Optional[int] = None
    operation: str = "set"
    joints: Optional[tuple[str, ...]] = None

    def __post_init__(self):
        if not isinstance(self.param, str) or len(self.param.split(".")) < 2 or not all(self.param.split(".")):
            raise ValueError(f"Randomize.param must be '<object>.<parameter>' (e.g. 'block.mass'), got {self.param!r}")
        if not isinstance(self.dist, Distribution):
            raise TypeError(f"Randomize({self.param!r}): dist must be Uniform, LogUniform, Gaussian or Choice, "
                            f"got {type(self.dist).__name__}")
        if self.when not in WHEN:
            raise ValueError(f"Randomize({self.param!r}): when must be one of {WHEN}, got {self.when!r}")
        if self.when == "interval":
            if isinstance(self.interval, bool) or not isinstance(self.interval, (int, np.integer)) or self.interval < 1:
                raise ValueError(f"Randomize({self.param!r}): when='interval' needs interval=<int >= 1 env steps>, "
                                 f"got {self.interval!r}")
        elif self.interval is not None:
            raise ValueError(f"Randomize({self.param!r}): interval is only for when='interval'")
        if self.operation not in OPERATIONS:
            raise ValueError(f"Randomize({self.param!r}): operation must be one of {OPERATIONS}, got {self.operation!r}")
        if self.joints is not None:
            if isinstance(self.joints, str) or not all(isinstance(j, str) for j in self.joints) or not self.joints:
                raise ValueError(f"Randomize({self.param!r}): joints must be a non-empty tuple of joint names")
            object.__setattr__(self, "joints", tuple(self.joints))

    @property
    def key(self) -> tuple:
        """What this entry writes: ``(param, joints)``; entries with the same key share a record."""
        return (self.param, self.joints)


class RandomizationStreams:
    """One ``numpy.random.Generator`` per env for randomization draws (see the module docstring).

    Args:
        num_envs: number of envs; each stream starts from OS entropy until ``seed`` is called
            (``BaseEnv`` seeds them all before building the scene).
    """

    def __init__(self, num_envs: int):
        entropy = np.random.SeedSequence().generate_state(num_envs)
        self._gens = [np.random.default_rng([int(e), STREAM_TAG]) for e in entropy]

    def seed(self, env_ids: Sequence[int], seeds: Sequence[int]) -> None:
        """Restart the streams of ``env_ids`` from ``seeds`` (one int >= 0 each)."""
        for i, s in zip(np.asarray(env_ids).tolist(), seeds):
            self._gens[int(i)] = np.random.default_rng([int(s), STREAM_TAG])

    def __getitem__(self, env: int) -> np.random.Generator:
        return self._gens[env]


@dataclass
class _Bound:
    term: Randomize
    target: Any
    param: Parameter
    shape: tuple
    default: Optional[np.ndarray] = None  # float64 (N, *shape), once the scene is attached


class Randomizer:
    """An env's domain randomization (the module docstring), held by ``BaseEnv`` as
    ``env.randomization``: the table (``terms``), each env's random stream, the per-env lights and
    sensor-camera handles (``env.lights``, ``env.sensor_cameras``), and the table bound to the
    objects of the current build. ``BaseEnv`` calls ``build`` and ``attach`` at each scene build,
    ``seed`` and ``reset`` in ``reset``, ``interval`` and ``add_privileged`` in ``step``,
    ``noisy_images`` on each observation's sensor pictures. It
    writes only its own attributes (and the randomized parameters, through the objects' setters).

    Args:
        env: the ``BaseEnv`` (its ``num_envs`` fixed by then).
        terms: the table, a sequence of ``Randomize`` entries.

    Raises:
        TypeError: ``terms`` is not a sequence of ``Randomize`` entries.
    """

    def __init__(self, env, terms: Sequence[Randomize]):
        if isinstance(terms, Randomize) or not all(isinstance(t, Randomize) for t in terms):
            raise TypeError("randomization must be a sequence of Randomize entries")
        self._env = env
        self.terms = tuple(terms)
        self._streams = RandomizationStreams(env.num_envs)
        self._image_noise = ImageNoise(env.num_envs)
        self._lights = Lights(env)
        self._floor = Floor(env)
        self._sensor_cameras: dict = {}
        self._distractors: dict = {}
        self._bound: list[_Bound] = []
        self._records: dict[tuple, np.ndarray] = {}
        self._labels: dict[tuple, list] = {}  # joint names of per-joint records
        self._flat: Optional[np.ndarray] = None
        self._intervals: list[_Bound] = []
        self.has_interval = False
        """True if some entry applies every ``interval`` steps (read on every step: a plain attribute,
        set with ``_intervals``, costs less than a property)."""

    @property
    def lights(self) -> Lights:
        """Per-env lights (``simulo_envs.envs.visuals.Lights``); usable where the env renders."""
        return self._lights

    @property
    def sensor_cameras(self) -> dict:
        """Sensor camera name -> ``SensorCamera`` of this build (per-env poses); a copy of the mapping."""
        return dict(self._sensor_cameras)

    @property
    def floor(self) -> Floor:
        """The floor's per-env colour and texture (``simulo_envs.envs.visuals.Floor``)."""
        return self._floor

    @property
    def visual_distractors(self) -> dict:
        """Slot number (a string, ``"0"``) -> ``Distractor`` of this build, the slots the table
        names (``simulo_envs/envs/distractors.py``); a copy of the mapping."""
        return dict(self._distractors)

    # ------------------------------------------------------------------ building
    def build(self) -> None:
        """In each scene build, once the task's objects exist and before the scene is attached:
        make this build's sensor-camera handles, resolve every entry against the env's objects and
        apply the build-time ``startup`` entries. Raises ValueError naming a bad entry."""
        from simulo_envs.envs.sensors import apply_overrides

        env = self._env
        self._image_noise.clear()
        self._sensor_cameras = {name: SensorCamera(env, name, cfg.pose.to_list(), cfg.fov, cfg.mount is not None,
                                                   self._image_noise)
                                for name, cfg in apply_overrides(env._all_default_sensor_configs,
                                                                 env._sensor_overrides).items()}
        self._distractors = {str(i): Distractor(env, i, env.visual_distractor_size)
                             for i in range(_distractor_slots(self.terms))}
        self._bound, self._records, self._labels, self._flat = [], {}, {}, None
        for term in self.terms:
            *path, name = term.param.split(".")
            target = resolve(env, path, term)
            params = parameters_of(target)
            if name not in params:
                raise ValueError(f"Randomize({term.param!r}): {type(target).__name__} has no randomizable parameter "
                                 f"{name!r}; it has {sorted(params)}")
            param = params[name]
            if term.joints is not None and not param.per_joint:
                raise ValueError(f"Randomize({term.param!r}): joints= applies to robot joint parameters only")
            if param.build_time and term.when != "startup":
                raise ValueError(f"Randomize({term.param!r}): {name} is fixed once the scene is built; use when='startup'")
            if param.build_time and term.operation != "set":
                raise ValueError(f"Randomize({term.param!r}): {name} takes operation='set' (a factor on the authored shape)")
            self._bound.append(_Bound(term, target, param, ()))
        self._intervals = [b for b in self._bound if b.term.when == "interval"]
        self.has_interval = bool(self._intervals)
        built = [b for b in self._bound if b.param.build_time]
        for b in built:
            b.shape = ()
            b.default = np.ones(env.num_envs)
            self._check_range(b)
        self._apply(built, np.arange(env.num_envs))

    def attach(self) -> None:
        """In each scene build, after the scene is attached and the sensors exist: read each
        entry's default, check the table's ranges, then apply the ``startup`` entries to every env."""
        env = self._env
        for b in self._bound:
            if b.param.build_time:
                continue
            joints = b.term.joints
            if joints is not None:
                try:
                    b.target._joint_columns(joints)
                except KeyError as exc:
                    raise KeyError(f"Randomize({b.term.param!r}): {exc.args[0]}") from None
                except ValueError as exc:
                    raise ValueError(f"Randomize({b.term.param!r}): {exc}") from None
            b.shape = tuple(b.param.shape(b.target, joints))
            try:
                b.term.dist.check(b.shape)
            except ValueError as exc:
                raise ValueError(f"Randomize({b.term.param!r}): {exc}") from None
            b.default = np.asarray(b.param.default(b.target, joints), dtype=np.float64).reshape(env.num_envs, *b.shape)
            self._check_range(b)
        built, self._records = self._records, {}  # re-keyed in table order
        for b in self._bound:
            if b.term.key not in self._records:
                self._records[b.term.key] = built.get(b.term.key, b.default.astype(np.float32))
                if b.param.per_joint:
                    self._labels[b.term.key] = list(b.term.joints or b.target.joint_names)
        self._apply([b for b in self._bound if b.term.when == "startup" and not b.param.build_time],
                    np.arange(env.num_envs))

    def _check_range(self, b: _Bound) -> None:
        term = b.term
        low, high = term.dist.support(b.shape)
        low, high = result_range(b.param, term.operation, low, high, b.default)
        problem = out_of_range(b.param, low, high)
        if problem:
            unit = f" [{b.param.unit}]" if b.param.unit else ""
            hint = " (give the Gaussian clip=(low, high))" if isinstance(term.dist, Gaussian) and term.dist.clip is None else ""
            raise ValueError(f"Randomize({term.param!r}{unit}, operation={term.operation!r}): the written value "
                             f"{problem}{hint}")

    # ------------------------------------------------------------------ seeds
    def seed(self, env_idx: np.ndarray, seeds: Sequence[int], redraw_startup: bool = False) -> None:
        """In ``reset``, when the episode seeds of ``env_idx`` change (before a rebuild): restart
        their streams. With ``redraw_startup`` (a ``reset(seed=...)`` that does not rebuild the
        scene) their build-time entries are drawn again from the new seeds, rebuilding those envs'
        props (``rebuild``), then their ``startup`` entries: the order of a build."""
        self._streams.seed(env_idx, seeds)
        self._image_noise.seed(env_idx, seeds)
        if redraw_startup:
            self.rebuild(env_idx)
            self.redraw_startup(env_idx)

    def seeded_reset_rebuilds(self, env_idx: np.ndarray) -> bool:
        """Whether ``reset(seed=...)`` of ``env_idx`` must rebuild the whole scene: a seed fixes
        every randomized value of the envs it reseeds, build-time entries (a prop's ``scale``)
        included (``simulo_envs/envs/randomization_rebuild.py``).

        Raises:
            ValueError: a seeded reset of some envs only, with a build-time entry in the table,
                on a backend that cannot rebuild one env's bodies (PhysX's GPU system); nothing
                changes.
        """
        return _rebuild.seeded_reset_rebuilds(self.build_time_params, env_idx, self._env.num_envs, self._env.backend)

    # ------------------------------------------------------------------ applying
    def begin_episodes(self, env_ids: np.ndarray) -> None:
        """At every reset of ``env_ids`` (int64 (k,)), a restored state's too: a new episode for
        their image noise (``simulo_envs/envs/image_noise.py``)."""
        self._image_noise.begin_episodes(env_ids)

    def reset(self, env_ids: np.ndarray) -> None:
        """Draw and write the ``reset`` entries for ``env_ids`` only (int64 (k,))."""
        self._apply([b for b in self._bound if b.term.when == "reset"], env_ids)

    def redraw_startup(self, env_ids: np.ndarray) -> None:
        """Draw and write the ``startup`` entries that are not fixed at build time for ``env_ids``
        only (int64 (k,)), as the build would have with their streams as they are now."""
        self._apply([b for b in self._bound if b.term.when == "startup" and not b.param.build_time], env_ids)

    def rebuild(self, env_ids: np.ndarray) -> None:
        """Draw and write the build-time entries (a prop's ``scale``) for ``env_ids`` only (int64
        (k,)), which rebuilds those envs' bodies (``Prop.set_scale`` after the build), as a build
        would have drawn them with their streams as they are now; the recorded default of a
        parameter that follows the geometry (a rebuilt prop's ``mass``) is read again for them."""
        built = [b for b in self._bound if b.param.build_time]
        if not built or not len(env_ids):
            return
        self._apply(built, env_ids)
        _rebuild.reread_geometry_defaults(self._bound, built, env_ids, self._env.num_envs)

    @property
    def build_time_params(self) -> list[str]:
        """The ``param`` of every entry fixed when the scene is built (a prop's ``scale``)."""
        return _rebuild.build_time_params(self._bound)

    def interval(self, elapsed_steps: torch.Tensor) -> None:
        """Draw and write the ``interval`` entries of the envs whose ``elapsed_steps`` (N,) is a
        positive multiple of the entry's ``interval``."""
        steps = elapsed_steps.cpu().numpy()
        due = [(b, np.flatnonzero((steps > 0) & (steps % b.term.interval == 0))) for b in self._intervals]
        due = [(b, ids) for b, ids in due if len(ids)]
        if not due:
            return
        draws = {}
        for env in sorted(set(np.concatenate([ids for _, ids in due]).tolist())):
            gen = self._streams[env]
            for k, (b, ids) in enumerate(due):
                if env in ids:
                    draws[(k, env)] = b.term.dist.sample(gen, b.shape)
        for k, (b, ids) in enumerate(due):
            self._write(b, ids, np.stack([draws[(k, int(i))] for i in ids]))

    def _apply(self, bound: list, env_ids: np.ndarray) -> None:
        if not bound or not len(env_ids):
            return
        draws = [np.empty((len(env_ids), *b.shape)) for b in bound]
        for row, env in enumerate(np.asarray(env_ids).tolist()):
            gen = self._streams[env]
            for b, out in zip(bound, draws):
                out[row] = b.term.dist.sample(gen, b.shape)
        for b, values in zip(bound, draws):
            self._write(b, np.asarray(env_ids), values)

    def _write(self, b: _Bound, env_ids: np.ndarray, draws: np.ndarray) -> None:
        op = b.term.operation
        if op == "set":
            values = draws.astype(np.float32)
        else:
            default = b.default[env_ids]
            values = (default * draws if op == "scale" else default + draws).astype(np.float32)
        if self._writable(b):
            b.param.write(b.target, values, env_ids, b.term.joints)
        record = self._records.get(b.term.key)
        if record is not None:
            record[env_ids] = values.reshape(len(env_ids), *record.shape[1:])
            self._flat = None
        elif b.param.build_time:
            self._records[b.term.key] = values.reshape(len(env_ids), *b.shape).copy()

    def _writable(self, b: _Bound) -> bool:
        """Visual parameters exist only where the env renders (a camera: where it is a sensor)."""
        if not b.param.visual:
            return True
        if isinstance(b.target, SensorCamera):
            return b.target.is_rendered
        if isinstance(b.target, (Lights, Floor)):
            return b.target.is_per_env
        return self._env._backend.render

    def noisy_images(self, images: dict) -> dict:
        """The sensor pictures of an observation (``{camera: {texture: array}}``) with each
        camera's image noise applied to its ``"rgb"`` (``simulo_envs/envs/image_noise.py``)."""
        return self._image_noise.apply(images, self._env.elapsed_steps.cpu().numpy())

    # ------------------------------------------------------------------ records
    def values(self) -> dict[str, torch.Tensor]:
        """Current value of every randomized parameter: ``{param (+ "[joints]"): float32 (N, ...)}``,
        SI units, fresh tensors on the env's device."""
        out = {}
        for (param, joints), record in self._records.items():
            name = param if joints is None else f"{param}[{','.join(joints)}]"
            out[name] = torch.from_numpy(record.copy()).to(self._env.device)
        return out

    @property
    def privileged_names(self) -> list[str]:
        """Labels of the columns of ``privileged()``: ``"block.mass"``, ``"block.color[0]"``,
        ``"agent.robot.joint_stiffness[panda_joint1]"``, ``"lights.color[0,2]"`` (light 0, blue), ..."""
        names = []
        for key, record in self._records.items():
            param, shape, labels = key[0], record.shape[1:], self._labels.get(key)
            for index in np.ndindex(*shape):
                if not index:
                    names.append(param)
                elif labels is not None and len(index) == 1:
                    names.append(f"{param}[{labels[index[0]]}]")
                else:
                    names.append(f"{param}[{','.join(str(i) for i in index)}]")
        return names

    def privileged(self) -> torch.Tensor:
        """float32 (N, D): every randomized parameter's current value per env, flattened in
        ``privileged_names`` order (SI units). A fresh tensor."""
        flat = self._flat_values()
        if self._env.device.type == "cpu":  # a numpy copy under a tensor: cheaper than clone()
            return torch.from_numpy(flat.copy())
        return torch.from_numpy(flat).to(self._env.device)

    def add_privileged(self, info: dict) -> None:
        """With a table, ``info["privileged"] = privileged()`` (``step``'s and ``reset``'s info)."""
        if self.terms:
            info["privileged"] = self.privileged()

    def privileged_array(self):
        """``privileged()`` as a fresh float32 numpy array (the CPU fast path's ``info``)."""
        return self._flat_values().copy()

    def _flat_values(self) -> np.ndarray:
        """The records concatenated (N, D) float32, kept until a record changes."""
        if self._flat is None:
            n = self._env.num_envs
            blocks = [r.reshape(n, -1) for r in self._records.values()]
            flat = np.concatenate(blocks, axis=1) if blocks else np.zeros((n, 0), dtype=np.float32)
            self._flat = np.ascontiguousarray(flat, dtype=np.float32)
        return self._flat


def _distractor_slots(terms) -> int:
    """How many distractor slots the table names (``visual_distractors.<i>.<parameter>``: 1 + the
    largest ``i``; 0 if none).

    Raises:
        ValueError: a slot that is not a whole number >= 0.
    """
    slots = [t.param.split(".")[1] for t in terms if t.param.split(".")[0] == "visual_distractors"]
    bad = [slot for slot in slots if not slot.isdigit()]
    if bad:
        raise ValueError(f"Randomize('visual_distractors.{bad[0]}...'): a distractor slot is a number "
                         f"('visual_distractors.0.kind'), got {bad[0]!r}")
    return 1 + max(int(slot) for slot in slots) if slots else 0
