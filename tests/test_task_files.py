"""A task file reads the framework through public names only: every ``x._name`` it writes is a
hook it defines itself (``_load_scene``, ``_default_sensor_configs``, ... called through
``super()`` or overridden). ``tasks/tabletop.py`` is the shared base the tasks subclass (a
``BaseEnv`` subclass itself) and is exempt: it turns BaseEnv's internals into the public helpers
the tasks use (``local``, ``hide``, ``k``)."""

from __future__ import annotations

import ast
import os

import pytest

TASKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks")
TASK_FILES = sorted(name for name in os.listdir(TASKS_DIR)
                    if name.endswith(".py") and name not in ("__init__.py", "tabletop.py"))


def private_uses(source: str) -> list[str]:
    """``line: .name`` for each attribute ``_name`` (not dunder) the source reads or writes that
    is not a function it defines."""
    tree = ast.parse(source)
    own = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return sorted(f"{node.lineno}: .{node.attr}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr.startswith("_")
                  and not node.attr.startswith("__") and node.attr not in own)


def test_the_check_sees_what_it_looks_for():
    source = ("class T:\n    def _load_scene(self):\n        super()._load_scene()\n"
              "        self._goal = self.block._raw_state\n        self.__dict__\n")
    assert private_uses(source) == ["4: ._goal", "4: ._raw_state"]
    assert len(TASK_FILES) >= 10 and "franka_lift.py" in TASK_FILES and "so100_lift.py" in TASK_FILES


@pytest.mark.parametrize("name", TASK_FILES)
def test_a_task_file_touches_no_private_member(name):
    with open(os.path.join(TASKS_DIR, name)) as f:
        assert private_uses(f.read()) == [], name
