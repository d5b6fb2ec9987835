"""No reference cycles per step: after warm-up, 120 steps with the garbage collector disabled
leave nothing for ``gc.collect()`` to find, in every obs mode and through every adapter.

A cycle per step keeps its tensors alive until the collector runs (on a GPU backend: device
memory) and makes collection pauses grow with the step rate.
"""

from __future__ import annotations

import gc

import gymnasium as gym
import numpy as np
import pytest
import torch

import simulo_envs  # noqa: F401
from simulo_envs.sim.render import vulkan_available
from simulo_envs.vector import NumpyView, SingleEnvView

STEPS = 120
"""Steps checked with the collector off: one cycle per step shows in any of them; 120 take the
plain env past FrankaLift-v1's 100-step time limit and through a partial reset of each env, and the
adapters' envs (time limits of 6-9 steps) through a dozen autoresets."""
SMALL = dict(width=8, height=8)
VISUAL = ["rgb", "depth", "segmentation", "rgbd", "rgb+depth+segmentation", "sensor_data"]


def cyclic_garbage(step, warmup: int = 20, steps: int = STEPS) -> int:
    """Objects ``gc.collect()`` finds unreachable after ``steps`` calls of ``step`` with the
    collector off (after ``warmup`` calls and a collection)."""
    for _ in range(warmup):
        step()
    gc.collect()
    gc.disable()
    try:
        for _ in range(steps):
            step()
        return gc.collect()
    finally:
        gc.enable()


def _kwargs(obs_mode: str) -> dict:
    if obs_mode in VISUAL:
        if not vulkan_available():
            pytest.skip("no Vulkan driver")
        return dict(obs_mode=obs_mode, sensor_configs=SMALL)
    return dict(obs_mode=obs_mode)


# Rendering costs about 35 ms per step on a software Vulkan driver: the full STEPS run with
# every texture at once; each visual mode on its own runs a short check of its own code path.
@pytest.mark.parametrize("obs_mode, steps", [("state", STEPS), ("state_dict", STEPS), ("none", STEPS),
                                             ("rgb+depth+segmentation", STEPS)]
                         + [(mode, 10) for mode in VISUAL if mode != "rgb+depth+segmentation"])
def test_env_step_and_reset_leave_no_cycles(obs_mode, steps):
    env = gym.make("FrankaLift-v1", num_envs=1 if obs_mode in VISUAL else 2, **_kwargs(obs_mode))
    env.reset(seed=0)
    actions = torch.linspace(-0.5, 0.5, 8 * env.num_envs).reshape(env.num_envs, 8)
    count = [0]

    def step():
        env.step(actions)
        count[0] += 1
        if count[0] % 50 == 0:  # partial resets on the way
            env.reset(options={"env_idx": [count[0] // 50 % env.num_envs]})

    assert cyclic_garbage(step, warmup=min(steps, 20), steps=steps) == 0
    env.close()


@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
@pytest.mark.parametrize("numpy", [False, True])
def test_vector_env_leaves_no_cycles(autoreset_mode, numpy):
    venv = gym.make_vec("FrankaLift-v1", num_envs=2, vectorization_mode="vector_entry_point", obs_mode="state_dict",
                        autoreset_mode=autoreset_mode, max_episode_steps=7, record_metrics=True)
    if numpy:
        venv = NumpyView(venv)
    venv.reset(seed=0)
    actions = np.zeros((2, 8), dtype=np.float32) if numpy else torch.zeros(2, 8)
    assert cyclic_garbage(lambda: venv.step(actions)) == 0  # autoresets every 7 steps included
    venv.close()


@pytest.mark.parametrize("obs_mode", ["state", "state_dict"])
def test_single_env_view_leaves_no_cycles(obs_mode):
    env = SingleEnvView(gym.make("FrankaLift-v1", num_envs=1, obs_mode=obs_mode, max_episode_steps=9))
    env.reset(seed=0)
    action = np.full(8, 0.1, dtype=np.float32)

    def step():
        *_, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()

    assert cyclic_garbage(step) == 0
    env.close()


def test_rendering_leaves_no_cycles():
    if not vulkan_available():
        pytest.skip("no Vulkan driver")
    env = gym.make("FrankaLift-v1", num_envs=2, render_mode="rgb_array", human_render_camera_configs=SMALL)
    env.reset(seed=0)
    assert cyclic_garbage(lambda: (env.step(torch.zeros(2, 8)), env.render()), warmup=5, steps=30) == 0
    env.close()


def test_rl_adapters_leave_no_cycles():
    sb3 = pytest.importorskip("simulo_envs.wrappers.sb3")
    rsl = pytest.importorskip("simulo_envs.wrappers.rsl_rl")
    adapter = sb3.SB3VecEnv(gym.make("FrankaLift-v1", num_envs=2, max_episode_steps=6))
    adapter.reset()
    assert cyclic_garbage(lambda: adapter.step(np.zeros((2, 8), dtype=np.float32))) == 0
    adapter.close()
    runner_env = rsl.RslRlVecEnv(gym.make("FrankaLift-v1", num_envs=2, max_episode_steps=6))
    runner_env.reset()
    assert cyclic_garbage(lambda: runner_env.step(torch.zeros(2, 8))) == 0
    runner_env.close()
