"""A replay run (``scripts/replay.py``): a recorded dataset into a new one of other modes.

``replay(settings)`` opens the source (either format, its layout checked), builds batched envs
of the target modes (in this process, or in ``num_workers`` worker processes that each take a
contiguous share of the episodes and their own batched envs), replays every episode
(``replay.py``) and writes the replayed ones as they finish (writer thread, ``pipeline.py``).
The report counts how many episodes that succeeded when recorded still succeed after the
replay.

The replayed dataset keeps the source's schema (``schema="source"``): a dataset in a real robot's
schema (``state_source="robot"``: the SO-100's degrees and 0..100) is written in that schema again,
under the same robot type, camera names and ``next.*`` choice; one in the env's schema in the env's.
``schema="env"`` writes the env's own state (radians, object poses) instead, ``schema="robot"`` the
real robot's; the recording options (``recording.py``) rename or resize cameras, set the robot
type or leave out ``next.*`` on top. The recording frequency is the source's: replaying actions
at another control frequency would give other episodes, so another ``fps`` is refused.

A dataset recorded with action noise (``DatasetSchema.action_noise_std`` > 0, DART) holds the
expert's clean actions, not the executed ones: replaying its actions would not reproduce its
episodes, so it is replayed by its env states only (``use_env_states``; HDF5 sources) and every
other replay of it is refused. The replayed dataset keeps the source's noise fields.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from simulo_envs.datasets import load_dataset, open_writer, recording
from simulo_envs.datasets.cli import check_cameras_render
from simulo_envs.datasets.dataset import Dataset
from simulo_envs.datasets.errors import DatasetError, SchemaMismatchError
from simulo_envs.datasets.hdf5 import episode_from_group, read_group
from simulo_envs.datasets.pipeline import READY, WorkerPool, WriterThread, close_uninterrupted
from simulo_envs.datasets.convert import ActionConverter
from simulo_envs.datasets.replay import Recorded, preflight, replay_episodes
from simulo_envs.datasets.robot_units import lerobot_spec_of, real_robot_frames
from simulo_envs.datasets.schema import schema_from_env
from simulo_envs.envs.registration import REGISTERED
from simulo_envs.progress import ProgressBar


@dataclass
class ReplaySettings:
    """What ``replay`` does (the flags of ``scripts/replay.py``).

    Attributes:
        source: the recorded dataset (a LeRobot folder, an HDF5 folder or its ``.h5``).
        out / fmt / append: the dataset written (``"lerobot"`` or ``"hdf5"``).
        obs_mode / control_mode: target modes (None: the recorded ones).
        env_id: the env the episodes must come from (None: whatever the source says).
        num_envs / num_workers: envs stepping together (over all workers); worker processes.
        use_env_states: observe the recorded states instead of simulating (obs conversion only).
        keep_failures: also write episodes that no longer succeed.
        count: replay only the first ``count`` episodes.
        max_retries: tries more for an episode that succeeded when recorded and fails here
            (``replay.replay_episodes``); the report gives the first-try rate too.
        env_kwargs: keywords for the target env (e.g. ``sensor_configs``) over the recorded ones.
        schema: ``"source"`` (the source's: the env's, or a real robot's), ``"env"`` or ``"robot"``
            (module docstring).
        recording: robot type, cameras and ``next.*`` columns of the written dataset over the
            source's (``recording.RecordingOptions``; ``fps`` only the source's own).
    """

    source: str
    out: str
    fmt: str = "lerobot"
    obs_mode: Optional[str] = None
    control_mode: Optional[str] = None
    env_id: Optional[str] = None
    num_envs: int = 16
    num_workers: int = 1
    use_env_states: bool = False
    keep_failures: bool = False
    append: bool = False
    count: Optional[int] = None
    max_retries: int = 2
    env_kwargs: dict = field(default_factory=dict)
    schema: str = "source"
    recording: recording.RecordingOptions = field(default_factory=recording.RecordingOptions)


SCHEMAS = ("source", "env", "robot")


def open_source(s: ReplaySettings) -> Dataset:
    """The source dataset, checked against the settings.

    Raises:
        FileNotFoundError / DatasetLayoutError: no dataset, or a damaged one (named).
        SchemaMismatchError: episodes of another env than ``env_id``.
        KeyError: an env id that is not registered. ValueError: settings that cannot apply,
            among them a replay by actions (or a control conversion) of a dataset recorded with
            action noise.
    """
    ds = load_dataset(s.source)
    env_id = ds.env_id
    if s.env_id is not None and s.env_id != env_id:
        raise SchemaMismatchError(f"{s.source} holds episodes of {env_id or 'an unknown env'}, not {s.env_id}")
    if env_id not in REGISTERED:
        raise KeyError(f"{s.source} holds episodes of {env_id!r}, which is not a registered env; registered: "
                       f"{sorted(REGISTERED)}")
    for name in ("num_envs", "num_workers"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if s.count is not None and s.count < 1:
        raise ValueError(f"count must be >= 1, got {s.count}")
    if isinstance(s.max_retries, bool) or not isinstance(s.max_retries, int) or s.max_retries < 0:
        raise ValueError(f"max_retries must be an int >= 0, got {s.max_retries!r}")
    if s.schema not in SCHEMAS:
        raise ValueError(f"schema must be one of {SCHEMAS}, got {s.schema!r}")
    converting = target_kwargs(s, ds)["control_mode"] != ds.control_mode
    if s.use_env_states and (converting or ds.format != "hdf5"):
        raise ValueError("use_env_states re-observes recorded env states: it needs an HDF5 source (LeRobot datasets "
                         "hold no env states) and the recorded control mode (a real robot's schema records its "
                         "own: write the env's, schema='env')")
    if ds.schema.action_noise_std and not s.use_env_states:
        raise ValueError(_noisy_source_message(s.source, ds, converting))
    if s.recording.fps is not None and s.recording.fps != ds.fps or s.recording.sim_freq is not None:
        raise ValueError(f"{s.source} was recorded at {ds.fps} Hz; a replay keeps the recorded control and physics "
                         "frequencies (its actions at another frequency would give other episodes): collect at the "
                         "frequency you need (collect_demos.py --fps)")
    recording.check_format(s.recording, s.fmt)
    return ds


def _noisy_source_message(source: str, ds: Dataset, converting: bool) -> str:
    """Why a dataset recorded with action noise cannot be replayed by its actions, and what can."""
    columns = ", ".join(ds.schema.action_noise_columns) or "its actions"
    head = (f"{source} was recorded with action noise (std {ds.schema.action_noise_std:g} on {columns}): its actions "
            "are the expert's clean labels, not the actions the env executed, so replaying them does not reproduce "
            "its episodes")
    if converting:
        return head + "; a control-mode conversion replays the actions and cannot convert it"
    if ds.format != "hdf5":
        return head + "; a LeRobot dataset holds no env states to follow instead: record it in the hdf5 format"
    return head + "; replay it by its env states instead (--use-env-states)"


def writes_robot_schema(s: ReplaySettings, ds: Dataset) -> bool:
    """Whether the written dataset is in a real robot's schema (module docstring)."""
    return s.schema == "robot" or (s.schema == "source" and ds.schema.state_source == "robot")


