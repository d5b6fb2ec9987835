"""A task file reads the framework through public names only.

Under ``tasks/`` (the shared ``tabletop.py`` included), a private attribute (``_name``, not
dunder) may be read or written only on ``self`` (or through ``super()``), and only when it is
either a function the file defines itself (a hook it overrides: ``_load_scene``,
``_initialize_episode``, ...) or a name of the task's own that no framework class defines (a
cache such as ``tabletop.py``'s ``self._k``). ``self._origin_poses``, ``self._hidden_objects`` or
``self.block._raw_state`` fail: the framework's names are collected from ``simulo_envs/envs/``
(``BaseEnv`` and its mixins: what they assign to ``self._name`` and what their classes define).
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS_DIR = os.path.join(ROOT, "tasks")
ENVS_DIR = os.path.join(ROOT, "simulo_envs", "envs")
TASK_FILES = sorted(name for name in os.listdir(TASKS_DIR) if name.endswith(".py") and name != "__init__.py")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def framework_privates(folder: str = ENVS_DIR) -> frozenset:
    """Every private name the env framework's classes define: methods and class attributes of
    the classes in ``folder``'s modules, and the ``self._name`` they assign."""
    names = set()
    for file in os.listdir(folder):
        if not file.endswith(".py"):
            continue
        with open(os.path.join(folder, file)) as f:
            tree = ast.parse(f.read())
        for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
            for node in cls.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(node.name)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
                elif isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            for node in ast.walk(cls):
                if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                        and isinstance(node.value, ast.Name) and node.value.id == "self"):
                    names.add(node.attr)
    return frozenset(name for name in names if _private(name))


def _on_self(node: ast.expr) -> bool:
    """``self`` or ``super()``."""
    if isinstance(node, ast.Name):
        return node.id == "self"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def private_uses(source: str, framework: frozenset = frozenset()) -> list[str]:
    """``line: .name`` for each private attribute the source reads or writes against the rule
    in the module docstring (``framework``: the framework's private names)."""
    tree = ast.parse(source)
    own = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr) or node.attr in own:
            continue
        if _on_self(node.value) and node.attr not in framework:
            continue
        bad.append(f"{node.lineno}: .{node.attr}")
    return sorted(bad)


def test_the_check_sees_what_it_looks_for():
    framework = framework_privates()
    assert {"_origin_poses", "_env_origins", "_hidden_objects", "_numpy_views", "_load_scene"} <= framework
    source = ("class T:\n    def _load_scene(self):\n        super()._load_scene()\n"
              "        self._goal = self.block._raw_state\n        self.__dict__\n"
              "        self._cache = self._origin_poses\n")
    assert private_uses(source, framework) == ["4: ._raw_state", "6: ._origin_poses"]
    assert len(TASK_FILES) >= 11 and {"franka_lift.py", "so100_lift.py", "tabletop.py"} <= set(TASK_FILES)


@pytest.mark.parametrize("name", TASK_FILES)
def test_a_task_file_touches_no_private_member(name):
    with open(os.path.join(TASKS_DIR, name)) as f:
        assert private_uses(f.read(), framework_privates()) == [], name
