"""Shared by the cloner parity checks (``test_parity_cloner*.py``): the check registry, the
queue-emptying fixture and small cfg builders."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

import simulo_envs.cloner as cloner
from simulo_envs import Prop
from simulo_envs.authoring import Cuboid

ENV = "/World/envs/env_{}"


def checker(checks: dict):
    """A decorator registering a check in ``checks`` under its row id (``c17_sources`` -> ``"C17"``)."""
    def check(fn):
        checks[fn.__name__.split("_")[0].upper()] = fn
        return fn
    return check


def row_order(checks: dict) -> list[str]:
    """The row ids of ``checks`` in numeric order."""
    return sorted(checks, key=lambda k: int(k[1:]))


@pytest.fixture(autouse=True)
def empty_queue():
    cloner.REPLICATION_QUEUE.clear()
    yield
    cloner.REPLICATION_QUEUE.clear()


def params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def cfg(name, variants=1):
    spawn = SimpleNamespace(assets_cfg=[f"{name}{v}" for v in range(variants)]) if variants > 1 else object()
    return SimpleNamespace(prim_path=f"/World/envs/env_.*/{name}", spawn=spawn)


def block(name="Block"):
    return cloner.PrototypeCfg(f"/World/envs/env_.*/{name}", Prop(Cuboid(name, size=(0.05, 0.05, 0.05))))
