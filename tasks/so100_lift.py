"""SO100Lift-v1: lift a cube with LeRobot's SO-100 arm.

Goal: grasp the 25 mm, 10 g cube (sized for the SO-100's jaws, as ManiSkill's SO-100 tasks) and
raise its centre at least ``lift_height`` (0.05 m) above its spawn height. The arm's base sits at
the env origin facing +x (``agents/so100.py``); the cube spawns at (0.265, 0, 0.0125) env-local,
under the TCP's rest position. Instruction: "Lift the red cube." (the episode's colour).

Randomisation per reset env (env-local metres): cube x in 0.265 +- 0.03, y in 0 +- 0.08, upright,
zero velocity: the region where the arm grasps from above with its jaw within about 15 deg of
vertical; then its colour, one of red, green, blue, yellow (images only); the robot returns to
its rest pose at rest.

Variants (``variant=``, ``tasks/so_suite.py``): ``"train"`` (the above, no distractor);
``"heldout"`` changes every axis: colours orange, purple, cyan, pink; a cylinder (25 mm across
and tall) instead of the cube; one distractor of the same shape in another colour; the cube
(and distractor) in two side sectors of the reach, 0.19-0.31 m from the base at bearings of
0.55-0.9 rad either side, turned to face the base. ``"heldout_<axis>"`` changes one axis.

Success: ``cube z - spawn z >= lift_height``, read from the cube's own pose. Fail: the cube's
centre left the ring around the base the arm reaches (planar distance outside [0.08, 0.40] m; the
TCP reaches 0.06-0.40 m at table height): pushed out of reach. The episode terminates on either;
it is truncated after ``max_episode_steps`` (80).

Observation (``state``): agent qpos (6), qvel (6); extra: TCP pose (7, env-local), cube pose
(7, env-local), TCP-to-cube vector (3), is_grasped (1) -> 30 floats, in every variant.

Dense reward = ``reach + grasp + lift`` terms (weights in the config), ``success_reward`` on
success, 0 on fail; ``normalized_dense = dense / success_reward`` in [0, 1]; sparse: +1 success,
-1 fail. Every term is in ``info["reward_terms"]``. The predicates and the reward are
FrankaLift-v1's (``lift_predicates``, ``lift_reward``) with this task's numbers, plus the fail ring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from simulo_envs.envs.randomization_presets import FOV_JITTER, IMAGE_NOISE, visual_table
from simulo_envs.envs.registration import register_env
from simulo_envs.tasks.franka_lift import lift_predicates, lift_reward
from simulo_envs.tasks.so_suite import HELDOUT_COLORS, Region, SuiteConfig, SuiteEnv
from simulo_envs.tensors import as_float32


@dataclass(frozen=True)
class SO100LiftConfig(SuiteConfig):
    """Every tunable of SO100Lift-v1, with units; env-local metres. The cube, its spawn box, the
    reach ring, the reach term and ``max_episode_steps`` (80) are ``SO100TableTopConfig``'s, the
    colours and the layout ``SuiteConfig``'s."""

    region: Optional[Region] = None  # train: the cube in SO100TableTopConfig's box, yaw 0
    heldout: Mapping = field(default_factory=lambda: {
        "colors": {"colors": HELDOUT_COLORS},
        "shapes": {"shapes": ("cylinder",)},
        "distractors": {"distractors": 1},
        "positions": {"region": Region((0.19, 0.31), (0.55, 0.9))},
    })
    lift_height: float = 0.05       # success: cube centre this far above its spawn height [m]
    lift_scale: float = 20.0        # lift term = grasp * (1 - tanh(lift_scale * height still to go)) [1/m]
    lift_weight: float = 2.0
    # randomization="visual": a distractor in each box ((x, y) low, high) [m], beside the spawn box
    distractor_regions: tuple = (((0.2, 0.12), (0.32, 0.18)), ((0.2, -0.18), (0.32, -0.12)))
    distractor_size: float = 0.025  # the distractors' extent [m], the cube's


