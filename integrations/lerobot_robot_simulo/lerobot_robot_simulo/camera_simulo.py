"""``SimuloCameraConfig`` (LeRobot camera type ``simulo``) and ``SimuloCamera``: a camera of the
simulated scene, in a simulated follower's ``cameras`` dict as an OpenCV camera is in a real
one's (``lerobot/cameras/``, LeRobot 0.6.1).

``--robot.cameras='{front: {type: simulo, camera: base_camera, width: 640, height: 480}}'``: the
key (``front``) is the observation key and the dataset's ``observation.images.front``;
``camera`` names the task's camera it renders (default: the key itself); ``width`` / ``height``
default to that camera's own size; ``fps`` to the robot's control rate. A picture is rendered
when it is read, of the scene as it is then. Only a simulated follower can make these cameras.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from lerobot.cameras import CameraConfig
from lerobot.cameras.camera import Camera
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError


@CameraConfig.register_subclass("simulo")
@dataclass
class SimuloCameraConfig(CameraConfig):
    """A camera of the simulated scene (module docstring).

    Attributes:
        camera: the task's camera to render (a sensor camera of the task or one its robot
            carries, e.g. ``base_camera``, ``wrist_camera``); None: the ``cameras`` key.
        width / height: the picture's size [px]; None: the task camera's own.
        fps: [Hz]; None: the robot's control rate. Pictures are rendered on request.
    """

    camera: str | None = None


class SimuloCamera(Camera):
    """The LeRobot ``Camera`` face of one camera of the simulated follower: ``read`` renders now.

    Args:
        config: its ``SimuloCameraConfig`` (sizes filled in).
        picture: returns the current picture, uint8 ``(height, width, 3)`` RGB.
    """

    def __init__(self, config: SimuloCameraConfig, picture: Callable[[], np.ndarray]):
        super().__init__(config)
        self.config = config
        self._picture = picture
        self._connected = False

    @property
    def is_connected(self) -> bool:
        return self._connected

    @staticmethod
    def find_cameras() -> list[dict[str, Any]]:
        """None to find: simulated cameras exist only inside a simulated follower."""
        return []

    def connect(self, warmup: bool = True) -> None:
        if self._connected:
            raise DeviceAlreadyConnectedError(f"{self} is already connected")
        self._connected = True

    def read(self) -> np.ndarray:
        """uint8 ``(height, width, 3)`` RGB of the scene now.

        Raises:
            DeviceNotConnectedError: before ``connect``."""
        if not self._connected:
            raise DeviceNotConnectedError(f"{self} is not connected")
        return self._picture()

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        """``read()``: a simulated picture is always fresh."""
        return self.read()

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        """``read()``: a simulated picture is always fresh."""
        return self.read()

    def disconnect(self) -> None:
        self._connected = False
