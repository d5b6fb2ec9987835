"""HDF5 trajectories in ManiSkill's layout: the layout, declared once, ``HDF5Writer`` and ``read_hdf5``.

Spec: ManiSkill 3 trajectory format (``mani_skill/utils/wrappers/record.py``: ``RecordEpisode.
flush_trajectory`` and its docstring; ``mani_skill/trajectory/replay_trajectory.py`` and
``dataset.py`` read it; documented at maniskill.readthedocs.io, "Demonstrations"). Written here
from those, no code copied. ManiSkill's ``replay_trajectory`` and ``ManiSkillTrajectoryDataset``
read these files (tests run both).

Files of a dataset folder (a finished one: what ManiSkill writes and its users copy around)::

    trajectory.h5              one group per episode, traj_<id>, id = 0, 1, ...
    trajectory.json            the sidecar (JSON SIDECAR); its episode list is the commit

While a writer is open, each commit (one episode, or the episodes finished together) goes to a
part file, ``episodes/traj_<first>.h5`` (the groups /traj_<id> of that commit, <first> the first
of them), and ``trajectory.h5`` holds an HDF5 external link per episode into its part file (h5py
and HDF5 follow them on their own), so adding episodes never rewrites the others. ``close()``
copies every committed group into one self-contained ``trajectory.h5`` (written beside it and
renamed over it) and deletes the part files (``consolidate``). Appending to a finished dataset
first gives its ``trajectory.h5`` a second name, ``episodes/traj_0.h5`` (a hard link, or a copy
where the file system has none), and links to it.

GROUP ``traj_<id>`` (an episode of ``T`` steps; ``T + 1`` rows = after the reset, then after each step):

=========================================  =======  ==============  ===========================================
dataset                                    dtype    shape           meaning [unit]
=========================================  =======  ==============  ===========================================
obs                                        float32  (T+1, D)        obs_mode "state": the flat observation
obs/<key>/... (other obs modes)            as env   (T+1, ...)      the env's observation dict, same nesting
                                                                    and order; images uint8 (T+1, H, W, 3),
                                                                    gzip level 5 (as ManiSkill)
actions                                    float32  (T, A)          the actions the env applied (clipped); with
                                                                    action noise: the expert's clean labels
rewards                                    float32  (T,)            reward of each step (the env's reward mode)
terminated / truncated / success           bool     (T,)            Gymnasium's flags; the task's success
env_states/actors/<key>                    float32  (T+1, 13)       pose (7, qw first), lin vel, ang vel
env_states/articulations/<key>             float32  (T+1, 13+2dof)  root pose, root velocity, qpos, qvel
=========================================  =======  ==============  ===========================================

Env states are ``get_state_dict()`` rows in the env's own frame (positions relative to its env
origin: the world frame of a one-env batch, which is what ManiSkill's single-env replay restores).
Groups keep their creation order (``track_order``) so the nested observation flattens in the
env's order.

JSON SIDECAR: ``env_info`` (``env_id``, ``env_kwargs`` that rebuild the env, ``max_episode_steps``),
``commit_info`` (null), ``source_type`` / ``source_desc``, ``episodes``: per episode
``episode_id``, ``episode_seed``, ``control_mode``, ``elapsed_steps`` (T), ``reset_kwargs``
(``{"seed": episode_seed, "options": {}}``: ``env.reset(**reset_kwargs)`` rebuilds its initial
state) and ``success`` (at the last step); and ours, ignored by ManiSkill: ``simulo_schema`` (the
``DatasetSchema``, with ``action_noise_std``: a dataset recorded with action noise replays by its
env states only, ManiSkill's ``replay_trajectory --use-env-states``).

Differences from ManiSkill's own recordings: ``rewards`` and ``success`` are always written;
nothing else differs once the writer is closed.

Atomic per commit: the part file, then a copy of the (links-only) main file with the new links,
then the sidecar are each written beside their target, fsynced and renamed over it
(``atomic.py``); the sidecar's episode list is the commit. The consolidation at ``close()`` is one
more such write. So at every moment the folder is a valid dataset: a crash, a kill or a full disk
leaves one whose sidecar lists every complete episode (behind links when the writer never closed:
keep the folder together then, or open it with ``append=True`` and close it to consolidate); a
link, group or part file of an uncommitted episode is ignored and replaced. An interrupt (Ctrl-C)
closes the writer (``pipeline.close_uninterrupted``), which consolidates.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np

from simulo_envs.datasets import atomic, stats
from simulo_envs.datasets.dataset import Dataset, EpisodeData
from simulo_envs.datasets.episode import Episode
from simulo_envs.datasets.errors import DatasetLayoutError, DatasetWriteError, SchemaMismatchError
from simulo_envs.datasets.folder import check_output
from simulo_envs.datasets.schema import DatasetSchema

MAIN_FILE = "trajectory.h5"
SIDECAR = "trajectory.json"
EPISODE_DIR = "episodes"
SCHEMA_KEY = "simulo_schema"
COMPRESSED = ("rgb", "depth", "seg", "segmentation", "albedo", "normal")
"""Image leaves stored with gzip (level 5), as ManiSkill stores rgb/depth/seg."""


def read_sidecar(path: str) -> dict:
    """The sidecar at ``path`` (checked: ``env_info`` with ``env_id``, an ``episodes`` list).

    Raises:
        DatasetLayoutError: missing, not JSON, or without those keys.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise DatasetLayoutError(f"{path} is missing: every trajectory .h5 needs its .json sidecar") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DatasetLayoutError(f"{path} is not valid JSON (truncated or corrupt): {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("env_info"), dict) or "env_id" not in data["env_info"]:
        raise DatasetLayoutError(f"{path} lacks env_info.env_id: not a trajectory sidecar")
    if not isinstance(data.get("episodes"), list):
        raise DatasetLayoutError(f"{path} lacks its episodes list")
    return data


def read_schema(folder: str) -> DatasetSchema:
    """The ``DatasetSchema`` stored in ``folder``'s sidecar. Raises DatasetLayoutError."""
    data = read_sidecar(os.path.join(folder, SIDECAR))
    try:
        return DatasetSchema.from_json(data[SCHEMA_KEY])
    except (KeyError, TypeError, ValueError) as error:
        raise DatasetLayoutError(f"{os.path.join(folder, SIDECAR)}: no dataset schema ({error})") from None


class HDF5Writer:
    """Write episodes as ManiSkill-layout HDF5 trajectories, each atomically (module docstring).

    Args:
        folder: the dataset folder (see ``folder.check_output`` for what is refused).
        schema: what every episode shares. ``append``: add to the dataset there.
        source_type / source_desc: the sidecar's description of where the episodes come from.

    Raises:
        DatasetExistsError, SchemaMismatchError, PermissionError: ``folder`` may not be written.
    """

    def __init__(self, folder: str, schema: DatasetSchema, append: bool = False, source_type: str = "scripted",
                 source_desc: str = ""):
        appending = check_output(folder, "hdf5", schema, append, read_schema)
        self.folder, self.schema = folder, schema
        self._main = os.path.join(folder, MAIN_FILE)
        self._sidecar = os.path.join(folder, SIDECAR)
        if appending:
            atomic.remove_stale_temporaries(folder)
            self._json = read_sidecar(self._sidecar)
            self._link_finished_main()
        else:
            _write_main(self._main, [])
            self._json = {"env_info": {"env_id": schema.env_id, "env_kwargs": dict(schema.env_kwargs),
                                       "max_episode_steps": schema.max_episode_steps},
                          "commit_info": None, "source_type": source_type, "source_desc": source_desc,
                          "episodes": [], SCHEMA_KEY: schema.to_json()}
            atomic.write_json(self._sidecar, self._json)

    @property
    def num_episodes(self) -> int:
        """Episodes written so far."""
        return len(self._json["episodes"])

    @property
    def num_frames(self) -> int:
        """Frames (env steps) written so far, all episodes together."""
        return sum(int(e["elapsed_steps"]) for e in self._json["episodes"])

    def add(self, episode: Episode) -> int:
        """Commit ``episode``; returns its id. See ``add_many``."""
        return self.add_many([episode])[0]

    def add_many(self, episodes) -> list[int]:
        """Commit ``episodes`` together (one episode file for all of them, one main-file copy, one
        sidecar write); returns their ids.

        Raises:
            SchemaMismatchError: wrong shapes (checked before anything is written).
            DatasetWriteError: a failed write; the dataset keeps every episode committed before.
        """
        import h5py

        for episode in episodes:
            episode.check()
            self._check(episode)
        if not episodes:
            return []
        first = self.num_episodes
        ids = list(range(first, first + len(episodes)))
        rel = f"{EPISODE_DIR}/traj_{first}.h5"
        try:
            os.makedirs(os.path.join(self.folder, EPISODE_DIR), exist_ok=True)
            with atomic.atomic_path(os.path.join(self.folder, rel), sync_folder=False) as tmp:
                with h5py.File(tmp, "w", track_order=True) as f:
                    for index, episode in zip(ids, episodes):
                        _write_group(f.create_group(f"traj_{index}", track_order=True), episode)
            with atomic.atomic_path(self._main, sync_folder=False) as tmp:
                if os.path.exists(self._main):
                    shutil.copyfile(self._main, tmp)
                with h5py.File(tmp, "a", track_order=True) as f:
                    for index in ids:
                        name = f"traj_{index}"
                        if name in f:  # left by a write that did not commit
                            del f[name]
                        f[name] = h5py.ExternalLink(rel, f"/{name}")
            atomic.sync_folders([os.path.join(self.folder, EPISODE_DIR), self.folder])
            records = [{"episode_id": index, "episode_seed": int(ep.seed), "control_mode": self.schema.control_mode,
                        "elapsed_steps": ep.length, "reset_kwargs": {"seed": int(ep.seed), "options": {}},
                        "success": ep.succeeded, **({"provenance": ep.provenance} if ep.provenance else {})}
                       for index, ep in zip(ids, episodes)]
            data = dict(self._json, episodes=self._json["episodes"] + records)
            atomic.write_json(self._sidecar, data, indent=2)  # the commit
        except OSError as error:
            raise DatasetWriteError(f"could not write episodes {ids[0]}..{ids[-1]} to {self.folder}: {error}; the "
                                    f"dataset holds the {first} episodes written before, complete") from error
        self._json = data
        return ids

    def close(self) -> None:
        """Leave one self-contained ``trajectory.h5``: copy the committed episodes out of their part
        files and delete those (``consolidate``). Every episode was committed by ``add``; a
        writer never closed leaves a valid dataset behind links (module docstring).

        Raises:
            DatasetWriteError: the copy failed (a full disk); the dataset stays as it was, valid.
        """
        consolidate(self.folder)

    def _link_finished_main(self) -> None:
        """Appending to a self-contained ``trajectory.h5``: make it the part file of the episodes
        it holds (a second name, so no moment lacks it), then link the main file to it."""
        episodes = [int(e["episode_id"]) for e in self._json["episodes"]]
        if not episodes or _linked_parts(self._main):
            return
        base = os.path.join(self.folder, EPISODE_DIR, f"traj_{episodes[0]}.h5")
        os.makedirs(os.path.dirname(base), exist_ok=True)
        if os.path.exists(base):
            os.unlink(base)  # a part file left by a run that did not commit it
        try:
            os.link(self._main, base)
        except OSError:  # a file system without hard links
            shutil.copyfile(self._main, base)
        atomic.sync_folders([base])
        rel = os.path.relpath(base, self.folder)
        _write_main(self._main, [(f"traj_{i}", rel) for i in episodes])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, episode: Episode) -> None:
        problems = []
        width = episode.state_vector().shape[1]
        if width != self.schema.state_dim:
            problems.append(f"state has {width} columns, the dataset {self.schema.state_dim}")
        if episode.actions.shape[1] != self.schema.action_dim:
            problems.append(f"actions have {episode.actions.shape[1]} columns, the dataset {self.schema.action_dim}")
        images = episode.rgb()
        for cam, shape in self.schema.cameras.items():
            if cam not in images or tuple(images[cam].shape[1:]) != tuple(shape):
                problems.append(f"camera {cam!r}: expected {tuple(shape)} images")
        if problems:
            raise SchemaMismatchError(f"episode (seed {episode.seed}) does not fit {self.folder}: " + "; ".join(problems))


