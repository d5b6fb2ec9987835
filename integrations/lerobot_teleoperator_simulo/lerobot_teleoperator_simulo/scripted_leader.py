"""``ScriptedLeader`` (``--teleop.type=simulo_scripted_leader``): a teleoperator that plays back
the ``action`` column of one episode of a LeRobot dataset, read with LeRobot's own
``LeRobotDataset``, as ``lerobot-replay`` reads it (``lerobot/scripts/lerobot_replay.py``,
LeRobot 0.6.1).

Its action keys are the dataset's action names (``meta/info.json``: ``features.action.names``):
a dataset recorded with an SO leader or follower gives ``shoulder_pan.pos`` ... ``gripper.pos``,
what ``so101_leader``'s ``get_action`` returns (``lerobot/teleoperators/so_leader/so_leader.py``).
Each ``get_action`` returns the next frame; after the last one it holds the last
(``at_end="hold"``) or starts over (``"loop"``). The loop that calls it sets the pace, as a
person's hand would.

LeRobot finds this distribution by its name (``register_third_party_plugins`` imports every
installed distribution named ``lerobot_teleoperator_*``: ``lerobot/utils/import_utils.py``);
``make_teleoperator_from_config`` finds ``ScriptedLeader`` from the config class's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from lerobot.datasets import LeRobotDataset, LeRobotDatasetMetadata
from lerobot.teleoperators.config import TeleoperatorConfig
from lerobot.teleoperators.teleoperator import Teleoperator
from lerobot.utils.constants import ACTION
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

AT_END = ("hold", "loop")


@TeleoperatorConfig.register_subclass("simulo_scripted_leader")
@dataclass(kw_only=True)
class ScriptedLeaderConfig(TeleoperatorConfig):
    """A leader that plays back a recorded episode.

    Attributes:
        dataset_root: the LeRobot dataset's folder.
        repo_id: its repository id (LeRobot's name for it; only its folder is read).
        episode: the episode whose actions are played.
        at_end: ``"hold"`` the last action, or ``"loop"`` back to the first.
    """

    dataset_root: str
    repo_id: str = "local/scripted_leader"
    episode: int = 0
    at_end: str = "hold"

    def __post_init__(self) -> None:
        if self.at_end not in AT_END:
            raise ValueError(f"at_end must be one of {list(AT_END)}, got {self.at_end!r}")


class ScriptedLeader(Teleoperator):
    """Plays back the actions of ``config.episode`` of ``config.dataset_root`` (module docstring).

    Raises:
        ValueError: at construction, a dataset without an ``action`` feature or an episode it
            does not hold.
    """

    config_class = ScriptedLeaderConfig
    name = "simulo_scripted_leader"

    def __init__(self, config: ScriptedLeaderConfig):
        super().__init__(config)
        self.config = config
        meta = LeRobotDatasetMetadata(config.repo_id, root=config.dataset_root)
        if ACTION not in meta.features:
            raise ValueError(f"{config.dataset_root} has no {ACTION!r} feature to play back")
        if not 0 <= config.episode < meta.total_episodes:
            raise ValueError(f"episode {config.episode}: {config.dataset_root} holds episodes "
                             f"0..{meta.total_episodes - 1}")
        self.names = list(meta.features[ACTION]["names"])
        self._actions = None
        self.frame = 0
        """The index of the next frame ``get_action`` returns."""

    @cached_property
    def action_features(self) -> dict[str, type]:
        return {name: float for name in self.names}

    @cached_property
    def feedback_features(self) -> dict:
        return {}

    @property
    def is_connected(self) -> bool:
        return self._actions is not None

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        """Read the episode's actions."""
        dataset = LeRobotDataset(self.config.repo_id, root=self.config.dataset_root, episodes=[self.config.episode])
        column = dataset.select_columns(ACTION)
        self._actions = [[float(v) for v in column[i][ACTION]] for i in range(dataset.num_frames)]
        self.frame = 0

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Nothing to calibrate."""

    def configure(self) -> None:
        """Nothing to configure."""

    @check_if_not_connected
    def get_action(self) -> dict[str, float]:
        """The next recorded action, ``{name: value}`` (module docstring)."""
        n = len(self._actions)
        i = self.frame % n if self.config.at_end == "loop" else min(self.frame, n - 1)
        self.frame += 1
        return dict(zip(self.names, self._actions[i]))

    def send_feedback(self, feedback: dict) -> None:
        """A scripted leader has no motors to drive: ignored."""

    @check_if_not_connected
    def disconnect(self) -> None:
        self._actions = None