def target_control_mode(s: ReplaySettings, ds: Dataset, env_kwargs: dict) -> str:
    """The target env's control mode: ``control_mode`` (None: the recorded one); for a real robot's
    schema, the robot's mode (``pd_joint_pos_lerobot``): the target env runs in the mode the
    dataset records, so its recorded actions are the executed ones (``robot_units.py``).

    Raises:
        ValueError: another ``control_mode`` with a real robot's schema.
    """
    mode = s.control_mode or ds.control_mode
    spec = lerobot_spec_of(REGISTERED[ds.env_id], env_kwargs.get("robot_uids")) if writes_robot_schema(s, ds) else None
    if spec is None or mode == spec.control_mode:
        return mode
    if s.control_mode is not None:
        raise ValueError(f"the {spec.robot_type} schema records actions of {spec.control_mode!r}, not "
                         f"{s.control_mode!r}: leave out the target control mode, or write the env's schema "
                         "(schema='env')")
    return spec.control_mode


def target_kwargs(s: ReplaySettings, ds: Dataset) -> dict:
    """The target env's keywords: the recorded ones, then ``env_kwargs``, then the target modes
    (``target_control_mode``). A control conversion lifts the env's time limit
    (``max_episode_steps=-1``): its episodes may take more steps than the recorded ones
    (``follow.py``) and the replay ends each itself."""
    kwargs = recording.env_kwargs(s.recording, {**ds.schema.env_kwargs_objects, **s.env_kwargs})
    kwargs.update(obs_mode=s.obs_mode or ds.obs_mode, control_mode=target_control_mode(s, ds, kwargs))
    if kwargs["control_mode"] != ds.control_mode:
        kwargs["max_episode_steps"] = -1
    return kwargs


