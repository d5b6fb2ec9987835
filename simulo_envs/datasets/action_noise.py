"""``ActionNoise``: Gaussian noise on the actions an expert executes while it is recorded (DART).

DART (Laskey, Lee, Fox, Dragan and Goldberg, "DART: Noise Injection for Robust Imitation
Learning", CoRL 2017): a policy cloned from an expert's demonstrations drifts into states the
expert never visited and cannot correct itself there. Recording the expert while its actions
are perturbed puts such states in the data, labelled with what the expert does from them. So,
at every recorded step:

- the env executes ``clip(a + e, low, high)``: ``a`` the expert's action, ``e`` Gaussian noise
  of standard deviation ``std`` (in the action's own units; the experts' ``pd_ee_delta_pos``
  takes actions in [-1, 1]) on the noised columns and 0 on the others, ``low`` / ``high`` the
  env's action space bounds;
- the dataset records ``a``, the expert's clean action, as the label. The executed actions are
  not stored, so replaying a dataset's actions does not reproduce its episodes; its env states
  do (``replay.py --use-env-states``).

Which columns get noise: every controller part's except the gripper's (a part driving only the
agent's ``gripper_joints``). The gripper's action is an absolute open/close command, not a step:
noise there moves neither the arm nor the object into unseen states; it can only loosen a grasp,
which the pick experts never try again (they close once, then lift; the lift expert opens and
approaches again after a missed grasp).

The noise is reproducible: episode ``k``'s noise comes from a generator seeded with
``(NOISE_STREAM, seed_k)``, ``seed_k`` the episode's reset seed, one draw per step, so the same
seed gives the same noise in any batch slot or worker process. ``NOISE_STREAM`` keeps the
stream apart from the env's own draws from that seed.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

NOISE_STREAM = 0xDA27
"""First word of every episode's noise seed ``(NOISE_STREAM, reset seed)``."""


def check_noise_std(std) -> float:
    """``std`` as a float after checking it is a real number, finite and >= 0.

    Raises:
        ValueError: anything else (a bool, a string, a negative number, NaN, inf).
    """
    if isinstance(std, bool) or not isinstance(std, (int, float, np.integer, np.floating)):
        raise ValueError(f"action noise std must be a number >= 0 (in the action's units), got {std!r}")
    value = float(std)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"action noise std must be finite and >= 0 (in the action's units), got {value}")
    return value


def noise_units(column_names: Sequence[str]) -> str:
    """The unit of the noise's ``std`` on the action columns ``column_names``: ``"degrees"`` where
    every one is an arm's joint target in its driver's units (``<motor>.pos``, LeRobot's SO
    followers: ``schema.NAME_UNITS``), else ``"action units"`` (the control mode's own)."""
    return "degrees" if column_names and all(name.endswith(".pos") for name in column_names) else "action units"


def noised_columns(agent) -> np.ndarray:
    """int64 ``(k,)``: the action columns of ``agent``'s current controller that get noise (every
    part's but those that drive only the agent's ``gripper_joints``), in action order."""
    controller = agent.controller
    grippers = set(getattr(agent, "gripper_joints", ()) or ())
    columns: list[int] = []
    for name, part in controller.controllers.items():
        joints = set(getattr(part.config, "joint_names", ()) or ())
        if joints and joints <= grippers:
            continue
        start, stop = controller.slices[name]
        columns += range(start, stop)
    return np.asarray(columns, dtype=np.int64)


def episode_generator(seed: int) -> np.random.Generator:
    """The noise generator of the episode reset with ``seed`` (an int >= 0)."""
    return np.random.default_rng([NOISE_STREAM, int(seed)])


class ActionNoise:
    """Per env slot of a batched env, the noise of the episode it runs (module docstring).

    Args:
        env: the in-process batched env (``BaseEnv``, wrapped or not) the actions go to.
        std: the noise's standard deviation, action units (``check_noise_std``).

    Attributes:
        std: as given. ``columns``: int64 ``(k,)``, the noised action columns.
        low / high: float32 ``(A,)``, the env's action space bounds the executed actions are
            clipped to.

    Raises:
        ValueError: a bad ``std``.
    """

    def __init__(self, env, std: float):
        self.std = check_noise_std(std)
        base = env.unwrapped
        space = base.single_action_space
        self.low = np.asarray(space.low, dtype=np.float32)
        self.high = np.asarray(space.high, dtype=np.float32)
        self.columns = noised_columns(base.agent)
        self._generators: list = [None] * base.num_envs

    def begin(self, env_ids: Sequence[int], seeds: Sequence[int]) -> None:
        """Episodes reset with ``seeds`` start in ``env_ids`` (one seed each): their noise
        starts again from the seed's generator."""
        for i, seed in zip(env_ids, seeds):
            self._generators[int(i)] = episode_generator(seed)

    def noise(self, active: np.ndarray) -> np.ndarray:
        """float32 ``(N, A)``: the next step's noise, one draw per env where ``active`` (bool
        ``(N,)``), zeros elsewhere and in the columns that get none."""
        out = np.zeros((len(self._generators), len(self.low)), dtype=np.float32)
        for i in np.flatnonzero(active):
            out[i, self.columns] = self._generators[i].normal(0.0, self.std, size=len(self.columns))
        return out

    def apply(self, action: torch.Tensor, active: np.ndarray) -> torch.Tensor:
        """The actions to execute: ``action`` (float32 ``(N, A)``, the expert's) plus the next
        noise (``noise(active)``), clipped to the action space; a new tensor on ``action``'s
        device. Envs not ``active`` get their action unchanged (clipped)."""
        clean = action.detach().cpu().numpy().astype(np.float32)
        executed = np.clip(clean + self.noise(active), self.low, self.high)
        return torch.from_numpy(executed).to(action.device)
