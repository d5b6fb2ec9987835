"""``RecordCues``: the phases of LeRobot's recording loops, from what they announce.

``lerobot-record`` (``lerobot/scripts/lerobot_record.py: record``) and ``lerobot-rollout
--strategy.type=episodic`` (``lerobot/rollout/strategies/episodic.py``), LeRobot 0.6.1, tell
the operator each phase with ``log_say`` (``lerobot/utils/utils.py``), which logs the sentence
with ``logging.info`` on the root logger before speaking it:

=================================  ======================================================
sentence                           when
=================================  ======================================================
``Recording episode {N}``          before episode ``N`` (the dataset's episode index) is
                                   recorded; again with the same ``N`` after a re-record
``Reset the environment``          after an episode, before the reset phase
=================================  ======================================================

A ``logging.Handler`` on the root logger hears them; nothing else in LeRobot's loops tells a
robot where an episode starts or ends (a ``Robot`` has no reset call). The handler only queues
the cues: the robot acts on them at its next call, on the thread and under the lock of its
driver (``lerobot/rollout/robot_wrapper.py``).
"""

from __future__ import annotations

import logging
import re
import threading

_EPISODE = re.compile(r"Recording episode (\d+)")


class RecordCues(logging.Handler):
    """Queues ``(RESET, None)`` and ``(EPISODE, N)`` as LeRobot announces them (module docstring)."""

    RESET = "reset"
    EPISODE = "episode"
    SENTENCES = ("Recording episode {N}", "Reset the environment")

    def __init__(self):
        super().__init__(level=logging.INFO)
        self._queue: list[tuple[str, int | None]] = []
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if record.name != "root" or not isinstance(record.msg, str):
            return
        message = record.msg if not record.args else record.getMessage()
        match = _EPISODE.fullmatch(message)
        cue = (self.EPISODE, int(match.group(1))) if match else (self.RESET, None) if message == self.SENTENCES[1] else None
        if cue is not None:
            with self._lock:
                self._queue.append(cue)

    def take(self) -> list[tuple[str, int | None]]:
        """The cues heard since the last call, in order."""
        with self._lock:
            cues, self._queue = self._queue, []
        return cues

    def attach(self) -> None:
        """Listen on the root logger (again a no-op)."""
        root = logging.getLogger()
        if self not in root.handlers:
            root.addHandler(self)

    def detach(self) -> None:
        logging.getLogger().removeHandler(self)
        self.take()
