"""``Dataset`` and ``EpisodeData``: either dataset format, read as torch tensors for training.

``load_dataset(path)`` (``simulo_envs/datasets/__init__.py``) opens a LeRobot v3.0 dataset or an
HDF5 trajectory folder and returns a ``Dataset``: a sequence of episodes plus what they share.
Both formats read the same: the frames of an episode of ``T`` steps are ``t = 0 .. T-1``
(observation ``t`` and the action taken from it; the observation after the last step is
dropped, as LeRobot stores it), images come decoded from the videos (LeRobot; within the codec's
loss, see ``video.py``) or as stored (HDF5, lossless).

The layout of every file is checked when the dataset is opened (info, episode index, frame
table) or when an episode is first read (its video frames, its HDF5 group); a file that does not
follow it raises ``DatasetLayoutError`` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

import numpy as np
import torch

from simulo_envs.datasets.schema import DatasetSchema


@dataclass
class EpisodeData:
    """One episode as torch tensors (CPU), frames ``t = 0 .. T-1``.

    Attributes:
        index: the episode's number in the dataset.
        seed: its reset seed (``env.reset(seed=seed)`` rebuilds its initial state).
        observation_state: float32 ``(T, D)``, columns named by ``Dataset.state_names``.
        action: float32 ``(T, A)``, the env's action space (``Dataset.control_mode``), columns
            named by ``Dataset.action_names``.
        images: camera -> uint8 ``(T, H, W, 3)`` RGB (empty for state-only datasets).
        reward: float32 ``(T,)``, reward of step t (``Dataset.schema.reward_mode``).
        done: bool ``(T,)``, True at the step that ends the episode (terminated or truncated).
        success: bool ``(T,)``, the task's success after step t.
    """

    index: int
    seed: int
    observation_state: torch.Tensor
    action: torch.Tensor
    images: dict = field(default_factory=dict)
    reward: Optional[torch.Tensor] = None
    done: Optional[torch.Tensor] = None
    success: Optional[torch.Tensor] = None

    @property
    def length(self) -> int:
        """``T``, the number of frames."""
        return int(self.action.shape[0])


class Dataset:
    """A recorded dataset (see the module docstring); ``len()`` episodes, ``ds[i]`` the
    ``EpisodeData`` of episode ``i`` (read from disk on each access), iteration in order.

    Attributes:
        path: the dataset folder. ``format``: ``"lerobot"`` or ``"hdf5"``.
        schema: the ``DatasetSchema`` (env id, modes, fps, robot type, names, cameras, task).
        seeds: int64 ``(E,)`` reset seed of every episode. ``lengths``: int64 ``(E,)`` frames.
        successes: bool ``(E,)`` success at the last step of every episode.
    """

    def __init__(self, path: str, fmt: str, schema: DatasetSchema, seeds: np.ndarray, lengths: np.ndarray,
                 successes: np.ndarray, load: Callable[[int, bool], EpisodeData],
                 stats: Optional[Callable[[], dict]] = None):
        self.path, self.format, self.schema = path, fmt, schema
        self.seeds = np.asarray(seeds, dtype=np.int64)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.successes = np.asarray(successes, dtype=bool)
        self._load = load
        self._stats_source = stats
        self._stats: Optional[dict] = None

    # ------------------------------------------------------------------ what the episodes share
    @property
    def env_id(self) -> str:
        """The env that recorded the episodes (``DatasetSchema.env_id``)."""
        return self.schema.env_id

    @property
    def obs_mode(self) -> str:
        """The env's observation mode while recording."""
        return self.schema.obs_mode

    @property
    def control_mode(self) -> str:
        """The control mode the actions are in."""
        return self.schema.control_mode

    @property
    def fps(self) -> int:
        """Frames per second = the env's control frequency [Hz]."""
        return self.schema.fps

    @property
    def robot_type(self) -> str:
        """The robot's name as LeRobot's ``info.json`` records it (``so_follower``, ``panda``)."""
        return self.schema.robot_type

    @property
    def task(self) -> str:
        """The one-sentence instruction every episode carries (LeRobot's task string)."""
        return self.schema.task

    @property
    def state_names(self) -> tuple:
        """The names of ``observation.state``'s columns, in order."""
        return self.schema.state_names

    @property
    def action_names(self) -> tuple:
        """The names of ``action``'s columns, in order."""
        return self.schema.action_names

    @property
    def action_noise_std(self) -> float:
        """Standard deviation of the noise on the executed actions while recording (action
        units; 0.0: none). Above 0 the actions are the expert's clean labels, not the executed
        ones (``DatasetSchema.action_noise_std``)."""
        return self.schema.action_noise_std

    @property
    def cameras(self) -> dict:
        """Camera name -> ``(H, W, 3)``."""
        return dict(self.schema.cameras)

    @property
    def num_frames(self) -> int:
        """Frames (env steps) of every episode together."""
        return int(self.lengths.sum())

    @property
    def stats(self) -> dict:
        """Normalisation statistics over every frame: ``{feature: {stat: tensor}}`` for
        ``"observation.state"``, ``"action"``, ``"next.reward"`` and each
        ``"observation.images.<camera>"`` (stats ``min max mean std`` and quantiles ``q01 q10
        q50 q90 q99``, float32, ``(D,)`` per vector column; images per channel in [0, 1],
        ``(3, 1, 1)``; ``count`` int64 ``(1,)``). LeRobot datasets read ``meta/stats.json``;
        HDF5 datasets compute them once, from every frame, on first access
        (``simulo_envs/datasets/stats.py`` has the definitions)."""
        if self._stats is None:
            raw = self._stats_source() if self._stats_source is not None else {}
            self._stats = {f: {k: torch.as_tensor(np.asarray(v), dtype=torch.int64 if k == "count" else torch.float32)
                               for k, v in d.items()} for f, d in raw.items()}
        return self._stats

    # ------------------------------------------------------------------ episodes
    def __len__(self) -> int:
        return len(self.seeds)

    def __getitem__(self, index: int) -> EpisodeData:
        """Episode ``index`` (negative counts from the end). Raises IndexError out of range,
        DatasetLayoutError when its files do not follow the layout."""
        return self.episode(index)

    def episode(self, index: int, images: bool = True) -> EpisodeData:
        """``ds[index]``; with ``images=False`` the images are not read (nor decoded from the
        videos) and ``EpisodeData.images`` is empty."""
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"episode index must be an int, got {type(index).__name__}")
        count = len(self)
        if not -count <= index < count:
            raise IndexError(f"episode {index} out of range: the dataset has {count} episodes")
        return self._load(int(index) % count, images)

    def __iter__(self) -> Iterator[EpisodeData]:
        for i in range(len(self)):
            yield self._load(i, True)

    def concatenated(self, images: bool = False) -> dict:
        """Every frame of every episode stacked, for sampling batches: ``"observation.state"``
        ``(N, D)``, ``"action"`` ``(N, A)``, ``"next.reward"`` ``(N,)``, ``"next.done"``
        ``(N,)``, ``"episode_index"`` and ``"frame_index"`` int64 ``(N,)``, and with ``images``
        ``"observation.images.<camera>"`` uint8 ``(N, H, W, 3)`` (all decoded in memory)."""
        parts: dict[str, list] = {}
        for ep in self:
            rows = {"observation.state": ep.observation_state, "action": ep.action, "next.reward": ep.reward,
                    "next.done": ep.done, "episode_index": torch.full((ep.length,), ep.index, dtype=torch.int64),
                    "frame_index": torch.arange(ep.length, dtype=torch.int64)}
            if images:
                rows.update({f"observation.images.{cam}": frames for cam, frames in ep.images.items()})
            for key, value in rows.items():
                parts.setdefault(key, []).append(value)
        return {key: torch.cat(values) for key, values in parts.items()}

    def __repr__(self) -> str:
        return (f"Dataset({self.path!r}, format={self.format}, env_id={self.env_id}, obs_mode={self.obs_mode}, "
                f"control_mode={self.control_mode}, episodes={len(self)}, frames={self.num_frames}, fps={self.fps})")
