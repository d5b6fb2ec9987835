"""The emulator of SAPIEN's GPU system enforces the GPU rules (stale buffers, stale link poses,
index buffers), and the GPU backend is right under them: on the documented indexed applies, and
on SAPIEN 3.0.3's actual ones. Also the vector env, RL adapters and rendering on the GPU path."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import sapien
import torch

import simulo_envs  # noqa: F401
from simulo_envs.sim.gpu_emulator import EmulatedPhysxGpuSystem
from simulo_envs.sim.physx_cuda import PhysxCudaBackend
from simulo_envs.tasks.franka_reach import FrankaReachEnv
from simulo_envs.wrappers.rsl_rl import RslRlVecEnv
from simulo_envs.wrappers.sb3 import SB3VecEnv


def _system_with_boxes(n: int = 3, quirks: str = "documented"):
    system = EmulatedPhysxGpuSystem(quirks)
    scene = sapien.Scene([system])
    for i in range(n):
        builder = scene.create_actor_builder()
        builder.add_box_collision(half_size=[0.05] * 3)
        builder.build(name=f"box{i}").set_pose(sapien.Pose(p=[2.0 * i, 0, 1.0]))
    return system, scene


def test_nothing_before_gpu_init_and_buffers_start_as_nan():
    system, _scene = _system_with_boxes()
    with pytest.raises(RuntimeError, match="not initialized"):
        system.cuda_rigid_body_data
    with pytest.raises(RuntimeError, match="not initialized"):
        system.step()
    system.gpu_init()
    assert torch.isnan(system.cuda_rigid_body_data.torch()).all()


def test_buffers_are_stale_until_fetched():
    system, _scene = _system_with_boxes()
    system.gpu_init()
    data = system.cuda_rigid_dynamic_data.torch()
    system.gpu_fetch_rigid_dynamic_data()
    before = data.clone()
    system.step()
    torch.testing.assert_close(data, before)  # the step left the buffer alone
    system.gpu_fetch_rigid_dynamic_data()
    assert (data[:, 2] < before[:, 2]).all()  # falling boxes, once fetched


@pytest.mark.parametrize("quirks", ["documented", "sapien-3.0.3"])
def test_indexed_rigid_apply(quirks):
    system, _scene = _system_with_boxes(3, quirks)
    system.gpu_init()
    system.gpu_fetch_rigid_dynamic_data()
    data = system.cuda_rigid_dynamic_data.torch()
    row = system.emulated_gpu_indices.index(system.rigid_dynamic_components[2])
    before = data.clone()
    data[row, 2] = 5.0
    with pytest.raises(TypeError, match="int32"):
        system.gpu_apply_rigid_dynamic_data(torch.tensor([row]))  # int64
    system.gpu_apply_rigid_dynamic_data(torch.tensor([row], dtype=torch.int32))
    system.gpu_fetch_rigid_dynamic_data()
    if quirks == "documented":
        expected = before.clone()
        expected[row, 2] = 5.0
        torch.testing.assert_close(data, expected)  # exactly the listed row changed
    else:
        assert data[row, 2] != 5.0  # SAPIEN 3.0.3 reads compacted row 0 at row 2: the write is lost


def test_link_poses_stale_until_kinematics_update():
    env = gym.make("FrankaLift-v1", num_envs=2, sim_backend="physx_cuda_emulated")
    backend = env.unwrapped.backend
    system, gid = backend.system, env.unwrapped.agent.robot._gid
    tcp = env.unwrapped.agent.robot._tcp_index
    rows = backend._art_rows[gid]
    backend._fetch("qpos")
    backend._fetch("links")
    link_row = backend._link_rows[gid][:, tcp]
    before = backend._body[link_row, :3].clone()
    backend._q["qpos"][rows, 0] += 0.5
    system.gpu_apply_articulation_qpos()
    system.gpu_fetch_articulation_link_pose()
    torch.testing.assert_close(backend._body[link_row, :3], before)  # stale: no kinematics update yet
    system.gpu_update_articulation_kinematics()
    system.gpu_fetch_articulation_link_pose()
    assert (backend._body[link_row, :3] - before).abs().amax() > 0.05
    env.close()


@pytest.mark.parametrize("quirks,indexed", [("sapien-3.0.3", False), ("documented", True), ("sapien-3.0.3", True)])
def test_backend_writes_under_each_apply_semantics(monkeypatch, quirks, indexed):
    """Partial writes reach exactly the listed envs with whole-buffer applies (the default, right
    on SAPIEN 3.0.3) and with index buffers where SAPIEN honours them; index buffers on SAPIEN
    3.0.3's applies would write the wrong envs, which this emulator reproduces."""
    orig_init = PhysxCudaBackend.__init__

    def init(self, *args, **kwargs):
        kwargs["system_factory"] = lambda: EmulatedPhysxGpuSystem(quirks)
        kwargs["indexed_applies"] = indexed
        orig_init(self, *args, **kwargs)

    monkeypatch.setattr(PhysxCudaBackend, "__init__", init)
    env = gym.make("FrankaLift-v1", num_envs=4, sim_backend="physx_cuda_emulated")
    u = env.unwrapped
    env.reset(seed=0)
    env.step(np.zeros((4, 8), np.float32))
    robot, block = u.agent.robot, u.block
    qpos, pose = robot.state.qpos, block.state.pose
    qpos[[1, 3], 0] += 0.2
    pose[[1, 3], 2] += 0.1
    robot.set_qpos(qpos[[1, 3]], [1, 3])
    block.set_pose(pose[[1, 3]], [1, 3])
    u.backend._fresh.clear()  # read back from the simulation, not from our buffer
    got_q, got_p = robot.state.qpos, block.state.pose
    right = torch.allclose(got_q, qpos, atol=1e-6) and torch.allclose(got_p, pose, atol=1e-6)
    assert right == (not (indexed and quirks == "sapien-3.0.3"))
    env.close()


