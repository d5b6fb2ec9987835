"""The GPU backend's code path, run on the emulator of SAPIEN's GPU system, against physx_cpu:
the same actions give the same states to 1e-5; plus the backend interface and the errors of
physx_cuda on machines without a GPU or without PhysX's GPU library."""

from __future__ import annotations

import inspect

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.policies import LiftExpert
from simulo_envs.sim import SimBackend, backend_device, resolve_backend_name
from simulo_envs.sim.backend import STATE_METHODS, protocol_methods
from simulo_envs.sim.physx_cpu import PhysxCpuBackend
from simulo_envs.sim.physx_cuda import PhysxCudaBackend

TOL = dict(atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------- interface
@pytest.mark.parametrize("cls", [PhysxCpuBackend, PhysxCudaBackend])
def test_backends_implement_the_protocol_with_its_parameters(cls):
    for name in protocol_methods():
        assert hasattr(cls, name), f"{cls.__name__} lacks {name}"
        want = list(inspect.signature(getattr(SimBackend, name)).parameters)
        got = list(inspect.signature(getattr(cls, name)).parameters)
        assert got[: len(want)] == want or got[1:] == ["args", "kwargs"] or got == ["self", "urdf_path", "args", "kwargs"], \
            (cls.__name__, name, got, want)


def test_gpu_backend_defines_every_state_method_itself():
    missing = [m for m in STATE_METHODS if m not in vars(PhysxCudaBackend)]
    assert missing == [], f"physx_cuda inherits CPU state methods: {missing}"


def test_every_public_cpu_backend_method_is_in_the_protocol():
    public = {n for n, v in vars(PhysxCpuBackend).items() if callable(v) and not n.startswith("_")}
    assert public - set(protocol_methods()) == set(), "add new backend methods to SimBackend (sim/backend.py)"


# ---------------------------------------------------------------------------- names and errors
def test_backend_names_and_devices():
    assert resolve_backend_name("physx_cuda") == "physx_cuda:0"
    assert resolve_backend_name("physx_cuda:2") == "physx_cuda:2"
    assert resolve_backend_name("physx_cuda_emulated") == "physx_cuda_emulated"
    assert backend_device("physx_cuda_emulated") == torch.device("cpu")
    with pytest.raises(ValueError, match="device must be a number"):
        resolve_backend_name("physx_cuda:x")
    with pytest.raises(ValueError, match="unknown sim_backend"):
        resolve_backend_name("physx_gpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_physx_cuda_without_cuda_says_so_and_names_the_cpu_backend():
    assert resolve_backend_name("auto") == "physx_cpu"
    with pytest.raises(RuntimeError, match="needs a CUDA GPU.*physx_cpu"):
        gym.make("FrankaLift-v1", num_envs=1, sim_backend="physx_cuda")


def _fake_cuda(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("HOME", str(tmp_path))


def test_physx_cuda_without_the_library_names_the_exact_path(monkeypatch, tmp_path):
    import sapien.physx as physx

    _fake_cuda(monkeypatch, tmp_path)
    path = tmp_path / ".sapien" / "physx" / "105.1-physx-5.3.1.patch0" / "libPhysXGpu_64.so"
    assert physx.version() == "105.1-physx-5.3.1.patch0"
    with pytest.raises(RuntimeError) as info:
        gym.make("FrankaLift-v1", num_envs=1, sim_backend="physx_cuda")
    message = str(info.value)
    assert f"at {path}." in message and "PhysX 105.1-physx-5.3.1.patch0" in message and "physx_cpu" in message
    assert not path.exists()  # nothing was downloaded
    with pytest.raises(RuntimeError, match="1 CUDA device"):
        gym.make("FrankaLift-v1", num_envs=1, sim_backend="physx_cuda:1")


def test_physx_cuda_with_a_broken_library_says_it_failed_to_load(monkeypatch, tmp_path):
    import sapien.physx as physx

    _fake_cuda(monkeypatch, tmp_path)
    path = tmp_path / ".sapien" / "physx" / physx.version() / "libPhysXGpu_64.so"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a library")
    with pytest.raises(RuntimeError, match="libPhysXGpu_64.so .*failed to load"):
        gym.make("FrankaLift-v1", num_envs=1, sim_backend="physx_cuda")


# ---------------------------------------------------------------------------- parity with physx_cpu
def _rollout(backend: str, control_mode: str, steps: int, reset_at: dict):
    env = gym.make("FrankaLift-v1", num_envs=4, sim_backend=backend, control_mode=control_mode)
    u = env.unwrapped
    obs, _ = env.reset(seed=7)
    gen = torch.Generator().manual_seed(1)
    states, observations, rewards = [u.get_state()], [obs], []
    for t in range(steps):
        obs, reward, _, _, _ = env.step(torch.rand(4, u.single_action_space.shape[0], generator=gen) * 2 - 1)
        if t in reset_at:
            obs, _ = env.reset(options={"env_idx": reset_at[t]})
        states.append(u.get_state())
        observations.append(obs)
        rewards.append(reward)
    env.close()
    return torch.stack(states), torch.stack(observations), torch.stack(rewards)


@pytest.mark.parametrize("control_mode", ["pd_joint_delta_pos", "pd_ee_delta_pos"])
def test_emulated_gpu_path_matches_physx_cpu(control_mode):
    reset_at = {4: [1], 8: [0, 3]}  # partial resets in between
    cpu = _rollout("physx_cpu", control_mode, 12, reset_at)
    gpu = _rollout("physx_cuda_emulated", control_mode, 12, reset_at)
    for a, b in zip(cpu, gpu):
        torch.testing.assert_close(b, a, **TOL)
    assert (cpu[0][-1] - cpu[0][0]).abs().max() > 0.05  # the rollout moved things


def test_expert_succeeds_and_matches_physx_cpu_until_the_grasp():
    """The expert lifts the block on both. Poses and qpos agree to 1e-5 until the fingers touch
    the block (step 14 of this episode); from there both diverge by millimetres, as physx_cpu
    does from itself when its actions are perturbed by 1e-6 (measured: same divergence, same
    steps): the grasp amplifies float noise, whatever the backend."""
    results = {}
    for backend in ("physx_cpu", "physx_cuda_emulated"):
        env = gym.make("FrankaLift-v1", num_envs=2, sim_backend=backend, control_mode="pd_ee_delta_pos")
        expert = LiftExpert(env)
        env.reset(seed=100)
        states, success = [], torch.zeros(2, dtype=torch.bool)
        for _ in range(60):
            _, _, terminated, _, info = env.step(expert.act())
            success |= info["success"]
            states.append(env.unwrapped.get_state())
        env.close()
        results[backend] = (torch.stack(states), success)
    (cpu, cpu_success), (gpu, gpu_success) = results["physx_cpu"], results["physx_cuda_emulated"]
    assert gpu_success.all() and cpu_success.all()
    poses = list(range(0, 7)) + list(range(26, 35))  # block pose, robot qpos
    torch.testing.assert_close(gpu[:14, :, poses], cpu[:14, :, poses], **TOL)
    torch.testing.assert_close(gpu[:, :, poses], cpu[:, :, poses], atol=2e-2, rtol=0)


def test_read_your_writes_and_tensors_on_the_device():
    env = gym.make("FrankaLift-v1", num_envs=3, sim_backend="physx_cuda_emulated")
    u = env.unwrapped
    env.reset(seed=0)
    env.step(np.zeros((3, 8), np.float32))
    pose = u.block.state.pose
    pose[1, :3] += torch.tensor([0.05, -0.02, 0.1])
    u.block.set_pose(pose[[1]], [1])
    torch.testing.assert_close(u.block.state.pose, pose)
    qpos = u.agent.robot.state.qpos
    tcp = u.agent.tcp_pose
    qpos[2, 0] += 0.3
    u.agent.robot.set_qpos(qpos[[2]], [2])
    torch.testing.assert_close(u.agent.robot.state.qpos, qpos)
    moved = (u.agent.tcp_pose - tcp).abs().amax(1)
    assert moved[2] > 0.01 and moved[[0, 1]].max() == 0  # link poses follow the write, only in env 2
    assert u.device == torch.device("cpu") and u.agent.robot.state.qpos.device == u.device
    env.close()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("script", ["demo", "train", "benchmark"])
@pytest.mark.parametrize("backend", ["physx_cuda", "gpu", "physx_cuda:x", "bogus"])
def test_scripts_refuse_an_unusable_sim_backend_in_one_line(script, backend, capsys, monkeypatch):
    """``--sim-backend`` is checked before anything is built: one argparse line, exit status 2."""
    import importlib.util
    import os
    import sys

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", f"{script}.py")
    spec = importlib.util.spec_from_file_location(f"script_{script}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", "--sim-backend", backend])
    with pytest.raises(SystemExit) as exit_info:
        module.main()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{script}.py: error: argument --sim-backend: "), err
    expected = {"physx_cuda": "needs a CUDA GPU and torch finds none; use sim_backend='physx_cpu'",
                "gpu": "needs a CUDA GPU and torch finds none; use sim_backend='physx_cpu'",
                "physx_cuda:x": "the device must be a number", "bogus": "unknown sim_backend 'bogus'"}[backend]
    assert expected in last, last
