"""A name the product does not know (an env keyword) is refused before anything is built, with the
name and the closest known one: in gym.make, the env constructor and worker processes."""

from __future__ import annotations

import multiprocessing

import gymnasium as gym
import pytest

import simulo_envs
from simulo_envs.envs.env_keywords import check_env_keywords, did_you_mean, env_keywords
from simulo_envs.tasks.franka_reach import FrankaReachEnv
from simulo_envs.workers.sharded import ShardedEnv

class GripReach(FrankaReachEnv):
    """A task of one's own with a keyword of its own; its ``__init__`` says when it runs."""

    inits: list = []

    def __init__(self, *args, grip: float = 1.0, **kwargs):
        type(self).inits.append(grip)
        super().__init__(*args, **kwargs)


def test_an_unknown_env_keyword_is_named_with_the_closest_before_any_init_runs():
    with pytest.raises(ValueError, match=r"^SO101PickPlaceEnv: unknown keyword argument\(s\) \['num_env'\] "
                                         r"\('num_env' -> did you mean 'num_envs'\?\); it accepts \['clone_cfg', "):
        gym.make("SO101PickPlace-v1", num_env=2)
    with pytest.raises(ValueError, match=r"^SO101PickPlaceEnv: unknown keyword argument\(s\) \['variant'\]; it accepts"):
        gym.make("SO101PickPlace-v1", variant="heldout")   # a task without variants
    with pytest.raises(ValueError, match=r"\['gripp'\] \('gripp' -> did you mean 'grip'\?\)"):
        GripReach(num_envs=1, gripp=2.0)
    assert GripReach.inits == []   # refused before the task's own __init__ ran
    assert env_keywords(GripReach)[:2] == ("grip", "num_envs") and "variant" in env_keywords(
        simulo_envs.envs.registration.REGISTERED["SO101Lift-v1"])
    check_env_keywords(GripReach, {"grip": 2.0, "obs_mode": "state"})   # the accepted ones pass
    assert did_you_mean("env_ids", ("env_idx", "reconfigure")) == "env_idx" and did_you_mean(3, ("a",)) is None


def test_worker_processes_refuse_an_unknown_keyword_before_any_starts():
    with pytest.raises(ValueError, match=r"FrankaReachEnv: unknown keyword argument\(s\) \['obs_mod'\] "
                                         r"\('obs_mod' -> did you mean 'obs_mode'\?\)"):
        ShardedEnv(FrankaReachEnv, 2, 2, {"obs_mod": "state"})
    assert multiprocessing.active_children() == []