def _seeded_reach(backend):
    env = FrankaReachEnv(num_envs=2, max_episode_steps=4, sim_backend=backend)
    env.reset(seed=11)  # the adapters' own resets continue these streams
    return env


def test_vector_env_and_rl_adapters_match_physx_cpu():
    out = {}
    for backend in ("physx_cpu", "physx_cuda_emulated"):
        venv = gym.make_vec("FrankaLift-v1", num_envs=3, vectorization_mode="vector_entry_point",
                            sim_backend=backend, max_episode_steps=5)
        obs, _ = venv.reset(seed=3)
        gen = torch.Generator().manual_seed(0)
        trace = [obs]
        for _ in range(7):  # past the time limit: autoreset
            obs, reward, terminated, truncated, _ = venv.step(torch.rand(3, 8, generator=gen) * 2 - 1)
            trace += [obs, reward, truncated.float()]
        venv.close()
        sb3 = SB3VecEnv(_seeded_reach(backend))
        sb3_obs = [sb3.reset()] + [sb3.step(np.full((2, 4), 0.3, np.float32))[0] for _ in range(5)]
        sb3.close()
        rsl = RslRlVecEnv(_seeded_reach(backend))
        rsl_obs = [rsl.get_observations()["policy"]] + [rsl.step(torch.full((2, 4), -0.2))[0]["policy"] for _ in range(5)]
        rsl.close()
        out[backend] = (trace, sb3_obs, rsl_obs)
    cpu, gpu = out["physx_cpu"], out["physx_cuda_emulated"]
    for a, b in zip(cpu[0] + cpu[2], gpu[0] + gpu[2]):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-5)
    for a, b in zip(cpu[1], gpu[1]):
        np.testing.assert_allclose(b, a, atol=1e-5, rtol=1e-5)


def test_rendering_matches_physx_cpu():
    images = {}
    for backend in ("physx_cpu", "physx_cuda_emulated"):
        env = gym.make("FrankaLift-v1", num_envs=2, obs_mode="rgb+segmentation", render_mode="rgb_array",
                       sim_backend=backend, sensor_configs=dict(width=48, height=48),
                       human_render_camera_configs=dict(width=32, height=32))
        obs, _ = env.reset(seed=5)
        obs, *_ = env.step(np.full((2, 8), 0.5, np.float32))
        images[backend] = (obs["sensor_data"]["base_camera"], env.render())
        env.close()
    (cpu, cpu_frame), (gpu, gpu_frame) = images["physx_cpu"], images["physx_cuda_emulated"]
    assert torch.equal(gpu["segmentation"], cpu["segmentation"])
    assert (gpu["rgb"].int() - cpu["rgb"].int()).abs().max() <= 2
    assert (gpu_frame.int() - cpu_frame.int()).abs().max() <= 2
    assert cpu["rgb"].float().std() > 10  # the pictures show something
