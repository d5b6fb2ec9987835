"""simulo_envs: Gymnasium-compatible, vectorized robot-learning environments on SAPIEN 3 PhysX.

``import simulo_envs`` registers the task suite, so ``gym.make("FrankaLift-v1", num_envs=4)``
works (as does ``gym.make("simulo_envs:FrankaLift-v1")``).
"""

from simulo_envs.articulated_prop import ArticulatedProp, ArticulatedPropState
from simulo_envs.authoring import (Articulation, Capsule, Cuboid, Cylinder, Joint, Link, Material, Physics, Pose,
                                   PrimitiveShape, Sphere)
from simulo_envs.envs import BaseEnv, make
from simulo_envs.prop import MultiShapeProp, Prop, PropProtocol, PropState, PropStateProtocol
from simulo_envs.robot import Robot, RobotState
from simulo_envs.scene import Scene
from simulo_envs.sim.config import SimConfig

from simulo_envs import tasks as _tasks  # noqa: E402,F401  (registers the tasks)
from simulo_envs import vector as _vector  # noqa: E402,F401  (vector entry points for gym.make_vec)

__version__ = "0.1.0"
__all__ = [
    "Pose", "Physics", "Material", "Cuboid", "Sphere", "Cylinder", "Capsule", "PrimitiveShape",
    "Articulation", "Joint", "Link", "ArticulatedProp", "ArticulatedPropState",
    "Prop", "MultiShapeProp", "PropProtocol", "PropState", "PropStateProtocol", "Robot", "RobotState", "Scene",
    "SimConfig", "BaseEnv", "make",
]
