"""FrankaLiftMixed-v1: FrankaLift-v1 with a different object per env (a heterogeneous scene).

The object is a ``MultiShapeProp``: a 0.05 m cube, an upright cylinder (radius 0.025 m,
height 0.05 m) or a sphere (radius 0.025 m), all 0.05 kg and spawned resting on the ground at
(0.5, 0, half height) env-local. The scene's clone plan assigns the variants: with the default
``CloneCfg`` ("sequential") env ``i`` gets variant ``i % 3`` (cube, cylinder, sphere); pass
``clone_cfg=CloneCfg(clone_strategy="random", seed=...)`` to draw them. Randomisation, success
(the object's centre at least 0.10 m above its own spawn height), reward and observations are
FrankaLift-v1's, so the scripted ``LiftExpert`` runs unchanged.
"""

from __future__ import annotations

from simulo_envs.authoring import Cuboid, Cylinder, Material, Physics, Pose, Sphere
from simulo_envs.envs.registration import register_env
from simulo_envs.prop import MultiShapeProp
from simulo_envs.tasks.franka_lift import FrankaLiftConfig, FrankaLiftEnv


@register_env("FrankaLiftMixed-v1", max_episode_steps=FrankaLiftConfig.max_episode_steps)
class FrankaLiftMixedEnv(FrankaLiftEnv):
    """Lift a cube, a cylinder or a sphere, one per env (see the module docstring)."""

    def _load_scene(self, options: dict) -> None:
        cfg = self.cfg
        half = cfg.block_size / 2
        pose = Pose(position=[cfg.spawn_x, cfg.spawn_y, half])
        physics = Physics.rigid(mass=cfg.block_mass)
        self.scene.add_ground()
        self.block = MultiShapeProp("Object", [
            Cuboid("Cube", (cfg.block_size,) * 3, pose, physics, Material(color=(0.85, 0.15, 0.1))),
            Cylinder("Cylinder", half, cfg.block_size, pose, physics, Material(color=(0.1, 0.45, 0.85))),
            Sphere("Sphere", half, pose, physics, Material(color=(0.2, 0.7, 0.25))),
        ])
        self.scene.add(self.block, at="/World/Object")
