"""``SimuloFollower``: a LeRobot ``Robot`` whose arm and cameras are a task's scene in simulation
(``simulo_envs.lerobot.SimFollower``), with the keys, units and ranges of LeRobot's SO follower.

What follows LeRobot 0.6.1's ``lerobot/robots/so_follower/so_follower.py``:

- ``observation_features``: ``shoulder_pan.pos`` ... ``wrist_roll.pos`` (degrees),
  ``gripper.pos`` (0 closed to 100 open) as ``float``, then each camera as ``(height, width, 3)``;
  ``action_features``: the six ``*.pos`` keys. A dataset recorded on it has the features a
  real SO follower's has, and ``robot_type`` ``so_follower`` (``SOFollower.name``), so the two
  merge and a policy trained on one runs on the other.
- ``send_action``: with ``max_relative_target`` set, each target is capped to that distance from
  the present position by LeRobot's own ``ensure_safe_goal_position``, keyed by motor name
  (``shoulder_pan`` ...), as the real follower does; then targets beyond the joint limits are
  clipped to them (the real arm's servos stop at their calibrated range). Returns the targets
  applied. An action whose keys are not exactly the six raises ``ValueError`` naming the missing
  and unexpected ones, before anything moves.
- ``get_observation``: the joints, then every camera read (rendered now).

Episodes: ``connect`` starts the first one (``seed``). LeRobot's recording loops
(``lerobot-record``: ``lerobot/scripts/lerobot_record.py``; ``lerobot-rollout
--strategy.type=episodic``: ``lerobot/rollout/strategies/episodic.py``) give a robot no reset
call, but announce each phase through ``log_say`` (``logging.info`` on the root logger):
"Recording episode N" before episode N, "Reset the environment" before the reset phase
(``record_cues.py`` listens). At "Reset the environment" the scene starts a new episode (the
task's reset: new object poses, the arm at rest), so that the person sees it during the reset
phase; at "Recording episode N" a scene used since its last reset is reset again. The seed and
the task's success (reported at any step of the recorded episode) of each episode are logged,
and written into the dataset when ``dataset_root`` is set. ``reset()`` starts an episode from
Python.
"""

from __future__ import annotations

import logging
from functools import cached_property

from lerobot.robots.robot import Robot
from lerobot.robots.so_follower import SOFollower
from lerobot.robots.utils import ensure_safe_goal_position
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

from lerobot_robot_simulo.camera_simulo import SimuloCamera, SimuloCameraConfig
from lerobot_robot_simulo.config_simulo_follower import (SimuloFollowerConfig, SimuloSO100FollowerConfig,
                                                         SimuloSO101FollowerConfig)
from lerobot_robot_simulo.record_cues import RecordCues
from simulo_envs.lerobot import write_episode_outcomes

logger = logging.getLogger(__name__)


class SimuloFollower(Robot):
    """A simulated SO follower arm (module docstring); ``config.make_follower()`` is its scene."""

    config_class = SimuloFollowerConfig
    name = SOFollower.name

    def __init__(self, config: SimuloFollowerConfig):
        super().__init__(config)
        self.config = config
        self.sim = config.make_follower()
        self.cameras = {cam.name: SimuloCamera(SimuloCameraConfig(camera=cam.camera, width=cam.width, height=cam.height,
                                                                  fps=config.fps),
                                               picture=lambda name=cam.name: self.sim.picture(name))
                        for cam in self.sim.cameras}
        self._cues = RecordCues()
        self.outcomes: dict[int, dict] = {}
        """Dataset episode index -> ``{"seed": int, "success": bool}`` of the episodes recorded."""
        self._recording = None  # the dataset episode index being recorded
        self._fresh = False     # the scene was reset at a cue and waits for its episode

    # ------------------------------------------------------------------ features
    @cached_property
    def observation_features(self) -> dict[str, type | tuple]:
        return {**{name: float for name in self.sim.names},
                **{cam.name: (cam.height, cam.width, 3) for cam in self.sim.cameras}}

    @cached_property
    def action_features(self) -> dict[str, type]:
        return {name: float for name in self.sim.names}

    # ------------------------------------------------------------------ connection
    @property
    def is_connected(self) -> bool:
        return self.sim.is_open

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        """Build the scene and start the first episode; listen to the recording loop's cues."""
        self.sim.open()
        for camera in self.cameras.values():
            camera.connect()
        self._cues.attach()
        self._fresh = True
        logger.info(f"{self} connected: {self.sim.task}, episode seed {self.sim.seed}")

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Nothing to calibrate: the simulated joints read in the follower's units."""

    def configure(self) -> None:
        """Nothing to configure on simulated servos."""

    @check_if_not_connected
    def disconnect(self) -> None:
        """Close the episode being recorded, write the outcomes (``dataset_root``) and the
        trace (``trace_path``), close the scene."""
        self._cues.detach()
        self._close_episode()
        try:
            if self.config.dataset_root is not None and self.outcomes:
                written = write_episode_outcomes(self.config.dataset_root, self.outcomes, skip_unknown=True)
                logger.info(f"{self}: seed and success of episodes {written} written to {self.config.dataset_root}")
            if self.config.trace_path is not None:
                self.sim.save_trace(self.config.trace_path)
        finally:
            for camera in self.cameras.values():
                camera.disconnect()
            self.sim.close()

    # ------------------------------------------------------------------ episodes
    def reset(self, seed: int | None = None) -> int:
        """Start a new episode of the task (``seed``: None, the next of the session's). Returns its seed."""
        self._close_episode()
        self._recording, self._fresh = None, False
        return self.sim.reset(seed)

    def _close_episode(self) -> None:
        if self._recording is not None:
            self.outcomes[self._recording] = {"seed": self.sim.seed, "success": bool(self.sim.episode_success)}
            logger.info(f"{self}: episode {self._recording}: seed {self.sim.seed}, "
                        f"task success {self.sim.episode_success}")
            self._recording = None

    def _apply_cues(self) -> None:
        for cue, episode in self._cues.take():
            if cue == RecordCues.RESET:
                self._close_episode()
                self.sim.reset()
                self._fresh = True
            else:  # a recorded episode starts
                self._close_episode()
                if not self._fresh:
                    self.sim.reset()
                self._recording, self._fresh = episode, False

    # ------------------------------------------------------------------ the loop
    @check_if_not_connected
    def get_observation(self) -> dict:
        self._apply_cues()
        return self.sim.observe()

    @check_if_not_connected
    def send_action(self, action: dict) -> dict:
        """Joint targets in the follower's units; returns those applied (clipped: module docstring).

        Raises:
            ValueError: keys other than the six ``*.pos``, or a NaN or infinite value.
            TypeError: a value that is not a number.
        """
        self._apply_cues()
        goal = dict(zip(self.sim.names, self.sim.action_vector(action).tolist()))
        if self.config.max_relative_target is not None:
            present = dict(zip(self.sim.names, self.sim.joint_vector().tolist()))
            capped = ensure_safe_goal_position({k.removesuffix(".pos"): (goal[k], present[k]) for k in goal},
                                               self.config.max_relative_target)
            goal = {f"{motor}.pos": value for motor, value in capped.items()}
        return self.sim.act(goal)


class SimuloSO101Follower(SimuloFollower):
    """The simulated SO-101 follower (``--robot.type=simulo_so101_follower``)."""

    config_class = SimuloSO101FollowerConfig


class SimuloSO100Follower(SimuloFollower):
    """The simulated SO-100 follower (``--robot.type=simulo_so100_follower``)."""

    config_class = SimuloSO100FollowerConfig