def source_kwargs(ds: Dataset) -> dict:
    """The keywords of the env that replays the recorded actions for a conversion (no obs)."""
    return {**{k: v for k, v in ds.schema.env_kwargs_objects.items() if k != "sensor_configs"}, "obs_mode": "none",
            "control_mode": ds.control_mode, "reward_mode": "none"}


def output_schema(s: ReplaySettings, ds: Dataset, target, kwargs: dict):
    """``(schema, frames)`` of the written dataset (module docstring): ``frames`` maps the
    replayed steps to a real robot's schema, or is None.

    Raises:
        ValueError: ``schema="robot"`` for an env whose robot has no real-robot schema; a recorded
            camera the target env does not render (``recording.check_cameras``).
    """
    schema = schema_from_env(target, ds.env_id, kwargs, task=ds.task or None)
    recording.check_cameras(s.recording, schema.cameras, kwargs["obs_mode"], ds.env_id)
    robot = writes_robot_schema(s, ds)
    frames = real_robot_frames(target, "lerobot") if robot else None
    if robot and frames is None:
        raise ValueError(f"{ds.env_id}'s robot has no real-robot schema (agent.lerobot); write the env's (schema='env')")
    if frames is not None:
        schema = frames.schema(schema)
    if s.schema == "source":  # the source's names for what the user did not set
        inherited = [recording.CameraRecord(name, ds.schema.env_camera(name)) for name in ds.cameras
                     if ds.schema.env_camera(name) in schema.cameras]
        options = recording.RecordingOptions(
            robot_type=ds.robot_type or None, cameras=tuple(inherited) if len(inherited) == len(ds.cameras) else (),
            next_features=ds.schema.next_features)
        schema = recording.apply(options, schema)
    return recording.apply(s.recording, schema), frames


def recorded(ds: Dataset, index: int) -> Recorded:
    """Episode ``index`` of ``ds`` as a ``Recorded`` (env states from HDF5 sources)."""
    if ds.format == "hdf5":
        main = os.path.join(ds.path, "trajectory.h5")
        group = read_group(main, index)
        ep = episode_from_group(group, int(ds.seeds[index]), f"{main}:traj_{index}")
        return Recorded(index, ep.seed, ep.actions, ep.rewards, ep.terminated, ep.truncated, ep.success, ep.env_states,
                        state_obs=ep.state_vector())
    ep = ds.episode(index, images=False)
    length = ep.action.shape[0]
    done = ep.done.numpy() if ep.done is not None else np.arange(length) == length - 1  # no next.*: it ends at T-1
    if ep.success is not None:
        success = ep.success.numpy()
    else:  # the episode's own success, at its last step
        success = np.zeros(length, bool)
        success[-1] = bool(ds.successes[index])
    reward = ep.reward.numpy() if ep.reward is not None else np.zeros(length, np.float32)
    return Recorded(index, ep.seed, ep.action.numpy(), reward, done & success, done & ~success, success)


