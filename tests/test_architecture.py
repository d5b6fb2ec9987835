"""The package's layers hold (docs/architecture.md): every import of every module points down or
sideways, never up; no import circles; SAPIEN is imported only in ``simulo_envs/sim/``.

Imports are read from the source (``ast``), at any depth: module level, inside functions and
classes, under ``if``/``try``, and ``importlib.import_module("...")`` with a literal name. A
module that imports ``a.b.c`` also runs the ``__init__`` of ``a.b``, so that package counts as
imported too (except the top package ``simulo_envs``, the facade above everything).
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where each import name's source lives: tasks/ and agents/ install as simulo_envs.tasks / .agents.
SOURCE_DIRS = {"simulo_envs": "simulo_envs", "simulo_envs.tasks": "tasks", "simulo_envs.agents": "agents"}

# Top to bottom; a module may import from its own layer and the layers below it. A name is a
# module or a package (everything under it). The same table, explained: docs/architecture.md.
LAYERS = (
    ("facade", ("simulo_envs",)),  # the package's __init__: re-exports, registers the tasks
    ("integrations", ("simulo_envs.lerobot",)),  # our tasks in another library's convention (no import of it)
    ("training, imitation", ("simulo_envs.training", "simulo_envs.imitation")),
    ("wrappers, datasets", ("simulo_envs.wrappers", "simulo_envs.datasets")),
    ("vector", ("simulo_envs.vector",)),
    ("workers", ("simulo_envs.workers",)),
    ("tasks", ("simulo_envs.tasks",)),
    ("envs", ("simulo_envs.envs",)),
    ("agents and scene objects", ("simulo_envs.agents", "simulo_envs.scene", "simulo_envs.prop", "simulo_envs.robot",
                                  "simulo_envs.articulation", "simulo_envs.articulated_prop",
                                  "simulo_envs.scene_object", "simulo_envs.physical_params")),
    ("controllers and policies", ("simulo_envs.controllers", "simulo_envs.policies")),
    ("sim", ("simulo_envs.sim",)),
    ("foundations", ("simulo_envs.authoring", "simulo_envs.cloner", "simulo_envs.tensors", "simulo_envs.env_ids",
                     "simulo_envs.geometry", "simulo_envs.params_common", "simulo_envs.output_paths",
                     "simulo_envs.progress")),
)

SAPIEN_HOME = "simulo_envs.sim"

# Known debts, one line each (``"module",`` / ``frozenset({...}),``), deleted by whoever pays them:
# the tests below say when one is paid. None today.
KNOWN_SAPIEN_IMPORTS: set[str] = set()
KNOWN_CIRCLES: set[frozenset[str]] = set()


def _modules() -> dict[str, str]:
    """Import name -> source path of every module of the package."""
    out = {}
    for package, folder in SOURCE_DIRS.items():
        base = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, base)
            if package == "simulo_envs" and rel.split(os.sep)[0] in ("tasks", "agents"):
                continue
            parts = [] if rel == "." else rel.split(os.sep)
            for filename in filenames:
                if filename.endswith(".py"):
                    stem = filename[:-3]
                    name = ".".join([package] + parts + ([] if stem == "__init__" else [stem]))
                    out[name] = os.path.join(dirpath, filename)
    return out


MODULES = _modules()


def _imported_names(name: str, path: str) -> list[tuple[str, int]]:
    """``(imported dotted name, line)`` for every import in the module's source, at any depth.
    ``from X import Y`` gives ``X.Y`` (a submodule, or a name in X)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]
            found.append((module, node.lineno))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return found


def _resolve(dotted: str) -> str | None:
    """The package module ``dotted`` names (or lies in), or None outside the package."""
    while dotted:
        if dotted in MODULES:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def _graph() -> tuple[dict[str, set[str]], dict[tuple[str, str], int]]:
    """Module -> the package modules it imports (with the packages whose ``__init__`` those run);
    and the source line of each edge."""
    edges: dict[str, set[str]] = defaultdict(set)
    lines: dict[tuple[str, str], int] = {}
    for name, path in MODULES.items():
        for dotted, line in _imported_names(name, path):
            target = _resolve(dotted)
            if target is None:
                continue
            targets = [target]
            parent = target.rpartition(".")[0]
            while parent and parent != "simulo_envs":  # importing a.b.c runs a.b's __init__ first
                targets.append(parent)
                parent = parent.rpartition(".")[0]
            # A module's own packages are imported before it (``from . import x`` names one): no edge.
            for t in (t for t in targets if not (name == t or name.startswith(t + "."))):
                edges[name].add(t)
                lines.setdefault((name, t), line)
    return edges, lines


def layer_of(module: str) -> int | None:
    """Index in ``LAYERS`` (0 = top) of the longest layer name ``module`` is or lies under."""
    best, depth = None, -1
    for index, (_, names) in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                if prefix == "simulo_envs" and module != prefix:
                    continue  # the facade is the top __init__ alone
                best, depth = index, prefix.count(".")
    return best


def _circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(MODULES):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


EDGES, LINES = _graph()


def _where(module: str, target: str) -> str:
    return f"{os.path.relpath(MODULES[module], ROOT)}:{LINES[(module, target)]}"


