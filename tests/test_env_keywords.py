"""The seed's constructor keywords: each does what the seed says, or raises a clear ValueError."""

import inspect

import numpy as np
import pytest
import sapien
import torch

import simulo_envs
from simulo_envs.authoring import Pose
from simulo_envs.cloner import CloneCfg
from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.sim import resolve_backend_name
from simulo_envs.tasks.franka_lift import FrankaLiftEnv

SMALL = {"width": 96, "height": 96}


def make(env_id="FrankaLift-v1", **kwargs):
    return simulo_envs.make(env_id, **kwargs)


# ---------------------------------------------------------------- enable_shadow
def test_enable_shadow_darkens_the_ground_under_a_raised_block():
    images = {}
    for shadow in (False, True):
        env = make(num_envs=1, render_mode="rgb_array", enable_shadow=shadow,
                   human_render_camera_configs={"width": 128, "height": 128})
        try:
            env.reset(seed=0)
            pose = env.block.default_pose.clone()
            pose[:, 2] = 0.3
            env.block.set_pose(pose, env_ids=[0])
            images[shadow] = env.render()[0].to(torch.float32)
            assert env.enable_shadow is shadow
        finally:
            env.close()
    diff = (images[False] - images[True]).mean(dim=2)
    assert (diff > 20).sum() > 50  # a patch of ground is darker with shadows
    assert images[True].mean() < images[False].mean()


# ---------------------------------------------------------------- robot_uids
def test_robot_uids_picks_the_agent_by_name_and_refuses_others():
    env = make(num_envs=1, robot_uids="panda")
    try:
        assert env.robot_uids == "panda" and env.agent.uid == "panda"
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"unknown agent 'fetch'; registered agents: \['panda', 'panda_wristcam', 'so100', 'so101'\]"):
        make(num_envs=1, robot_uids="fetch")
    with pytest.raises(ValueError, match=r"unknown agent 'panda_wristcm' \(did you mean 'panda_wristcam'\?\)"):
        make(num_envs=1, robot_uids="panda_wristcm")
    with pytest.raises(ValueError, match=r"supports \['panda', 'panda_wristcam'\]"):
        make(num_envs=1, robot_uids=("panda", "panda"))
    assert FrankaLiftEnv.SUPPORTED_ROBOTS == ("panda", "panda_wristcam")


# ---------------------------------------------------------------- reconfiguration_freq
def test_reconfiguration_freq_rebuilds_every_k_full_resets_and_resamples_variants():
    env = make("FrankaLiftMixed-v1", num_envs=6, reconfiguration_freq=2,
               clone_cfg=CloneCfg(clone_strategy="random", seed=3))
    try:
        assert env.reconfiguration_freq == 2
        layouts = [env.block.variant_of_env.tolist()]
        flags = []
        for _ in range(4):
            _, info = env.reset()
            flags.append(info["reconfigure"])
            layouts.append(env.block.variant_of_env.tolist())
        _, info = env.reset(options={"env_idx": [0, 1]})  # partial resets never rebuild nor count
        flags.append(info["reconfigure"])
        assert flags == [False, True, False, True, False]
        assert layouts[2] != layouts[1]  # the rebuild drew a new variant per env
        assert layouts[3] == layouts[2]
    finally:
        env.close()
    with pytest.raises(ValueError, match="reconfiguration_freq"):
        make(num_envs=1, reconfiguration_freq=-1)
    plain = make(num_envs=1)
    try:
        assert plain.reconfiguration_freq == 0
        assert plain.reset()[1]["reconfigure"] is False
    finally:
        plain.close()


# ---------------------------------------------------------------- render_backend and shader_dir
def test_render_backend_values():
    env = make(num_envs=1, render_backend="none")  # state only: no rendering needed
    env.close()
    with pytest.raises(ValueError, match="disables rendering"):
        make(num_envs=1, obs_mode="rgb", render_backend="none")
    with pytest.raises(ValueError, match="sapien_cuda:3.*renders on"):
        make(num_envs=1, obs_mode="rgb", render_backend="sapien_cuda:3")
    with pytest.raises(ValueError, match="unknown render_backend"):
        make(num_envs=1, render_backend="opengl")
    env = make(num_envs=1, obs_mode="rgb", render_backend="cpu", sensor_configs=SMALL)  # lavapipe is a CPU device
    try:
        obs, _ = env.reset(seed=0)
        assert obs["sensor_data"]["base_camera"]["rgb"].shape == (1, 96, 96, 3)
    finally:
        env.close()