def consolidate(folder: str) -> int:
    """Make ``folder``'s ``trajectory.h5`` self-contained: every episode its sidecar lists is
    copied out of its part file (HDF5's object copy: datasets, compression and group order kept)
    into a new main file, written beside it and renamed over it; then the part files and the
    ``episodes`` folder are deleted. Returns the number of episodes copied (0 when the main
    file held them all already). Groups of episodes the sidecar does not list (an uncommitted
    write) are left out.

    Raises:
        DatasetLayoutError: no sidecar, or a listed episode that cannot be read.
        DatasetWriteError: the new main file could not be written; the dataset is unchanged.
    """
    import h5py

    main = os.path.join(folder, MAIN_FILE)
    names = [f"traj_{e.get('episode_id')}" for e in read_sidecar(os.path.join(folder, SIDECAR))["episodes"]]
    copied = len(_linked_parts(main)) if os.path.exists(main) else 0
    if copied or not os.path.exists(main):
        try:
            with atomic.atomic_path(main) as tmp:
                with h5py.File(tmp, "w", track_order=True) as out:
                    if names:
                        with h5py.File(main, "r") as source:
                            for name in names:
                                source.copy(source[name], out, name=name)
        except KeyError as error:
            raise DatasetLayoutError(f"{main}: a listed episode cannot be read ({error})") from None
        except OSError as error:
            raise DatasetWriteError(f"could not write the self-contained {main}: {error}; the dataset is "
                                    "unchanged (its episodes stay in their part files)") from error
    parts = os.path.join(folder, EPISODE_DIR)
    if os.path.isdir(parts):
        for name in os.listdir(parts):
            if name.startswith("traj_") and name.endswith(".h5") or atomic.TMP_MARK in name:
                os.unlink(os.path.join(parts, name))
        if not os.listdir(parts):
            os.rmdir(parts)
    return copied