def test_the_reader_sees_the_package():
    # The parser finds the modules and their imports (so the checks below cannot pass on nothing).
    assert {"simulo_envs.envs.base_env", "simulo_envs.tasks.franka_lift", "simulo_envs.agents.panda",
            "simulo_envs.sim.physx_cpu", "simulo_envs.cloner.plan"} <= set(MODULES)
    assert "simulo_envs.envs.base_env" in EDGES["simulo_envs.tasks.tabletop"]
    assert "simulo_envs.cloner" in EDGES["simulo_envs.scene"]  # the subpackage __init__ runs too
    name = {module: LAYERS[layer_of(module)][0] for module in ("simulo_envs", "simulo_envs.envs.base_env",
                                                                "simulo_envs.sim.physx_cpu", "simulo_envs.workers.worker")}
    assert name == {"simulo_envs": "facade", "simulo_envs.envs.base_env": "envs", "simulo_envs.sim.physx_cpu": "sim",
                    "simulo_envs.workers.worker": "workers"}
    assert layer_of("simulo_envs.nothing_here") is None


def test_every_module_has_a_layer():
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert not missing, (f"modules in no layer: {missing}; add each (or its folder) to LAYERS in "
                         "tests/test_architecture.py and to docs/architecture.md")


def test_imports_point_down_or_sideways():
    upward = []  # (a module in no layer fails test_every_module_has_a_layer)
    for module, targets in sorted(EDGES.items()):
        for target in sorted(targets):
            if None not in (layer_of(target), layer_of(module)) and layer_of(target) < layer_of(module):
                upward.append(f"{_where(module, target)}: {module} ({LAYERS[layer_of(module)][0]}) imports "
                              f"{target} ({LAYERS[layer_of(target)][0]}), a layer above it")
    assert not upward, ("imports against the layers (docs/architecture.md); move the shared piece down "
                        "rather than importing upward or lazily:\n" + "\n".join(upward))


def test_no_import_circles():
    circles = _circles(EDGES)
    new = [sorted(c) for c in circles if c not in KNOWN_CIRCLES]
    assert not new, ("import circles (a concept split in the wrong place: move the shared piece into a module "
                     "both can import):\n" + "\n".join(" <-> ".join(c) for c in new))
    paid = [sorted(c) for c in KNOWN_CIRCLES if c not in circles]
    assert not paid, f"these circles are gone: delete their line from KNOWN_CIRCLES: {paid}"


def test_sapien_is_imported_only_in_sim():
    leaks, seen = {}, set()
    for module, path in sorted(MODULES.items()):
        if module == SAPIEN_HOME or module.startswith(SAPIEN_HOME + "."):
            continue
        for dotted, line in _imported_names(module, path):
            if dotted.split(".")[0] == "sapien":
                seen.add(module)
                if module not in KNOWN_SAPIEN_IMPORTS:
                    leaks.setdefault(f"{os.path.relpath(path, ROOT)}:{line}", f"{module} imports {dotted}")
    assert not leaks, ("SAPIEN is imported outside simulo_envs/sim/ (add what you need to sim/):\n"
                       + "\n".join(f"{where}: {what}" for where, what in leaks.items()))
    paid = sorted(KNOWN_SAPIEN_IMPORTS - seen)
    assert not paid, f"these modules no longer import SAPIEN: delete their line from KNOWN_SAPIEN_IMPORTS: {paid}"


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_docs_describe_each_layer(layer):
    with open(os.path.join(ROOT, "docs", "architecture.md")) as f:
        text = f.read()
    names = dict(LAYERS)[layer]
    absent = [n for n in names if f"`{n.removeprefix('simulo_envs.') if n != 'simulo_envs' else n}" not in text]
    assert not absent, f"docs/architecture.md does not name {absent} (layer {layer!r})"


INTEGRATIONS = os.path.join(ROOT, "integrations")
"""The other libraries' plugin distributions (``integrations/<distribution>/``), thin over the
integrations layer: each may import ``simulo_envs.lerobot`` (and the other library), nothing
else of ours, so that what LeRobot runs is what ``simulo_envs.lerobot`` tests."""


def _integration_modules() -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(INTEGRATIONS):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "tests") and not d.endswith(".egg-info")]
        for filename in filenames:
            if filename.endswith(".py"):
                path = os.path.join(dirpath, filename)
                out[os.path.relpath(path, ROOT)] = path
    return out


def test_integrations_use_only_the_integrations_layer():
    modules = _integration_modules()
    assert "integrations/lerobot_env_simulo/lerobot_env_simulo/config.py" in modules
    allowed = ("simulo_envs.lerobot",)
    wrong = []
    for rel, path in sorted(modules.items()):
        for dotted, line in _imported_names("integration", path):
            if dotted.split(".")[0] == "simulo_envs" and not any(
                    dotted == a or dotted.startswith(a + ".") for a in allowed) and dotted != "simulo_envs":
                wrong.append(f"{rel}:{line}: imports {dotted}")
    assert not wrong, ("a LeRobot plugin reaches past simulo_envs.lerobot (put what it needs there):\n"
                       + "\n".join(wrong))