def test_shader_dir_minimal_renders_the_same_depth_and_segmentation():
    out = {}
    for shader in ("default", "minimal"):
        env = make(num_envs=1, obs_mode="rgb+depth+segmentation", shader_dir=shader, sensor_configs=SMALL)
        try:
            obs, _ = env.reset(seed=0)
            out[shader] = obs["sensor_data"]["base_camera"]
        finally:
            env.close()
    assert torch.allclose(out["default"]["depth"], out["minimal"]["depth"], atol=2e-3)  # minimal stores millimetres
    assert (out["default"]["segmentation"] == out["minimal"]["segmentation"]).float().mean() > 0.99
    with pytest.raises(ValueError, match="unknown shader pack"):
        make(num_envs=1, obs_mode="rgb", shader_dir="fancy")
    with pytest.raises(ValueError, match="ray tracing"):
        make(num_envs=1, obs_mode="rgb", shader_dir="rt")


# ---------------------------------------------------------------- viewer_camera_configs, parallel_in_single_scene
def test_viewer_camera_configs_are_applied_and_checked():
    env = make(num_envs=1, viewer_camera_configs={"width": 640, "fov": 1.0})
    try:
        assert env._viewer_camera_configs["viewer"].width == 640
        assert env._viewer_camera_configs["viewer"].fov == 1.0
    finally:
        env.close()
    with pytest.raises(ValueError, match="no such camera or field"):
        make(num_envs=1, viewer_camera_configs={"zoom": 2})


def test_parallel_in_single_scene_gives_one_overview_image():
    env = make(num_envs=4, render_mode="rgb_array", parallel_in_single_scene=True,
               human_render_camera_configs={"width": 160, "height": 120})
    try:
        env.reset(seed=0)
        image = env.render()
        assert image.shape == (1, 120, 160, 3)
        blocks = [k for k, v in env.segmentation_id_map.items() if v == env.block.path]
        assert len(blocks) == 4  # four blocks in the one scene, each with its own id
    finally:
        env.close()
    with pytest.raises(ValueError, match="parallel_in_single_scene"):
        make(num_envs=2, obs_mode="rgb", parallel_in_single_scene=True)
    with pytest.raises(ValueError, match="enhanced_determinism must be a bool"):
        make(num_envs=1, enhanced_determinism="yes")


# ---------------------------------------------------------------- sim_config (nested) and backend names
def test_nested_sim_config_is_mapped_onto_our_fields():
    env = make(num_envs=2, sim_config=dict(scene_config=dict(solver_position_iterations=25, cpu_workers=0,
                                                             enable_pcm=False, sleep_threshold=0.01),
                                           sim_freq=200, spacing=3.0,
                                           default_materials_config=dict(static_friction=0.5)))
    try:
        cfg = env.sim_config
        assert (cfg.solver_position_iterations, cfg.sim_freq, cfg.env_spacing, cfg.static_friction) == (25, 200, 3.0, 0.5)
        assert cfg.enable_pcm is False and cfg.sleep_threshold == 0.01
        assert sapien.physx.get_body_config().solver_position_iterations == 25  # what PhysX was given
        assert sapien.physx.get_scene_config().enable_pcm is False
        assert env.sim_timestep == pytest.approx(1 / 200)
        origins = env.scene.env_origins
        assert float((origins[0] - origins[1]).norm()) == pytest.approx(3.0)
    finally:
        env.close()
    old = make(num_envs=1, sim_config=dict(scene_config=dict(solver_iterations=20)))
    assert old.sim_config.solver_position_iterations == 20
    old.close()
    with pytest.raises(ValueError, match=r"sim_config\['scene_config'\]: unknown key 'solver_steps'"):
        make(num_envs=1, sim_config=dict(scene_config=dict(solver_steps=3)))
    with pytest.raises(ValueError, match="gpu_memory_config"):
        make(num_envs=1, sim_config=dict(gpu_memory_config=dict(heap_size=1)))


def test_backend_aliases_and_auto():
    assert resolve_backend_name("cpu") == "physx_cpu"
    assert resolve_backend_name("gpu") == "physx_cuda:0"
    env = make(num_envs=2, sim_backend="cpu")
    try:
        assert env.sim_backend == "physx_cpu" and env.gpu_sim_enabled is False
    finally:
        env.close()


# ---------------------------------------------------------------- _load_agent(options, initial_agent_poses, build_separate)
class ShiftedLift(FrankaLiftEnv):
    def _load_agent(self, options, initial_agent_poses=None, build_separate=False):
        super()._load_agent(options, initial_agent_poses=Pose([-0.1, 0.05, 0.0]), build_separate=True)


def test_load_agent_signature_and_initial_pose():
    params = list(inspect.signature(BaseEnv._load_agent).parameters)
    assert params == ["self", "options", "initial_agent_poses", "build_separate"]
    env = ShiftedLift(num_envs=2)
    try:
        root = env.agent.robot.state.root_pose[:, :3] - env.scene.env_origins
        assert torch.allclose(root, torch.tensor([[-0.1, 0.05, 0.0]] * 2), atol=1e-6)
    finally:
        env.close()
    with pytest.raises(ValueError, match="7 numbers"):
        Pose.coerce([0, 0, 0])
    assert np.allclose(Pose.coerce(sapien.Pose([1, 2, 3])).to_list(), [1, 2, 3, 1, 0, 0, 0])
