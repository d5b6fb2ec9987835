"""Demonstrations in memory, checked before training, and the windows a policy trains on.

``Demonstrations`` holds episodes as torch tensors with the layout of ``PolicySpec``:

====================  ===========  ====================  ==========================================
field                 dtype        shape                 meaning
====================  ===========  ====================  ==========================================
``Episode.state``     float32      (T, state_dim)        policy state input at steps 0 .. T-1
``Episode.actions``   float32      (T, action_dim)       action taken at steps 0 .. T-1
``Episode.image``     uint8        (T, 3 * K, H, W)      the K cameras' images (``PolicySpec.cameras``,
                                                         stacked on the channel axis) at steps
                                                         0 .. T-1 (rgb only)
``Episode.seed``      int or None                        the episode's reset seed, when known
``Episode.other``     float32      (T, P) or None        the state columns the policy does not read
                                                         (``PolicySpec.other_columns``; training
                                                         targets only)
====================  ===========  ====================  ==========================================

``simulo_envs.imitation.datasets_io.load_demonstrations`` fills it from a dataset on disk;
``Demonstrations.validate`` refuses, before anything trains, what cannot be trained on: fewer than
two episodes, an empty episode, non-finite values (named by episode, step and column), widths
that disagree with the spec.

``Windows`` cuts every episode into the (observation history, action chunk) pairs of Diffusion
Policy (Chi et al., RSS 2023, section IV-C): for each step ``t`` the ``obs_horizon`` observations
ending at ``t`` and the ``pred_horizon`` actions starting at ``t - obs_horizon + 1``; indices
before the first step repeat step 0, indices past the last repeat the last step (the paper's
padding). ``obs_horizon = pred_horizon = 1`` gives plain behaviour cloning's (obs, action) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import torch

from simulo_envs.imitation.spec import PolicySpec

__all__ = ["Episode", "Demonstrations", "DemonstrationError", "Windows"]


class DemonstrationError(ValueError):
    """Demonstrations that cannot be trained on (or do not fit the env); the message says why."""


@dataclass
class Episode:
    """One demonstration (layout in the module docstring)."""

    state: torch.Tensor
    actions: torch.Tensor
    image: Optional[torch.Tensor] = None
    seed: Optional[int] = None
    other: Optional[torch.Tensor] = None

    def __len__(self) -> int:
        return int(self.actions.shape[0])


@dataclass
class Demonstrations:
    """Episodes of one task, one observation kind and one control mode.

    ``source``: where they came from (a dataset path), for messages and the checkpoint.
    """

    spec: PolicySpec
    episodes: list[Episode]
    source: str = "memory"
    state_names: Optional[list[str]] = field(default=None)

    @property
    def seeds(self) -> list[int]:
        """The episodes' reset seeds that are known."""
        return [e.seed for e in self.episodes if e.seed is not None]

    @property
    def frames(self) -> int:
        """Frames (env steps) of every episode together."""
        return sum(len(e) for e in self.episodes)

    def subset(self, count: int) -> "Demonstrations":
        """The first ``count`` episodes (for a study of success against the number of demos).

        Raises:
            DemonstrationError: fewer than ``count`` episodes.
        """
        if count > len(self.episodes):
            raise DemonstrationError(f"{self.source} has {len(self.episodes)} episodes, {count} were asked for")
        return Demonstrations(self.spec, self.episodes[:count], self.source, self.state_names)

    def validate(self) -> None:
        """Check everything training relies on; nothing is changed.

        Raises:
            DemonstrationError: fewer than 2 episodes; an episode without steps; tensors of the wrong
                dtype or width, or of different lengths within an episode; a NaN or infinite value
                (the first one is named: episode, step, field, column).
        """
        where, spec = self.source, self.spec
        if len(self.episodes) < 2:
            raise DemonstrationError(f"{where} holds {len(self.episodes)} episode(s): training needs at least 2 "
                                     f"(one episode shows one start state; a policy cannot generalise from it)")
        for index, episode in enumerate(self.episodes):
            name = f"{where}, episode {index}"
            if len(episode) == 0:
                raise DemonstrationError(f"{name} has no steps")
            _check(episode.actions, (len(episode), spec.action_dim), torch.float32, f"{name}: actions")
            _check(episode.state, (len(episode), spec.state_dim), torch.float32, f"{name}: state")
            if spec.obs == "rgb":
                if episode.image is None:
                    raise DemonstrationError(f"{name} has no images; an rgb policy needs cameras {list(spec.cameras)}")
                _check(episode.image, (len(episode), 3 * len(spec.cameras), *spec.image_size), torch.uint8,
                       f"{name}: image")
            if episode.other is not None:
                _check(episode.other, (len(episode), len(spec.other_columns)), torch.float32, f"{name}: other state")
            for label, values in (("actions", episode.actions), ("state", episode.state)):
                bad = ~torch.isfinite(values)
                if bad.any():
                    step, column = (int(v) for v in bad.nonzero()[0])
                    column_name = self.state_names[column] if label == "state" and self.state_names else column
                    raise DemonstrationError(f"{name}: {label} holds {float(values[step, column])} at step {step}, "
                                             f"column {column_name} ({int(bad.sum())} non-finite value(s)); "
                                             f"training not started")


