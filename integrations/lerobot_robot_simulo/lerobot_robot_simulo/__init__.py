"""The simulated SO follower arms as LeRobot robots. Importing the package registers the robot
types ``simulo_so101_follower`` and ``simulo_so100_follower`` and the camera type ``simulo``
(LeRobot's commands import it themselves: ``register_third_party_plugins``)."""

from lerobot_robot_simulo.camera_simulo import SimuloCamera, SimuloCameraConfig
from lerobot_robot_simulo.config_simulo_follower import (SimuloFollowerConfig, SimuloSO100FollowerConfig,
                                                         SimuloSO101FollowerConfig)
from lerobot_robot_simulo.simulo_follower import SimuloFollower, SimuloSO100Follower, SimuloSO101Follower

__all__ = ["SimuloFollowerConfig", "SimuloSO101FollowerConfig", "SimuloSO100FollowerConfig", "SimuloFollower",
           "SimuloSO101Follower", "SimuloSO100Follower", "SimuloCameraConfig", "SimuloCamera"]
