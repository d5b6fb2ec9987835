"""Collecting demonstrations: a task's scripted expert on batched envs, into a dataset.

``collect(settings)`` runs the task's batched expert (``simulo_envs.policies.EXPERTS``) on
``num_envs`` envs, in this process or split over ``num_workers`` worker processes (each a
batched env of its share), and queues every finished episode for the writer thread the moment
it ends, in seed order (``pipeline.py``). Episode attempt ``k`` is reset with seed ``seed + k``
(taken from one counter shared by every env and worker), so each episode reproduces from its
recorded seed; episodes are kept and counted in seed order (one that finishes early waits for
the lower seeds), so which seeds end up in the dataset does not depend on ``num_envs`` or
``num_workers``. By default (``exact``) every episode runs in fresh physics, so replaying its seed
and actions reproduces it bit for bit, and the dataset is the same whatever the batch. Every
episode records its provenance (``Episode.provenance``). Without
``keep_failures`` only successful episodes are written, until ``num_episodes`` are; with it,
every finished episode counts. The success rate is successes / finished episodes.

In another control mode than the experts' own (``control_mode``), every expert episode is
converted as it finishes, as ``scripts/replay.py --target-control-mode`` converts a dataset
(``expert_conversion.py``): the dataset records the converted episodes, and the summary says how
many of the expert's successes still succeed (``conversion``).

With ``action_noise`` (DART, Laskey et al., CoRL 2017; ``action_noise.py``) the envs execute
the expert's actions plus Gaussian noise, drawn per episode from its reset seed, while the
dataset records the expert's clean actions and says so (``DatasetSchema.action_noise_std``).

In the LeRobot format, an agent that describes its real robot (``agent.lerobot``: the SO arms) is
recorded in that robot's own schema: joint readings and joint targets in its driver's units
(``robot_units.py``). The env then runs in the robot's mode (``pd_joint_pos_lerobot``), driven by
the expert through its Cartesian controller (``joint_drive.JointDrive``): the recorded actions
are the executed ones (``recorded_control_mode``), or with ``action_noise`` the expert's clean
joint targets while the env executes them plus noise (standard deviation in the robot's units:
degrees on the arm joints, none on the gripper).

An interrupt (Ctrl-C) or a worker's crash stops the collection; the writer commits the episodes
already finished, and the dataset holds exactly those, each complete. A write error (a full
disk) stops it too, with the dataset valid up to the last committed episode.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Iterator, Optional

import numpy as np

from simulo_envs.datasets import open_writer, recording
from simulo_envs.datasets.action_noise import check_noise_std, noise_units, noised_columns
from simulo_envs.datasets.cli import check_cameras_render
from simulo_envs.datasets.episode import Episode
from simulo_envs.datasets.errors import DatasetError
from simulo_envs.datasets.expert_conversion import check_target_mode, converted_episodes, expert_kwargs
from simulo_envs.datasets.folder import detect_format
from simulo_envs.datasets.joint_drive import JointDrive
from simulo_envs.datasets.pipeline import READY, WorkerPool, WriterThread, close_uninterrupted
from simulo_envs.datasets.robot_units import lerobot_spec_of, real_robot_frames
from simulo_envs.datasets.rollout import run_expert
from simulo_envs.datasets.schema import schema_from_env
from simulo_envs.envs.provenance import provenance
from simulo_envs.envs.registration import REGISTERED, unknown_env_id
from simulo_envs.policies import EXPERTS
from simulo_envs.progress import ProgressBar
from simulo_envs.workers.start_method import worker_context

EXPERT_CONTROL_MODE = "pd_ee_delta_pos"
"""The control mode every scripted expert drives (``simulo_envs/policies``)."""


@dataclass
class CollectSettings:
    """What ``collect`` does (the flags of ``scripts/collect_demos.py``).

    Attributes:
        env_id: a registered task with a scripted expert.
        num_episodes: episodes to write (successful ones unless ``keep_failures``).
        num_envs: envs stepping together (over all workers).
        num_workers: worker processes (1: in this process).
        seed: seed of the first episode attempt; None: 0, or when appending, one past the
            dataset's largest seed.
        obs_mode / control_mode: recorded modes; a control mode other than the experts' own
            (``EXPERT_CONTROL_MODE``) converts each expert episode into it (a joint-position
            mode: ``pd_joint_pos``, ``pd_joint_delta_pos``, ...; ``expert_conversion.py``).
        fmt: ``"lerobot"`` or ``"hdf5"``. ``out``: the dataset folder. ``append``: add to it.
        keep_failures: write failed episodes too.
        max_tries: give up after this many finished episodes (None: ``10 * num_episodes + 100``).
        env_kwargs: other keywords for the env (``sensor_configs``, ``reward_mode``, ...).
        record_states: record env states (needed for replay by state and control conversion).
        exact: every episode in fresh physics (``sim_config.isolate_envs``, scene rebuilt before
            each wave of episodes; ``rollout.fresh_scenes``): a replay of its seed and actions
            reproduces it bit for bit. False: all envs share one PhysX system and restart one by
            one (faster); replays then match to float noise, and contact-rich episodes
            (pushing) can end otherwise.
        action_noise: standard deviation of the Gaussian noise on the executed actions, action
            units (the experts' actions lie in [-1, 1]); every column but the gripper's. The
            recorded actions are the expert's clean ones. 0.0: no noise (the default).
        full_episodes: terminations ignored: every episode runs to the task's time limit and
            counts as a success when the task is solved at its last step (``rollout.run_expert``);
            such episodes show a policy what to do after the task is done (hold, release).
        recording: frequency, robot type, cameras and ``next.*`` columns of the dataset
            (``recording.RecordingOptions``: what makes it merge with real recordings).
    """

    env_id: str
    num_episodes: int
    out: str
    fmt: str = "lerobot"
    num_envs: int = 16
    num_workers: int = 1
    seed: Optional[int] = None
    obs_mode: str = "state"
    control_mode: str = EXPERT_CONTROL_MODE
    append: bool = False
    keep_failures: bool = False
    max_tries: Optional[int] = None
    env_kwargs: dict = field(default_factory=dict)
    record_states: bool = True
    exact: bool = True
    action_noise: float = 0.0
    full_episodes: bool = False
    recording: recording.RecordingOptions = field(default_factory=recording.RecordingOptions)


def check_settings(s: CollectSettings) -> None:
    """Refuse bad settings before anything is built or written.

    Raises:
        KeyError: an unknown env id, or one without a scripted expert (both list the known ids).
        ValueError: bad counts, format, control mode or action noise (negative, not finite), or
            camera sizes or recorded cameras for an obs mode without cameras.
    """
    if s.env_id not in REGISTERED:
        raise unknown_env_id(s.env_id)
    if s.env_id not in EXPERTS:
        raise KeyError(f"{s.env_id} has no scripted expert; envs with one: {sorted(EXPERTS)}")
    for name in ("num_episodes", "num_envs", "num_workers"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if s.num_workers > s.num_envs:
        raise ValueError(f"num_workers ({s.num_workers}) must not exceed num_envs ({s.num_envs})")
    if s.fmt not in ("lerobot", "hdf5"):
        raise ValueError(f"unknown format {s.fmt!r}; choose 'lerobot' or 'hdf5'")
    if not isinstance(s.control_mode, str):
        raise ValueError(f"control_mode must be a string, got {s.control_mode!r}")
    if s.control_mode != EXPERT_CONTROL_MODE and s.action_noise:
        raise ValueError(f"action noise records the expert's clean actions, not what the env executed: such episodes "
                         f"convert to no other control mode; record in {EXPERT_CONTROL_MODE!r} (no --control-mode)")
    check_cameras_render(s.env_kwargs, s.obs_mode, s.recording)
    if s.seed is not None and (isinstance(s.seed, bool) or not isinstance(s.seed, int) or s.seed < 0):
        raise ValueError(f"seed must be an int >= 0, got {s.seed!r}")
    check_noise_std(s.action_noise)
    recording.check_frequencies(s.recording, REGISTERED[s.env_id], s.env_kwargs.get("sim_config"), s.env_id)
    recording.check_format(s.recording, s.fmt)


def _robot_spec(s: CollectSettings):
    """The real robot description (``LeRobotJoints``) whose schema the dataset is recorded in, or
    None: the LeRobot format of an agent that describes its real robot (the SO arms)."""
    return lerobot_spec_of(REGISTERED[s.env_id], s.env_kwargs.get("robot_uids")) if s.fmt == "lerobot" else None


def recorded_control_mode(s: CollectSettings) -> str:
    """The control mode the env runs in and the dataset records: ``control_mode``, or for a real
    robot's schema (``_robot_spec``) by default the robot's mode (``pd_joint_pos_lerobot``),
    driven by the expert through ``joint_drive.JointDrive``: the recorded actions are then the
    executed ones."""
    spec = _robot_spec(s)
    if spec is not None and s.control_mode == EXPERT_CONTROL_MODE:
        return spec.control_mode
    return s.control_mode


def env_kwargs_of(s: CollectSettings) -> dict:
    """The env's keywords: ``env_kwargs``, ``obs_mode``, ``control_mode`` (``recorded_control_mode``)
    and, with ``exact``, ``sim_config={"isolate_envs": True}`` (over the user's ``sim_config`` dict)."""
    kwargs = recording.env_kwargs(s.recording, {**s.env_kwargs, "obs_mode": s.obs_mode,
                                                "control_mode": recorded_control_mode(s)})
    if s.exact:
        kwargs["sim_config"] = recording.with_sim_fields(kwargs.get("sim_config"), isolate_envs=True)
    return kwargs


def collect(s: CollectSettings, progress: bool = True) -> dict:
    """Collect (module docstring). Returns the summary: ``episodes`` (written), ``tries``
    (finished), ``successes``, ``success_rate``, ``frames``, ``seconds`` (start of the collection,
    worker start-up included, to the last commit), ``startup_seconds`` (building the env here
    before that), ``workers_ready_seconds`` (until every worker had built its env),
    ``episodes_per_s`` / ``frames_per_s`` (over ``seconds``), ``steady_episodes_per_s`` /
    ``steady_frames_per_s`` (once every worker was ready), ``out``, ``format``, ``interrupted``
    (bool), ``gave_up`` (``max_tries`` reached), ``action_noise`` (with ``action_noise_units``:
    ``action_noise.noise_units``) and ``error`` (text or None).

    Raises:
        KeyError, ValueError: bad settings or env keywords (an unknown obs mode, ...), or action
            noise for a real robot's LeRobot schema (it records the executed joint targets, not
            clean labels), raised before the output folder is touched.
        DatasetExistsError, SchemaMismatchError: the output folder may not be written.
    """
    check_settings(s)
    started = time.perf_counter()
    kwargs = env_kwargs_of(s)
    cls = REGISTERED[s.env_id]
    in_process = s.num_workers == 1
    probe = cls(num_envs=s.num_envs if in_process else 1, **kwargs)  # bad kwargs raise here, before any write
    try:
        schema = schema_from_env(probe, s.env_id, kwargs)
        recording.check_cameras(s.recording, schema.cameras, s.obs_mode, s.env_id)
        frames = real_robot_frames(probe, s.fmt)  # a real robot's own schema (robot_units.py)
        if frames is not None:
            schema = frames.schema(schema)
        if frames is not None and probe.unwrapped.control_mode != frames.spec.control_mode:
            raise ValueError(f"the {s.fmt} format of {s.env_id} records its {schema.robot_type} schema, joint targets "
                             f"in {frames.spec.control_mode}; record it without --control-mode (the expert then "
                             "drives that mode), or in the hdf5 format")
        if _converting(s):
            check_target_mode(probe)
        schema = recording.apply(s.recording, schema)
        if s.action_noise:
            columns = noised_columns(probe.unwrapped.agent)
            schema = replace(schema, action_noise_std=float(s.action_noise),
                             action_noise_columns=tuple(schema.action_names[c] for c in columns))
        if s.full_episodes:
            schema = replace(schema, full_episodes=True)
        writer = open_writer(s.fmt, s.out, schema, append=s.append)
        seed = s.seed if s.seed is not None else _next_free_seed(s.out, s.append)
        record = provenance(probe, env_id=s.env_id, env_kwargs=kwargs, num_workers=s.num_workers,
                            action_noise=float(s.action_noise), policy=f"{s.env_id} scripted expert")
        record["env"]["num_envs"] = s.num_envs
        if not in_process:
            probe.close()
        return _run(s, probe if in_process else None, writer, seed, started, progress, record)
    finally:
        probe.close()


def _converting(s: CollectSettings) -> bool:
    """Whether expert episodes are converted into the recorded mode (``expert_conversion.py``);
    a real robot's schema is driven directly instead (``recorded_control_mode``)."""
    return recorded_control_mode(s) != EXPERT_CONTROL_MODE and _robot_spec(s) is None


def _next_free_seed(out: str, append: bool) -> int:
    if not append or detect_format(out) is None:
        return 0
    from simulo_envs.datasets import load_dataset

    seeds = load_dataset(out).seeds
    return int(seeds.max()) + 1 if len(seeds) else 0


def in_seed_order(items, first_seed: int, seed_of=lambda episode: episode.seed):
    """``items`` (episodes, or anything ``seed_of`` reads an episode seed from; seeded
    ``first_seed``, ``first_seed + 1``, ... exactly once, in any order) yielded in seed order: an
    item waits until every lower seed has come."""
    pending, wanted = {}, first_seed
    for item in items:
        pending[int(seed_of(item))] = item
        while wanted in pending:
            yield pending.pop(wanted)
            wanted += 1


def _run(s: CollectSettings, env, writer, first_seed: int, started: float, progress: bool,
         record: Optional[dict] = None) -> dict:
    target = s.num_episodes
    max_tries = s.max_tries if s.max_tries is not None else 10 * target + 100
    bar = ProgressBar(total=target, unit="ep", desc=f"{s.env_id} -> {s.out}", disable=not progress)
    counts = {"tries": 0, "successes": 0, "queued": 0, "frames": 0, "converted": 0, "still": 0}
    mark = None  # (time, episodes, frames) once every worker is set up: the steady rate's start
    error, interrupted = None, False
    sink = WriterThread(writer)
    source, pool = None, None
    startup = time.perf_counter() - started
    t0 = time.perf_counter()
    try:
        if env is not None:
            source = _in_process(env, s, first_seed, counts, max_tries)
        else:
            counter = worker_context().Value("q", first_seed)
            shares = [len(r) for r in np.array_split(np.arange(s.num_envs), s.num_workers)]
            args = [(s.env_id, env_kwargs_of(s), n, counter, max_tries + first_seed, s.record_states, s.fmt,
                     s.action_noise, s.keep_failures, s.full_episodes) for n in shares]
            pool = WorkerPool(worker_episodes, args)
            source = pool.items()
        if pool is None:
            mark = (t0, 0, 0)
        # Every item names its seed (an unconverted expert failure too): kept and counted in seed order.
        for _, expert_succeeded, episode in in_seed_order(source, first_seed, seed_of=lambda item: item[0]):
            if record is not None and episode is not None:
                episode.provenance = {**record, "seeds": [int(episode.seed)]}
            if mark is None and all(pool.ready_at):
                mark = (max(pool.ready_at), counts["queued"], counts["frames"])
            counts["tries"] += 1
            counts["successes"] += int(expert_succeeded)
            if episode is not None and expert_succeeded and _converting(s):
                counts["converted"] += 1
                counts["still"] += int(episode.succeeded)
            if episode is not None and (episode.succeeded or s.keep_failures):
                sink.put(episode)
                counts["queued"] += 1
                counts["frames"] += episode.length
                bar.update(1)
            bar.set_postfix(tried=counts["tries"], success=f"{counts['successes'] / counts['tries']:.0%}",
                            fps=f"{counts['frames'] / max(time.perf_counter() - t0, 1e-9):.1f}")
            if counts["queued"] >= target or counts["tries"] >= max_tries:
                break
    except KeyboardInterrupt:
        interrupted = True
    except DatasetError as exc:
        error = exc
    except Exception as exc:  # a worker's crash, a bug in the env: stop, keep what was finished
        error = exc
    finally:
        if pool is not None:
            pool.close()
        if source is not None and hasattr(source, "close"):
            source.close()
        error = close_uninterrupted(sink, error)
        bar.close()
    end = time.perf_counter()
    seconds = end - t0
    ready = mark[0] - t0 if mark is not None else seconds
    steady_time = end - mark[0] if mark is not None else 0.0
    steady_episodes = counts["queued"] - mark[1] if mark is not None else 0
    steady_frames = counts["frames"] - mark[2] if mark is not None else 0
    tries = counts["tries"]
    conversion = None if not _converting(s) else {
        "from": EXPERT_CONTROL_MODE, "to": s.control_mode, "converted": counts["converted"],
        "still_succeed": counts["still"],
        "success_rate": counts["still"] / counts["converted"] if counts["converted"] else 0.0}
    return {"env_id": s.env_id, "obs_mode": s.obs_mode, "control_mode": recorded_control_mode(s), "format": s.fmt,
            "expert_control_mode": EXPERT_CONTROL_MODE, "conversion": conversion,
            "episodes": sink.committed, "tries": tries, "successes": counts["successes"],
            "success_rate": counts["successes"] / tries if tries else 0.0, "frames": sink.committed_frames,
            "seconds": seconds, "startup_seconds": startup, "workers_ready_seconds": ready,
            "episodes_per_s": sink.committed / seconds if seconds else 0.0,
            "frames_per_s": sink.committed_frames / seconds if seconds else 0.0,
            "steady_episodes_per_s": steady_episodes / steady_time if steady_time > 0 else 0.0,
            "steady_frames_per_s": steady_frames / steady_time if steady_time > 0 else 0.0,
            "out": os.path.abspath(s.out),
            "num_envs": s.num_envs, "num_workers": s.num_workers, "first_seed": first_seed,
            "dataset_episodes": writer.num_episodes, "interrupted": interrupted, "action_noise": s.action_noise,
            "action_noise_units": noise_units(writer.schema.action_noise_columns) if s.action_noise else None,
            "full_episodes": bool(s.full_episodes), "gave_up": tries >= max_tries and counts["queued"] < target,
            "error": None if error is None else f"{type(error).__name__}: {error}"}


def _in_process(env, s: CollectSettings, first_seed: int, counts: dict, max_tries: int):
    state = {"next": first_seed}

    def next_seed() -> Optional[int]:
        if state["next"] - first_seed >= max_tries:
            return None
        state["next"] += 1
        return state["next"] - 1

    return expert_items(env, s.env_id, env_kwargs_of(s), next_seed, s.record_states, s.fmt, s.action_noise,
                        s.keep_failures, s.full_episodes)


def expert_items(env, env_id: str, kwargs: dict, next_seed, record_states: bool, fmt: str, action_noise: float,
                 keep_failures: bool, full_episodes: bool = False) -> Iterator[tuple[int, bool, Optional[Episode]]]:
    """``(seed, expert_succeeded, episode)`` for every episode the expert finishes on seeds from
    ``next_seed``: recorded in ``env`` (the dataset's modes, made with ``kwargs``) where it is in
    the expert's control mode or records a real robot's schema (``fmt``; the expert then drives
    the robot's mode through ``JointDrive``), else converted into it (``expert_conversion.py``:
    ``episode`` None for an expert failure not converted). The helper envs of a conversion are
    closed when the items end. ``full_episodes``: as ``rollout.run_expert``'s."""
    base = env.unwrapped
    frames = real_robot_frames(env, fmt)
    if base.control_mode == EXPERT_CONTROL_MODE or frames is not None:
        drive = JointDrive(env, EXPERT_CONTROL_MODE) if base.control_mode != EXPERT_CONTROL_MODE else None
        expert = EXPERTS[env_id](env if drive is None else drive.policy_env())
        policy = expert.act if drive is None else (lambda info: drive(expert.act(info)))
        for episode in run_expert(env, policy, next_seed, record_states=record_states, frames=frames,
                                  action_noise=action_noise, full_episodes=full_episodes):
            yield int(episode.seed), episode.succeeded, episode
        return
    cls, kwargs = type(base), expert_kwargs(kwargs, EXPERT_CONTROL_MODE)
    expert_env = cls(num_envs=base.num_envs, **kwargs)
    source = cls(num_envs=base.num_envs, **kwargs)
    try:
        expert = EXPERTS[env_id](expert_env)
        episodes = run_expert(expert_env, expert.act, next_seed, record_states=True, full_episodes=full_episodes)
        yield from converted_episodes(episodes, source, env, keep_failures)
    finally:
        expert_env.close()
        source.close()


def worker_episodes(index: int, env_id: str, kwargs: dict, num_envs: int, counter, seed_limit: int,
                    record_states: bool, fmt: str, action_noise: float, keep_failures: bool, full_episodes: bool,
                    stop):
    """A worker's ``expert_items`` (``WorkerPool`` target): its own batched env and expert, seeds
    from the shared ``counter`` until ``seed_limit`` or ``stop``; ``action_noise`` as
    ``run_expert``'s."""
    import simulo_envs  # noqa: F401  (registers the tasks in this process)

    env = REGISTERED[env_id](num_envs=num_envs, **kwargs)
    yield READY

    def next_seed() -> Optional[int]:
        if stop.is_set():
            return None
        with counter.get_lock():
            value = counter.value
            if value >= seed_limit:
                return None
            counter.value = value + 1
        return value

    try:
        for item in expert_items(env, env_id, kwargs, next_seed, record_states, fmt, action_noise, keep_failures,
                                 full_episodes):
            yield item
            if stop.is_set():
                return
    finally:
        env.close()
