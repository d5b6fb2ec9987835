"""``Follower``: which recorded step each converted episode is at, and what it commands.

A control-mode conversion (``replay.replay_episodes`` with a source env) re-simulates a recorded
episode in a target env whose controller may not be able to do what the recorded one did in one
step. The case that matters is a delta joint mode (``pd_joint_delta_pos``): its targets are the
*measured* joint positions plus at most ``upper`` (0.1 rad on the Panda) per step, while the
experts' Cartesian controller (``pd_ee_delta_pos``) sets inverse-kinematics targets that lead the
measured joints by up to 0.46 rad during fast moves (FrankaPickPlace-v1, measured). Such a step
cannot be reproduced: a PD drive aimed 0.1 rad ahead pulls with a fraction of the force.

So each recorded step ``t`` (the recorded state ``q[t]`` -> ``q[t + 1]``) is driven one of two ways:

- **exact**, one target step: when the target env's followed joints are within ``REACHED`` of the
  source replay's ``q[t]`` and the recorded drive targets are within one step of the target
  mode's bounds, the target env gets the recorded drive targets themselves (the same physics as
  the recording, given the same state). Absolute joint modes (``pd_joint_pos``) always take this
  way, so their conversions keep the recorded trajectory step for step.
- **following the recorded state**, as many target steps as it takes (at most
  ``MAX_FOLLOW_STEPS``): the followed joints are driven towards ``q[t + 1]`` (each step moving
  by at most the mode's bound) until they are within ``REACHED`` of it; the other parts (the
  gripper: absolute targets) get the recorded drive targets of step ``t``. The converted
  episode therefore takes extra steps where the recording moved faster than the target mode can,
  and is longer than the recorded one.

Aiming at the recorded *drive targets* with extra steps does not work: the targets lead the
recorded motion, so the converted arm, given time, goes past ``q[t + 1]`` along a joint-space
line the recording never took (the linearised IK step), and never comes within reach of the
recorded states again (FrankaPickPlace-v1: 9 of 20 episodes succeed that way, 16 to 19 of 20
following the states).

A retry of an episode that failed (its even-numbered tries, ``by_targets``) follows the recorded
drive targets instead: each recorded step's targets for at most ``TARGETS_MAX_STEPS`` steps, or
until all joints are within ``TARGETS_REACHED`` of ``q[t + 1]``. That is closer to the recorded
speed (though at most ~0.7 rad/s per Panda joint in ``pd_joint_delta_pos``, against the experts'
2.6), which keeps some episodes whose success depends on speed (FrankaPush-v1: the pushed cube
slides on at 0.4 to 1.1 m/s after the stroke).

After the last recorded step the followed joints are held at the recorded final state for at
most ``SETTLE_STEPS`` more steps, unless the env ends the episode first (the experts' episodes
end at the step that reaches success; a conversion reaching it a few millimetres short may get
there while settling); then the episode is truncated. ``drift`` records, per env, the largest
distance [m] between an object's position in the target env and in the source replay at the
same recorded step (checked each time a recorded step is completed).
"""

from __future__ import annotations

import numpy as np

REACHED = 0.01
"""Joint distance [rad, m] (largest over the followed joints) at which the target env counts as
being in a recorded state. 0.05 (a joint-space error of ~1 cm at the TCP) kept 15 to 16 of 20
FrankaPickPlace-v1 episodes; 0.01 keeps 19 of 20 (the episode lengths grow by a third)."""
MAX_FOLLOW_STEPS = 30
"""Most target steps spent reaching one recorded state (a state the target env cannot reach,
e.g. one held by contact forces the target mode cannot produce, is left after that)."""
TARGETS_REACHED = 0.05
"""Following the drive targets (a retry): joint distance [rad, m] (largest over all joints) to
the source replay's ``q[t + 1]`` at which the next recorded step's targets are taken."""
TARGETS_MAX_STEPS = 3
"""Following the drive targets (a retry): most target steps per recorded step (ManiSkill's
converter tries each step up to 4 times)."""
SETTLE_STEPS = 10
"""Target steps after the last recorded step (holding the recorded final state) before the
converted episode is truncated, if the env has not ended it."""


