"""A task of one's own, end to end: registered from anywhere (a class inside a function too), one
id per task, found by the scripts from the user's own module (``--task-module`` or
``module:Id``, no ``PYTHONPATH``), the scripted expert of the task it subclasses, and the PPO
config the guide shows."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap

import gymnasium as gym
import pytest

import simulo_envs  # noqa: F401
from simulo_envs.envs.registration import REGISTERED, register_env
from simulo_envs.tasks.franka_lift import FrankaLiftEnv
from simulo_envs.tasks.franka_reach import FrankaReachEnv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MY_TASKS = textwrap.dedent("""
    from simulo_envs.envs.registration import register_env
    from simulo_envs.tasks.franka_lift import FrankaLiftEnv
    from simulo_envs.tasks.franka_reach import FrankaReachEnv

    @register_env("MyLift-v1", max_episode_steps=80)
    class MyLift(FrankaLiftEnv):          # FrankaLift-v1's expert lifts it
        pass

    @register_env("MyReach-v1", max_episode_steps=10)
    class MyReach(FrankaReachEnv):        # FrankaReach-v1 has no expert
        pass
""")


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def forget_ids():
    """Ids registered by a test are removed from both registries afterwards."""
    before = set(REGISTERED), set(gym.registry)
    saved = {env_id: (REGISTERED[env_id], gym.registry[env_id]) for env_id in before[0]}
    yield
    for env_id in set(REGISTERED) - before[0]:
        REGISTERED.pop(env_id)
    for env_id in set(gym.registry) - before[1]:
        gym.registry.pop(env_id)
    for env_id, (cls, spec) in saved.items():
        REGISTERED[env_id], gym.registry[env_id] = cls, spec


def test_a_class_defined_inside_a_function_registers_and_makes(forget_ids):
    def define(limit: int):
        @register_env("LocalReach-v1", max_episode_steps=limit)
        class LocalReach(FrankaReachEnv):
            pass
        return LocalReach

    first = define(7)
    env = gym.make("LocalReach-v1", num_envs=2)
    assert type(env.unwrapped) is first and env.unwrapped.max_episode_steps == 7
    env.close()
    second = define(9)   # the function run again (a notebook cell re-run): replaces it everywhere
    env = gym.make("LocalReach-v1", num_envs=1)
    assert type(env.unwrapped) is second and env.unwrapped.max_episode_steps == 9 and REGISTERED["LocalReach-v1"] is second
    env.close()


def test_an_id_taken_by_another_task_is_refused_at_registration(forget_ids):
    class Impostor(FrankaReachEnv):
        pass

    with pytest.raises(ValueError, match=r"register_env\('FrankaLift-v1'\): the id is already "
                                         r"simulo_envs\.tasks\.franka_lift\.FrankaLiftEnv's"):
        register_env("FrankaLift-v1", max_episode_steps=3)(Impostor)
    with pytest.raises(ValueError, match=r"Gymnasium already has this id .*CartPoleEnv"):
        register_env("CartPole-v1")(Impostor)
    assert REGISTERED["FrankaLift-v1"] is FrankaLiftEnv and gym.registry["FrankaLift-v1"].entry_point is FrankaLiftEnv
    assert gym.registry["FrankaLift-v1"].max_episode_steps == FrankaLiftEnv.default_max_episode_steps


@pytest.fixture
def my_tasks(tmp_path, monkeypatch, forget_ids):
    (tmp_path / "my_tasks.py").write_text(MY_TASKS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    sys.modules.pop("my_tasks", None)


def test_demo_takes_the_users_module_and_the_parent_tasks_expert(my_tasks, capsys):
    demo = load_script("demo")
    demo.main(["--task-module", "my_tasks", "--env-id", "MyReach-v1", "--policy", "random", "--num-envs", "2",
               "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["episodes"] == 2
    with pytest.raises(SystemExit):
        demo.main(["--env-id", "my_tasks:MyReach-v1"])   # the default policy is the expert
    assert "MyReach-v1 has no scripted expert" in capsys.readouterr().err


def test_module_colon_id_needs_no_pythonpath_and_the_subclass_gets_the_lift_expert(my_tasks):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "demo.py"), "--env-id", "my_tasks:MyLift-v1",
                          "--policy", "expert", "--num-envs", "2", "--episodes", "2", "--seed", "0", "--json"],
                         cwd=my_tasks, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary == {**summary, "episodes": 2, "success_rate": 1.0}


def test_the_guides_ppo_layout_is_the_examples_config():
    guide = open(os.path.join(ROOT, "docs", "writing_a_task.md")).read()
    block = guide.split("Written out, this is the layout")[1].split("```python\n")[1].split("```")[0]
    sys.path.insert(0, os.path.join(ROOT, "docs", "examples"))
    try:
        push_cube = importlib.import_module("push_cube")
    finally:
        sys.path.remove(os.path.join(ROOT, "docs", "examples"))
    assert ast.literal_eval(block) == push_cube.PushCubeEnv.train_config
    from simulo_envs.training.rsl_rl_train import plan_training

    plan = plan_training("PushCubeExample-v1")
    assert (plan.num_envs, plan.env_steps, plan.iterations) == (64, 480_000, 150)
    # the config excerpt shows the max_episode_steps the registration excerpt reads
    config = re.search(r"class PushCubeConfig:.*?```", guide, re.S).group(0)
    assert "max_episode_steps: int = 60" in config
    assert "register_env(\"PushCubeExample-v1\", max_episode_steps=PushCubeConfig.max_episode_steps)" in guide
