"""A name the product does not know (an env keyword, an env id, a variant, a module of the
repository's tasks/ folder) is refused before anything is built, with the name, the closest known
one and what to use instead: in gym.make and the env constructor, and as a usage error (status 2)
of the scripts."""

from __future__ import annotations

import multiprocessing

import gymnasium as gym
import pytest

import simulo_envs
from simulo_envs.envs.env_keywords import check_env_keywords, did_you_mean, env_keywords
from simulo_envs.tasks.franka_reach import FrankaReachEnv
from simulo_envs.workers.sharded import ShardedEnv
from script_runs import load_script



def usage_error(capsys, main, argv) -> str:
    """``main(argv)`` must exit with status 2 and an argparse error line, no traceback; its message."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err, err
    return err.strip().splitlines()[-1].split(": error: ", 1)[1]


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


def test_demo_refuses_a_variant_the_task_does_not_have(capsys):
    main = load_script("demo").main
    assert usage_error(capsys, main, ["--env-id", "SO101PickPlace-v1", "--variant", "heldout", "--num-envs", "1"]) == (
        "--variant heldout: SO101PickPlace-v1 has no variants (the SO table-top suite's tasks have "
        "them: docs/writing_a_task.md); leave it out")
    assert usage_error(capsys, main, ["--env-id", "SO101Lift-v1", "--variant", "bogus"]) == (
        "--variant bogus: SO101Lift-v1 has the variants train, heldout, heldout_colors, "
        "heldout_shapes, heldout_distractors, heldout_positions")
    assert usage_error(capsys, main, ["--env-id", "SO101Lift-v1", "--variant", "helout"]).endswith(
        "heldout_positions (did you mean 'heldout'?)")


def test_an_unknown_env_id_names_the_closest_in_every_script(capsys, tmp_path):
    hint = "unknown env id 'SO101PickPlce-v1' (did you mean 'SO101PickPlace-v1'?); registered: FrankaLift-v1, "
    assert usage_error(capsys, load_script("demo").main, ["--env-id", "SO101PickPlce-v1"]).startswith(hint)
    assert usage_error(capsys, load_script("train").main, ["--env-id", "SO101PickPlce-v1"]).startswith(hint)
    assert usage_error(capsys, load_script("collect_demos").main,
                       ["--env-id", "SO101PickPlce-v1", "--out", str(tmp_path / "out")]).startswith(hint)
    with pytest.raises(KeyError, match="did you mean 'FrankaLift-v1'"):
        simulo_envs.make("FrankaLfit-v1")


def test_a_module_of_the_tasks_folder_names_the_registered_id(capsys):
    main = load_script("demo").main
    assert usage_error(capsys, main, ["--env-id", "tasks.so101_pick_place:SO101PickPlaceEnv"]) == (
        "tasks/ is installed as simulo_envs.tasks and SO101PickPlaceEnv is registered already as "
        "SO101PickPlace-v1: --env-id SO101PickPlace-v1")
    assert usage_error(capsys, main, ["--task-module", "tasks.so101_lift", "--env-id", "SO101Lift-v1"]) == (
        "tasks/ is installed as simulo_envs.tasks and registered with simulo_envs: leave out "
        "--task-module tasks.so101_lift (its task ids: SO101Lift-v1)")