class Follower:
    """Per env slot of a batched target env: the recorded step its converted episode is at.

    Args:
        converter: the target env's ``convert.ActionConverter`` (its ``followed`` joints and
            ``reachable`` test).
        num_envs: N.
    """

    def __init__(self, converter, num_envs: int):
        self.converter = converter
        self.followed = converter.followed
        self.step = np.zeros(num_envs, dtype=np.int64)  # recorded steps completed
        self.spent = np.zeros(num_envs, dtype=np.int64)  # target steps spent on the current one
        self.exact = np.zeros(num_envs, dtype=bool)  # how the current recorded step is driven
        self.drift = np.zeros(num_envs, dtype=np.float64)

    def begin(self, env_ids) -> None:
        """A new episode starts in ``env_ids``."""
        self.step[env_ids] = self.spent[env_ids] = 0
        self.exact[env_ids] = False
        self.drift[env_ids] = 0.0

    def by_targets(self, rec) -> bool:
        """Whether ``rec``'s try follows the recorded drive targets (its even-numbered tries)
        rather than the recorded states (odd-numbered tries: the first)."""
        return rec.attempt % 2 == 0

    def targets(self, slots: list, live: np.ndarray, qpos: np.ndarray) -> np.ndarray:
        """float32 ``(N, dof)``: the drive targets env ``i`` in ``live`` is sent towards now
        (``slots[i]``: its ``replay.Recorded`` with ``targets`` and ``source_qpos``; ``qpos``
        ``(N, dof)``: the target env's joint positions); other rows hold their drive targets."""
        out = self.converter.hold_targets()
        for i in live:
            rec, t = slots[i], int(self.step[i])
            if self.by_targets(rec):
                out[i] = rec.targets[min(t, rec.length - 1)]
                continue
            if t >= rec.length:  # settling: the recorded final state
                out[i] = rec.targets[-1]
                out[i, self.followed] = rec.source_qpos[-1, self.followed]
                continue
            if self.spent[i] == 0:
                self.exact[i] = (self._near(qpos[i], rec.source_qpos[t])
                                 and bool(self.converter.reachable(rec.targets[t][None], qpos[i][None])[0]))
            out[i] = rec.targets[t]
            if not self.exact[i]:
                out[i, self.followed] = rec.source_qpos[t + 1, self.followed]
        return out

    def advance(self, slots: list, live: np.ndarray, qpos: np.ndarray, positions: np.ndarray) -> None:
        """Count the target step just taken by ``live``: its recorded step is completed once it
        was exact, the recorded state is reached, or MAX_FOLLOW_STEPS were spent on it.
        ``positions``: float (N, K, 3), the target env's object positions (``drift``)."""
        for i in live:
            rec, t = slots[i], int(self.step[i])
            self.spent[i] += 1
            if t >= rec.length:
                continue
            if self.by_targets(rec):
                done = (float(np.abs(qpos[i] - rec.source_qpos[t + 1]).max()) <= TARGETS_REACHED
                        or self.spent[i] >= TARGETS_MAX_STEPS)
            else:
                done = (self.exact[i] or self._near(qpos[i], rec.source_qpos[t + 1])
                        or self.spent[i] >= MAX_FOLLOW_STEPS)
            if done:
                if rec.source_positions is not None and positions.shape[1]:
                    gap = np.linalg.norm(positions[i] - rec.source_positions[t + 1], axis=-1).max()
                    self.drift[i] = max(self.drift[i], float(gap))
                self.step[i] += 1
                self.spent[i] = 0

    def exhausted(self, slots: list) -> np.ndarray:
        """bool (N,): envs past their last recorded step and SETTLE_STEPS more."""
        out = np.zeros(len(self.step), dtype=bool)
        for i, rec in enumerate(slots):
            out[i] = rec is not None and self.step[i] >= rec.length and self.spent[i] >= SETTLE_STEPS
        return out

    def _near(self, q: np.ndarray, recorded: np.ndarray) -> bool:
        return not len(self.followed) or float(np.abs(q[self.followed] - recorded[self.followed]).max()) <= REACHED