def replay(s: ReplaySettings, progress: bool = True) -> dict:
    """Run the replay (module docstring). Returns the summary: ``episodes`` (written),
    ``replayed``, ``success_rate`` (recorded successes that still succeed, retries included),
    ``first_try_success_rate``, ``still_succeed``, ``recorded_successes``, ``tries``,
    ``failed`` (source indices that no longer succeed), ``frames``, ``seconds``, ``out``, the
    modes, ``length_ratio`` (replayed / recorded steps per episode: median and max),
    ``object_drift_m`` (control conversions: per episode the largest distance [m] between an
    object in the converted episode and in the source replay at the same recorded step; median
    and max over the episodes; None otherwise), ``interrupted``, ``error``.

    Raises:
        see ``open_source``; DatasetExistsError / SchemaMismatchError for the output folder;
        NotImplementedError: a target control mode that cannot be converted into.
    """
    ds = open_source(s)
    count = len(ds) if s.count is None else min(s.count, len(ds))
    kwargs = target_kwargs(s, ds)
    check_cameras_render(s.env_kwargs, kwargs["obs_mode"], s.recording)
    cls = REGISTERED[ds.env_id]
    converting = kwargs["control_mode"] != ds.control_mode
    in_process = s.num_workers == 1
    num_envs = max(1, min(s.num_envs, count))
    target = cls(num_envs=num_envs if in_process else 1, **kwargs)  # bad kwargs raise before any write
    source = cls(num_envs=num_envs, **source_kwargs(ds)) if converting and in_process else None
    try:
        if converting:
            ActionConverter(target)  # NotImplementedError for Cartesian target modes, before any write
        if count:  # an episode of another env is refused before the output folder is touched
            preflight(source if source is not None else target, recorded(ds, 0), f"{s.source} episode 0",
                      check_actions=not converting or source is not None)
        schema, frames = output_schema(s, ds, target, kwargs)
        if ds.schema.action_noise_std:  # the recorded labels are copied: the noise still describes them
            schema = replace(schema, action_noise_std=ds.schema.action_noise_std,
                             action_noise_columns=ds.schema.action_noise_columns)
        writer = open_writer(s.fmt, s.out, schema, append=s.append)
        if not in_process:
            target.close()
        return _run(s, ds, count, target if in_process else None, source, writer, kwargs, progress, frames is not None)
    finally:
        target.close()
        if source is not None:
            source.close()