@register_env("SO100Lift-v1", max_episode_steps=SO100LiftConfig.max_episode_steps)
class SO100LiftEnv(SuiteEnv):
    """Lift a cube with the SO-100 (see the module docstring)."""

    cfg = SO100LiftConfig()
    # randomization="visual": lights, the cube's texture, the floor's colour and texture, distractors,
    # the front camera 2 cm / 0.02 rad around its mount, the wrist camera 5 mm / 0.02 rad around its
    # mount on the arm, both fields of view, image noise (the cube's colours: variant="heldout_colors")
    # randomization="visual_v1": the first preset (lights, the front camera 2 cm / 0.02 rad)
    visual_randomization_v1 = visual_table(cameras={"base_camera": (0.02, 0.02)})
    visual_randomization = visual_table(textured=("cube",), floor=True, distractors=cfg.distractor_regions,
                                        cameras={"base_camera": (0.02, 0.02), "wrist_camera": (0.005, 0.02)},
                                        fov=FOV_JITTER, image_noise=IMAGE_NOISE)
    visual_distractor_size = cfg.distractor_size
    default_max_episode_steps = cfg.max_episode_steps
    xp_hooks = True  # the hooks below compute with self.xp alone

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the ground
        self.cube = self.add_object("Cube")
        self.distractors = self.add_distractors()

    def _after_reconfigure(self, options: dict) -> None:
        self.spawn_z = self.cube.default_pose[:, 2]  # world frame, per env

    def _initialize_episode(self, env_idx, options: dict) -> None:
        clearance = self.cfg.object_clearance
        others = [(prop, clearance) for prop in self.distractors]
        if self.cfg.region is None:  # the cube in the box, then the others around it
            cube = self.spawn(self.cube, env_idx)
            self.layout(env_idx, others, fixed=cube[:, :3], fixed_clearance=clearance)
        else:
            self.layout(env_idx, [(self.cube, clearance)] + others)
        self.draw_colors(env_idx, 1 + len(self.distractors))
        for role, prop in enumerate([self.cube] + self.distractors):
            self.paint(prop, env_idx, role)
        self.agent.reset(env_idx)

    def evaluate(self) -> dict:
        """success, fail, is_grasped bool (N,); height_gain (N,) m; cube and TCP
        poses (N, 7) and tcp_to_cube (N, 3), world frame (FrankaLift-v1's names: one expert
        drives both)."""
        cube_pose, tcp_pose = self.cube.state_in(self.xp).pose, self.tcp_pose()
        success, height_gain, tcp_to_cube = lift_predicates(cube_pose, tcp_pose, self.as_xp(self.spawn_z), self.k)
        return {
            "success": success,
            "fail": self.out_of_reach(cube_pose[:, :3]),
            "is_grasped": self.agent.is_grasping(self.cube, xp=self.xp),
            "height_gain": height_gain,
            "cube_pose": cube_pose,
            "tcp_pose": tcp_pose,
            "tcp_to_cube": tcp_to_cube,
        }

    def compute_dense_reward(self, obs, action, info: dict):
        """reach + grasp + lift terms (weights in the config), ``success_reward`` on success, 0 on
        fail; float32 (N,); the terms go to ``info["reward_terms"]``."""
        grasped = as_float32(info["is_grasped"])
        dense, info["reward_terms"] = lift_reward(self.xp, self.k, info["tcp_to_cube"], info["height_gain"], grasped,
                                                  info["success"])
        return self.xp.where(info["fail"] & ~info["success"], 0.0, dense)

    def instructions(self) -> list[str]:
        """"Lift the <colour> <shape>." per env (``SuiteEnv``)."""
        return [f"Lift the {color} {shape}." for color, shape in zip(self.color_names(0), self.shape_names(self.cube))]

    def _get_obs_extra(self, info: dict) -> dict:
        return {
            "tcp_pose": self.local(info["tcp_pose"]),  # env-local
            "cube_pose": self.local(info["cube_pose"]),
            "tcp_to_cube": info["tcp_to_cube"],
            "is_grasped": info["is_grasped"],
        }