def _check(tensor, shape: tuple, dtype: torch.dtype, name: str) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise DemonstrationError(f"{name} is a {type(tensor).__name__}, not a torch tensor")
    if tuple(tensor.shape) != tuple(shape):
        raise DemonstrationError(f"{name} has shape {tuple(tensor.shape)}, expected {tuple(shape)}")
    if tensor.dtype != dtype:
        raise DemonstrationError(f"{name} has dtype {tensor.dtype}, expected {dtype}")


class Windows:
    """Every training sample of ``demos``: ``len(self)`` windows, gathered by index.

    Args:
        demos: validated demonstrations.
        obs_horizon / pred_horizon: observations per sample, actions per sample (>= 1).

    Attributes:
        state: float32 (F, state_dim), actions float32 (F, action_dim), image uint8 (F, 3 * K, H, W)
            or None, other float32 (F, P) or None: every episode's frames, concatenated.
    """

    def __init__(self, demos: Demonstrations, obs_horizon: int, pred_horizon: int):
        episodes = demos.episodes
        self.state = torch.cat([e.state for e in episodes])
        self.actions = torch.cat([e.actions for e in episodes])
        self.image = torch.cat([e.image for e in episodes]) if demos.spec.obs == "rgb" else None
        self.other = (torch.cat([e.other for e in episodes])
                      if episodes and all(e.other is not None for e in episodes) else None)
        obs_index, action_index, start = [], [], 0
        for episode in episodes:
            length = len(episode)
            t = torch.arange(length).unsqueeze(1)
            obs_steps = (t - obs_horizon + 1 + torch.arange(obs_horizon)).clamp(0, length - 1)
            action_steps = (t - obs_horizon + 1 + torch.arange(pred_horizon)).clamp(0, length - 1)
            obs_index.append(obs_steps + start)
            action_index.append(action_steps + start)
            start += length
        self.obs_index = torch.cat(obs_index)          # (M, obs_horizon) frame indices
        self.action_index = torch.cat(action_index)    # (M, pred_horizon)

    def __len__(self) -> int:
        return int(self.obs_index.shape[0])

    def batch(self, rows: torch.Tensor, images: bool = True) -> dict[str, torch.Tensor]:
        """Samples ``rows`` (int64 (B,)): ``{"state": (B, To, D), "actions": (B, Tp, A),
        "frames": int64 (B, To)}`` (the observations' indices into ``state``/``image``), for rgb
        ``"image": uint8 (B, To, 3 * K, H, W)`` (unless ``images`` is False: a policy reading cached
        image features needs only ``frames``), and ``"other": (B, To, P)`` when the episodes carry
        the state columns the policy does not read."""
        obs = self.obs_index[rows]
        out = {"state": self.state[obs], "actions": self.actions[self.action_index[rows]], "frames": obs}
        if self.image is not None and images:
            out["image"] = self.image[obs]
        if self.other is not None:
            out["other"] = self.other[obs]
        return out
