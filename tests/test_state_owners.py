"""Every piece of ``BaseEnv``'s state has one owner (docs/architecture.md, "Who owns BaseEnv's
state"): the class of ``BaseEnv``'s bases (``BaseEnv`` itself or a mixin) that declares the
attribute, as a class-level annotation in its body, and the only class whose code assigns it or
changes it in place. Others read it, or call the owner's methods.

Read from the source (``ast``): ``self.x = ...``, ``self.x += ...``, ``self.x[...] = ...``,
``self.x.y = ...``, and in-place calls (``self.x.add_(...)``, ``self.x.append(...)``, ...) count as
writes of ``x``. Task classes (``tasks/``) write none of the framework's attributes.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import textwrap
from collections import defaultdict

import pytest

from simulo_envs.envs.base_env import BaseEnv
from simulo_envs.envs.faults import Faults
from simulo_envs.envs.randomization import Randomizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Methods that change their object in place: torch's trailing-underscore ones, and the containers'.
MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "discard",
                      "popitem", "sort", "reverse"})

FRAMEWORK = [cls for cls in BaseEnv.__mro__ if cls.__module__.startswith("simulo_envs.envs.")]
# Plain components an env holds (``env.faults``, ...): they keep the env as ``self._env``, own
# their own attributes, and write none of the env's.
COMPONENTS = [Faults, Randomizer]


def _class_tree(cls: type) -> ast.ClassDef:
    return ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]


def declared(cls: type) -> set[str]:
    """The attributes ``cls`` declares: the names annotated in its class body (``ClassVar``\ s
    are class settings, not state), and its properties with a setter."""
    body = _class_tree(cls).body
    names = {node.target.id for node in body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
             and not ast.unparse(node.annotation).startswith("ClassVar")}
    return names | {node.name for node in body if isinstance(node, ast.FunctionDef)
                    and any(ast.unparse(d) == f"{node.name}.setter" for d in node.decorator_list)}


def _self_attr(node: ast.AST):
    """``x`` when ``node`` is ``self.x`` or lies under it (``self.x[i]``, ``self.x.y``), else None."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        node = node.value
    return None


def written(tree: ast.AST) -> dict[str, int]:
    """Attribute of ``self`` -> first line where the code writes it (assignment, augmented
    assignment, item or attribute assignment under it, an in-place method call on it)."""
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and (node.func.attr in MUTATORS or re.fullmatch(r"[a-z][a-z_]*[a-z]_", node.func.attr))):
            targets = [node.func.value]
        for target in targets:
            for leaf in (target.elts if isinstance(target, ast.Tuple) else [target]):
                name = _self_attr(leaf)
                if name is not None:
                    found.setdefault(name, getattr(node, "lineno", 0))
    return found


def _is_env(node: ast.AST, env: str) -> bool:
    """``node`` is ``self`` (``env="self"``) or ``self._env`` (``env="self._env"``)."""
    return ast.unparse(node) == env


def read(tree: ast.AST, env: str = "self") -> set[str]:
    """Attributes read as ``<env>.x``."""
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and _is_env(node.value, env) and isinstance(node.ctx, ast.Load)}


OWNER = {name: cls for cls in FRAMEWORK for name in declared(cls)}


def state_table() -> list[tuple[str, str, list[str]]]:
    """``(attribute, owner, readers)`` for every declared attribute, in ``BaseEnv``'s MRO order."""
    readers = defaultdict(set)
    for cls, env in [(c, "self") for c in FRAMEWORK] + [(c, "self._env") for c in COMPONENTS]:
        for name in read(_class_tree(cls), env):
            if name in OWNER and OWNER[name] is not cls:
                readers[name].add(cls.__name__)
    rows = []
    for cls in FRAMEWORK:
        for name in sorted(declared(cls)):
            rows.append((name, cls.__name__, sorted(readers[name])))
    return rows


def test_the_reader_finds_writes():
    tree = ast.parse("def f(self):\n self.a = 1\n self.b += 1\n self.c[0] = 1\n self.d.e = 1\n"
                     " self.f.add_(1)\n self.g.append(1)\n self.h.seed(1)\n x = self.i\n self.j, k = 1, 2\n")
    assert set(written(tree)) == {"a", "b", "c", "d", "f", "g", "j"}
    assert {"h", "i"} <= read(tree)
    assert OWNER["_elapsed_steps"].__name__ == "StepMixin" and len(FRAMEWORK) >= 10


def test_each_attribute_has_one_owner():
    seen = defaultdict(list)
    for cls in FRAMEWORK:
        for name in declared(cls):
            seen[name].append(cls.__name__)
    shared = {name: owners for name, owners in seen.items() if len(owners) > 1}
    assert not shared, f"attributes declared by more than one class: {shared}"


@pytest.mark.parametrize("cls", FRAMEWORK, ids=lambda c: c.__name__)
def test_a_class_writes_only_what_it_owns(cls):
    path = os.path.relpath(inspect.getsourcefile(cls), ROOT)
    start = inspect.getsourcelines(cls)[1]
    wrong = [f"{path}:{start + line - 1}: {cls.__name__} writes self.{name}, "
             + (f"owned by {OWNER[name].__name__}" if name in OWNER else "declared by no class")
             for name, line in sorted(written(_class_tree(cls)).items()) if OWNER.get(name) is not cls]
    assert not wrong, ("each attribute is written only by the class that declares it (an annotation in its "
                       "body); call a method of the owner instead:\n" + "\n".join(wrong))


