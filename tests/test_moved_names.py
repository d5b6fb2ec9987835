"""Names that moved when ``simulo_envs.wrappers`` was split by concern (``vector/``, ``workers/``,
``training/``) keep working for one release, each with a ``DeprecationWarning`` naming its new place."""

from __future__ import annotations

import importlib
import sys

import pytest

import simulo_envs.vector
import simulo_envs.workers.sharded
import simulo_envs.wrappers


@pytest.mark.parametrize("name", simulo_envs.wrappers.MOVED_TO_VECTOR)
def test_a_vector_name_read_from_wrappers_warns_with_its_new_path(name):
    with pytest.warns(DeprecationWarning, match=rf"simulo_envs\.wrappers\.{name} moved to simulo_envs\.vector\.{name};"):
        value = getattr(simulo_envs.wrappers, name)
    assert value is getattr(simulo_envs.vector, name)


def test_from_wrappers_import_warns_at_the_callers_line():
    with pytest.warns(DeprecationWarning, match=r"simulo_envs\.vector\.SingleEnvView") as caught:
        from simulo_envs.wrappers import SingleEnvView
    assert SingleEnvView is simulo_envs.vector.SingleEnvView
    assert {w.filename for w in caught} == {__file__}


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'ShardedEnvv'"):
        simulo_envs.wrappers.ShardedEnvv  # noqa: B018


def test_the_old_sharded_module_warns_with_its_new_path(monkeypatch):
    monkeypatch.delitem(sys.modules, "simulo_envs.wrappers.sharded", raising=False)
    with pytest.warns(DeprecationWarning, match=r"simulo_envs\.wrappers\.sharded moved to simulo_envs\.workers\.sharded;"):
        old = importlib.import_module("simulo_envs.wrappers.sharded")
    for name in simulo_envs.workers.sharded.__all__:
        assert getattr(old, name) is getattr(simulo_envs.workers.sharded, name)


def test_a_training_config_naming_the_old_ppo_module_gets_the_new_one():
    pytest.importorskip("rsl_rl")
    from simulo_envs.training.rsl_rl_runner import current_class_names

    config = {"algorithm": {"class_name": "simulo_envs.wrappers.rsl_rl_ppo:FinalValuePPO", "bootstrap": "dones"},
              "actor": {"class_name": "simulo_envs.wrappers.rsl_rl_ppo.OrthogonalMLPModel",
                        "distribution_cfg": {"class_name": "GaussianDistribution"}},
              "critic": {"class_name": "simulo_envs.wrappers.rsl_rl_ppox:Other"}, "num_steps_per_env": 8}
    with pytest.warns(DeprecationWarning, match=r"simulo_envs\.wrappers\.rsl_rl_ppo moved to "
                                                r"simulo_envs\.training\.rsl_rl_ppo") as caught:
        current = current_class_names(config)
    assert len(caught) == 2
    assert current == {"algorithm": {"class_name": "simulo_envs.training.rsl_rl_ppo:FinalValuePPO", "bootstrap": "dones"},
                       "actor": {"class_name": "simulo_envs.training.rsl_rl_ppo.OrthogonalMLPModel",
                                 "distribution_cfg": {"class_name": "GaussianDistribution"}},
                       "critic": {"class_name": "simulo_envs.wrappers.rsl_rl_ppox:Other"}, "num_steps_per_env": 8}
    assert config["algorithm"]["class_name"] == "simulo_envs.wrappers.rsl_rl_ppo:FinalValuePPO"  # not changed


@pytest.mark.parametrize("module, name", [("rsl_rl_train", "SetupError"), ("rsl_rl_train", "SavedRun"),
                                          ("rsl_rl_train", "saved_run"), ("sb3_train", "read_sb3_infos")])
def test_a_saved_run_name_read_from_its_old_module_warns_with_its_new_path(module, name):
    pytest.importorskip("rsl_rl")
    pytest.importorskip("stable_baselines3")
    import simulo_envs.training.saved_runs as saved_runs

    old = importlib.import_module(f"simulo_envs.training.{module}")
    with pytest.warns(DeprecationWarning, match=rf"simulo_envs\.training\.{module}\.{name} moved to "
                                                rf"simulo_envs\.training\.saved_runs\.{name};") as caught:
        value = getattr(old, name)
    assert value is getattr(saved_runs, name) and {w.filename for w in caught} == {__file__}