def _linked_parts(main: str) -> list:
    """The external links of ``main``'s top level (``(name, file)``; empty for a self-contained file)."""
    import h5py

    with h5py.File(main, "r") as f:
        links = [(name, f.get(name, getlink=True)) for name in f]
    return [(name, link.filename) for name, link in links if isinstance(link, h5py.ExternalLink)]


def _write_main(path: str, links: list) -> None:
    """Write a main file holding external links ``[(name, part file relative to it)]`` atomically."""
    import h5py

    with atomic.atomic_path(path) as tmp:
        with h5py.File(tmp, "w", track_order=True) as f:
            for name, rel in links:
                f[name] = h5py.ExternalLink(rel, f"/{name}")


def _write_group(group, episode: Episode) -> None:
    _write_node(group, "obs", episode.obs)
    group.create_dataset("actions", data=episode.actions.astype(np.float32))
    group.create_dataset("rewards", data=episode.rewards.astype(np.float32))
    for key in ("terminated", "truncated", "success"):
        group.create_dataset(key, data=getattr(episode, key).astype(bool))
    if episode.env_states is not None:
        _write_node(group, "env_states", episode.env_states)


def _write_node(group, key: str, value) -> None:
    if isinstance(value, dict):
        sub = group.create_group(key, track_order=True)
        for k, v in value.items():
            _write_node(sub, k, v)
        return
    value = np.asarray(value)
    if key in COMPRESSED:
        group.create_dataset(key, data=value, compression="gzip", compression_opts=5)
    else:
        group.create_dataset(key, data=value)