def writes_through(tree: ast.AST, receiver) -> list[tuple[int, str, str]]:
    """``(line, attribute, code)`` for each write of ``<r>.x`` where ``receiver(r, x)`` is true
    (``r``: the expression as source text): assignment, augmented assignment or deletion of it or
    of an item or attribute under it, an in-place method call on it (``r.x.add_(...)``,
    ``r.x.append(...)``), and ``setattr(r, "x", ...)``/``delattr(r, "x")``."""
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and (node.func.attr in MUTATORS or re.fullmatch(r"[a-z][a-z_]*[a-z]_", node.func.attr))):
            targets = [node.func.value]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            if receiver(ast.unparse(node.args[0]), node.args[1].value):
                found.append((node.lineno, node.args[1].value, ast.unparse(node)))
            continue
        for target in targets:
            for leaf in (target.elts if isinstance(target, ast.Tuple) else [target]):
                node_ = leaf
                while isinstance(node_, (ast.Subscript, ast.Attribute)):
                    if isinstance(node_, ast.Attribute) and receiver(ast.unparse(node_.value), node_.attr):
                        found.append((node.lineno, node_.attr, ast.unparse(leaf)))
                        break
                    node_ = node_.value
    return found


def test_the_outside_reader_finds_writes():
    tree = ast.parse("def f(env, args):\n env._a = 1\n env._b[0] += 1\n env._c.zero_()\n env._d.append(1)\n"
                     " setattr(env, '_e', 1)\n delattr(env, '_f')\n env.base._g.h = 1\n x = env._i\n"
                     " env._j.clone()\n args._k = 1\n")
    found = {name for _, name, _ in writes_through(tree, lambda r, x: r.startswith("env") and x.startswith("_"))}
    assert found == {"_a", "_b", "_c", "_d", "_e", "_f", "_g"}
    assert ENV_NAME.fullmatch("venv.unwrapped") and ENV_NAME.fullmatch("self._env") and not ENV_NAME.fullmatch("args")
    assert "max_episode_steps" in SETTERS and "agent" not in SETTERS


@pytest.mark.parametrize("cls", COMPONENTS, ids=lambda c: c.__name__)
def test_a_component_writes_none_of_the_envs_attributes(cls):
    tree = _class_tree(cls)
    wrong = [f"{cls.__name__} line {line}: {code}" for line, _, code in writes_through(tree, lambda r, x: r == "self._env")]
    assert not wrong and "_env" in written(tree), "a component writes none of the env's attributes:\n" + "\n".join(wrong)


def test_tasks_write_none_of_the_frameworks_attributes():
    wrong = []
    folder = os.path.join(ROOT, "tasks")
    for filename in sorted(os.listdir(folder)):
        if filename.endswith(".py"):
            with open(os.path.join(folder, filename)) as f:
                tree = ast.parse(f.read())
            wrong += [f"tasks/{filename}:{line}: self.{name} (owned by {OWNER[name].__name__})"
                      for name, line in written(tree).items() if name in OWNER]
    assert not wrong, "tasks write framework state:\n" + "\n".join(wrong)


# Names an env goes by outside its classes: ``env``, ``base``, ``self.env``, ``venv.unwrapped``, ...
ENV_NAME = re.compile(r"(.*\.)?(env|\w*_env|base|unwrapped)")
SETTERS = {name for cls in FRAMEWORK for name in declared(cls) if isinstance(getattr(cls, name, None), property)}


def test_no_other_code_writes_an_envs_state():
    # Outside the env's classes: a write of an owned private attribute (``env._last_obs = ...``,
    # ``env._elapsed_steps.zero_()``) through any name but self, or of an owned public one through
    # a name of an env (``env.agent = ...``). A property with a setter (``env.max_episode_steps =
    # k``) is the owner's method, so it may be assigned.
    def receiver(expr: str, name: str) -> bool:
        return (name in OWNER and name not in SETTERS and expr != "self"
                and (name.startswith("_") or ENV_NAME.fullmatch(expr) is not None))

    wrong = []
    for folder in ("simulo_envs", "tasks", "agents", "scripts", "integrations"):
        for dirpath, _, filenames in os.walk(os.path.join(ROOT, folder)):
            for filename in sorted(f for f in filenames if f.endswith(".py")):
                path = os.path.join(dirpath, filename)
                with open(path) as f:
                    tree = ast.parse(f.read())
                wrong += [f"{os.path.relpath(path, ROOT)}:{line}: {code} (owned by {OWNER[name].__name__})"
                          for line, name, code in writes_through(tree, receiver)]
    assert not wrong, "code outside the env writes its state (call a method of the owner):\n" + "\n".join(wrong)


def test_the_docs_table_is_the_code():
    with open(os.path.join(ROOT, "docs", "architecture.md")) as f:
        text = f.read()
    section = text.split("## Who owns BaseEnv's state", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (.*) \|$", section, flags=re.M)
    documented = {name: (owner, sorted(re.findall(r"`(\w+)`", readers))) for name, owner, readers in rows}
    code = {name: (owner, readers) for name, owner, readers in state_table()}
    assert documented == code, "regenerate the table: python tests/test_state_owners.py"


if __name__ == "__main__":  # prints the docs table
    print("| attribute | owner | read by |\n| --- | --- | --- |")
    for name, owner, readers in state_table():
        print(f"| `{name}` | `{owner}` | {', '.join(f'`{r}`' for r in readers) or 'its owner only'} |")