def _run(s: ReplaySettings, ds: Dataset, count: int, target, source, writer, kwargs: dict, progress: bool,
         robot: bool) -> dict:
    bar = ProgressBar(total=count, unit="ep", desc=f"replay {ds.env_id} -> {s.out}", disable=not progress)
    tally = {"replayed": 0, "recorded_successes": 0, "still": 0, "first_try": 0, "tries": 0, "frames": 0, "queued": 0}
    failed: list[int] = []
    drifts: list[float] = []
    ratios: list[float] = []
    error, interrupted, pool = None, False, None
    sink = WriterThread(writer)
    t0 = time.perf_counter()
    try:
        if target is not None:
            items = ((r.index, bool(r.success[-1]), r.attempt, r.drift, r.length, ep)
                     for r, ep in replay_episodes(target, (recorded(ds, i) for i in range(count)), source,
                                                  s.use_env_states, ds.path, s.max_retries,
                                                  real_robot_frames(target, "lerobot") if robot else None))
        else:
            shares = [c for c in np.array_split(np.arange(count), s.num_workers) if len(c)]
            sizes = [len(r) for r in np.array_split(np.arange(min(s.num_envs, count)), len(shares))]
            args = [(s.source, ds.env_id, kwargs, max(1, n), [int(i) for i in share], s.use_env_states,
                     s.max_retries, robot) for share, n in zip(shares, sizes)]
            pool = WorkerPool(worker_replays, args)
            items = pool.items()
        for index, recorded_success, attempt, drift, recorded_length, episode in items:
            tally["replayed"] += 1
            ratios.append(episode.length / max(recorded_length, 1))
            if drift is not None:
                drifts.append(drift)
            tally["tries"] += attempt
            tally["recorded_successes"] += int(recorded_success)
            tally["still"] += int(recorded_success and episode.succeeded)
            tally["first_try"] += int(recorded_success and episode.succeeded and attempt == 1)
            if recorded_success and not episode.succeeded:
                failed.append(index)
            if episode.succeeded or s.keep_failures:
                sink.put(episode)
                tally["queued"] += 1
                tally["frames"] += episode.length
            bar.update(1)
            bar.set_postfix(still_succeed=f"{tally['still'] / max(tally['recorded_successes'], 1):.0%}")
    except KeyboardInterrupt:
        interrupted = True
    except (DatasetError, Exception) as exc:  # a worker's crash, a damaged episode: stop, keep what is done
        error = exc
    finally:
        if pool is not None:
            pool.close()
        error = close_uninterrupted(sink, error)
        bar.close()
    seconds = time.perf_counter() - t0
    base = tally["recorded_successes"]
    return {"env_id": ds.env_id, "source": os.path.abspath(s.source), "source_format": ds.format,
            "source_obs_mode": ds.obs_mode, "source_control_mode": ds.control_mode, "obs_mode": kwargs["obs_mode"],
            "control_mode": kwargs["control_mode"], "format": s.fmt, "use_env_states": s.use_env_states,
            "episodes": sink.committed, "replayed": tally["replayed"], "recorded_successes": base,
            "still_succeed": tally["still"], "success_rate": tally["still"] / base if base else 0.0,
            "first_try_success_rate": tally["first_try"] / base if base else 0.0, "tries": tally["tries"],
            "max_retries": s.max_retries,
            "failed": failed, "frames": sink.committed_frames, "seconds": seconds,
            "length_ratio": _quartiles(ratios), "object_drift_m": _quartiles(drifts),
            "episodes_per_s": tally["replayed"] / seconds if seconds else 0.0, "out": os.path.abspath(s.out),
            "interrupted": interrupted, "error": None if error is None else f"{type(error).__name__}: {error}"}


def _quartiles(values: list) -> Optional[dict]:
    """``{"median", "max"}`` of ``values`` (None when empty), rounded for the report."""
    if not values:
        return None
    return {"median": round(float(np.median(values)), 4), "max": round(float(np.max(values)), 4)}


def worker_replays(index: int, source_path: str, env_id: str, kwargs: dict, num_envs: int, indices: list,
                   use_env_states: bool, max_retries: int, robot: bool, stop):
    """A worker's replays (``WorkerPool`` target): its own source dataset handle and envs."""
    import simulo_envs  # noqa: F401  (registers the tasks in this process)

    ds = load_dataset(source_path)
    cls = REGISTERED[env_id]
    target = cls(num_envs=num_envs, **kwargs)
    converting = kwargs["control_mode"] != ds.control_mode
    source = cls(num_envs=num_envs, **source_kwargs(ds)) if converting else None
    yield READY
    try:
        episodes = (recorded(ds, i) for i in indices)
        frames = real_robot_frames(target, "lerobot") if robot else None
        for rec, episode in replay_episodes(target, episodes, source, use_env_states, ds.path, max_retries, frames):
            yield rec.index, bool(rec.success[-1]), rec.attempt, rec.drift, rec.length, episode
            if stop.is_set():
                return
    finally:
        target.close()
        if source is not None:
            source.close()