def read_hdf5(path: str) -> Dataset:
    """Open an HDF5 trajectory dataset: its folder, its ``.h5`` or its ``.json`` (also a plain
    ManiSkill recording of our envs, whose schema is then partly unknown).

    Raises:
        DatasetLayoutError: a missing or damaged sidecar or ``.h5`` (named), or an episode
            group without the layout's datasets or with inconsistent lengths (when read).
    """
    import h5py

    if os.path.isdir(path):
        main, sidecar = os.path.join(path, MAIN_FILE), os.path.join(path, SIDECAR)
    else:
        stem = os.path.splitext(path)[0]
        main, sidecar = stem + ".h5", stem + ".json"
    data = read_sidecar(sidecar)
    episodes = data["episodes"]
    try:
        handle = h5py.File(main, "r")
    except FileNotFoundError:
        raise DatasetLayoutError(f"{main} is missing (the sidecar {sidecar} lists {len(episodes)} episodes)") from None
    except OSError as error:
        raise DatasetLayoutError(f"{main} is not a readable HDF5 file (truncated or corrupt): {error}") from None
    with handle:
        missing = [e.get("episode_id") for e in episodes if f"traj_{e.get('episode_id')}" not in handle]
    if missing:
        raise DatasetLayoutError(f"{main} lacks the groups of episodes {missing[:5]} that {sidecar} lists")
    schema = _schema(data, main, episodes)

    def load(i: int, images: bool = True) -> EpisodeData:
        return _load_episode(main, episodes[i], i, schema, images)

    def dataset_stats() -> dict:
        per_episode = []
        for i in range(len(episodes)):
            ep = load(i)
            item = {"observation.state": stats.vector_stats(ep.observation_state.numpy()),
                    "action": stats.vector_stats(ep.action.numpy()), "next.reward": stats.vector_stats(ep.reward.numpy())}
            item.update({f"observation.images.{c}": stats.image_stats(f.numpy()) for c, f in ep.images.items()})
            per_episode.append(item)
        return stats.aggregate(per_episode) if per_episode else {}

    seeds = np.array([int(e.get("episode_seed", -1)) for e in episodes], np.int64)
    lengths = np.array([int(e.get("elapsed_steps", 0)) for e in episodes], np.int64)
    successes = np.array([bool(e.get("success", False)) for e in episodes], bool)
    return Dataset(os.path.dirname(main), "hdf5", schema, seeds, lengths, successes, load, dataset_stats)


def _schema(data: dict, main: str, episodes: list) -> DatasetSchema:
    if SCHEMA_KEY in data:
        try:
            return DatasetSchema.from_json(data[SCHEMA_KEY])
        except (KeyError, TypeError, ValueError) as error:
            raise DatasetLayoutError(f"{main}: damaged dataset schema in its sidecar ({error})") from None
    info = data["env_info"]
    kwargs = info.get("env_kwargs", {}) or {}
    control = episodes[0].get("control_mode", kwargs.get("control_mode", "")) if episodes else kwargs.get("control_mode", "")
    state_dim = action_dim = 0
    if episodes:
        first = _load_episode(main, episodes[0], 0, None)
        state_dim, action_dim = first.observation_state.shape[1], first.action.shape[1]
    return DatasetSchema(env_id=info["env_id"], obs_mode=kwargs.get("obs_mode") or "state", control_mode=control or "",
                         reward_mode=kwargs.get("reward_mode") or "", fps=0, robot_type="",
                         state_names=tuple(f"state.{i}" for i in range(state_dim)),
                         action_names=tuple(f"action.{i}" for i in range(action_dim)),
                         max_episode_steps=info.get("max_episode_steps"), env_kwargs=kwargs)


def read_group(main: str, episode_id: int):
    """Every dataset of ``traj_<episode_id>`` as numpy: a nested dict. Raises DatasetLayoutError."""
    import h5py

    name = f"traj_{episode_id}"
    try:
        with h5py.File(main, "r") as f:
            if name not in f:
                raise DatasetLayoutError(f"{main} has no group {name}")
            return _read_node(f[name])
    except (OSError, KeyError) as error:
        raise DatasetLayoutError(f"{main}: {name} cannot be read (missing or truncated episode file): {error}") from None


def _read_node(node):
    import h5py

    if isinstance(node, h5py.Group):
        return {k: _read_node(node[k]) for k in node.keys()}
    return node[()]


def episode_from_group(group: dict, seed: int, name: str) -> Episode:
    """An ``Episode`` from a ``read_group`` dict. Raises DatasetLayoutError naming what is missing
    or inconsistent."""
    missing = [k for k in ("obs", "actions", "terminated", "truncated") if k not in group]
    if missing:
        raise DatasetLayoutError(f"{name} lacks {missing}")
    steps = len(group["actions"])
    flags = {k: np.asarray(group.get(k, np.zeros(steps, bool)), bool) for k in ("terminated", "truncated", "success")}
    episode = Episode(seed=seed, obs=group["obs"], actions=np.asarray(group["actions"], np.float32),
                      rewards=np.asarray(group.get("rewards", np.zeros(steps, np.float32)), np.float32),
                      env_states=group.get("env_states"), **flags)
    try:
        episode.check()
    except ValueError as error:
        raise DatasetLayoutError(f"{name}: {error}") from None
    return episode


def _load_episode(main: str, record: dict, index: int, schema, images: bool = True) -> EpisodeData:
    import torch

    episode_id = record.get("episode_id", index)
    episode = episode_from_group(read_group(main, episode_id), int(record.get("episode_seed", -1)),
                                 f"{main}:traj_{episode_id}")
    steps = episode.length
    if int(record.get("elapsed_steps", steps)) != steps:
        raise DatasetLayoutError(f"{main}:traj_{episode_id} has {steps} actions, its sidecar says "
                                 f"{record.get('elapsed_steps')}")
    state = episode.state_vector()[:steps]
    if schema is not None and state.shape[1] != schema.state_dim:
        raise DatasetLayoutError(f"{main}:traj_{episode_id}: observations have {state.shape[1]} state columns, the "
                                 f"schema {schema.state_dim}")
    frames = {cam: torch.from_numpy(np.ascontiguousarray(f[:steps])) for cam, f in episode.rgb().items()} if images else {}
    return EpisodeData(index=index, seed=int(episode.seed), observation_state=torch.from_numpy(state),
                       action=torch.from_numpy(episode.actions), images=frames,
                       reward=torch.from_numpy(episode.rewards),
                       done=torch.from_numpy(episode.terminated | episode.truncated),
                       success=torch.from_numpy(episode.success))
