"""The package's layers import downward only, without cycles, and touch no other layer's
private members (DESIGN.md §1, issue 11).

Layers, lowest first (a module may import its own layer and the layers below it):

    0  engine, math                (and sim_node.resources: file locations, imports nothing)
    1  model
    2  sim
    3  plan, pybullet, gym, viewer
    4  plugins, ros                (and the generated interfaces sim_node.msg / srv / action)
    5  the package face: sim_node/__init__.py, __main__.py, tour.py

Within layer 4: ros never imports plugins (they are loaded through entry points); plugins
import only the ROS message helpers of ros (ROS_HELPERS), never the node or its services.

Every import counts: module level, inside functions, under TYPE_CHECKING, relative ones; Python
modules are parsed with `ast`, Cython files (.pyx, .pxd) scanned for their import and cimport
lines. Import cycles between modules are reported with the modules on the cycle.

Private access: outside the engine, an attribute ``obj._name`` (not ``self`` / ``cls``) or an
import of ``_name`` whose name is defined only in another layer (as a ``_name`` function,
class, or attribute assigned there) reads that layer's private member. Names defined in the
reader's own layer are taken as its own (a name both layers define is not flagged: the check is
practical, not a type analysis). ALLOWED lists the exceptions, each with its reason.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sim_node"

LAYERS = {"engine": 0, "resources": 0, "model": 1, "sim": 2, "plan": 3, "pybullet": 3,
          "gym": 3, "viewer": 3, "math": 0, "plugins": 4, "ros": 4, "msg": 4, "srv": 4,
          "action": 4}
TOP = 5                 # sim_node/__init__.py, __main__.py, tour.py: the package's face
# the modules of ros that plugins may import: message helpers, no node, no services
ROS_HELPERS = {"ros.stamps", "ros.cdr", "ros.namespaces"}
# (importing file relative to sim_node/, private name): reason. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {}

_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))", re.M)
_CYTHON_PRIVATE = re.compile(r"(?:\bdef\s+|\bclass\s+|\.)(_[A-Za-z]\w*)\b(?=\s*[(:=])"
                             r"|\bcdef\s+(?:(?:public|readonly|inline)\s+)*[\w\[\]:, .*]+?\s"
                             r"(_[A-Za-z]\w*)\b")


@dataclass(frozen=True)
class Import:
    source: str         # importing module (dotted)
    target: str         # imported module (dotted, resolved to a module of the package)
    names: tuple        # names imported from it (from-imports)
    line: int


@dataclass
class Module:
    name: str           # dotted
    path: Path
    tree: ast.Module | None      # None for Cython files


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def load_modules(root: Path) -> dict[str, Module]:
    modules = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxd") or "__pycache__" in path.parts:
            continue
        name = module_name(path, root)
        tree = ast.parse(path.read_text(), str(path)) if path.suffix == ".py" else None
        if name in modules and tree is None:
            continue            # a .pxd beside its .pyx: one module
        modules[name] = Module(name, path, tree)
    return modules


def layer_of(module: str, package: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__", "tour"):
        return TOP
    return LAYERS.get(parts[1], TOP)


def _resolve(target: str, modules: dict, package: str) -> str | None:
    # the longest prefix of target that is a module of the package (None: not ours)
    if target != package and not target.startswith(package + "."):
        return None
    parts = target.split(".")
    while len(parts) > 2:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    # a layer package, or one generated at build time (sim_node.msg: not in the tree)
    return ".".join(parts)


def imports_of(module: Module, modules: dict, package: str) -> list[Import]:
    found = []
    is_package = module.path.name.startswith("__init__")
    if module.tree is None:
        for match in _CYTHON_IMPORT.finditer(module.path.read_text()):
            target = match.group(1) or match.group(2)
            if target.startswith("."):      # relative cimport
                target = _absolute(module.name, is_package, target, 0)
            resolved = _resolve(target, modules, package)
            if resolved:
                line = module.path.read_text().count("\n", 0, match.start()) + 1
                found.append(Import(module.name, resolved, (), line))
        return found
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                resolved = _resolve(alias.name, modules, package)
                if resolved:
                    found.append(Import(module.name, resolved, (), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = (_absolute(module.name, is_package, "." * node.level + (node.module or ""), 0)
                    if node.level else node.module or "")
            for alias in node.names:
                # `from pkg import submodule` imports the submodule
                resolved = _resolve(f"{base}.{alias.name}", modules, package)
                if resolved == f"{base}.{alias.name}" and resolved in modules:
                    found.append(Import(module.name, resolved, (), node.lineno))
                    continue
                resolved = _resolve(base, modules, package)
                if resolved:
                    found.append(Import(module.name, resolved, (alias.name,), node.lineno))
    return found


def _absolute(current: str, is_package: bool, relative: str, _unused: int) -> str:
    level = len(relative) - len(relative.lstrip("."))
    parts = current.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    rest = relative.lstrip(".")
    return ".".join(parts + ([rest] if rest else []))


def _rel(module: Module, root: Path) -> str:
    return str(module.path.relative_to(root))


def upward_imports(modules: dict, root: Path, package: str) -> list[str]:
    problems = []
    for module in modules.values():
        src = layer_of(module.name, package)
        src_part = module.name.split(".")[1] if "." in module.name else ""
        for imp in imports_of(module, modules, package):
            dst = layer_of(imp.target, package)
            dst_part = imp.target.split(".")[1] if "." in imp.target else ""
            where = f"{_rel(module, root)}:{imp.line}"
            if dst > src:
                problems.append(f"{where}: {module.name} (layer {src}) imports {imp.target} "
                                f"(layer {dst}): layers import downward only "
                                f"(engine/math < model < sim < plan/pybullet/gym/viewer < "
                                f"plugins/ros)")
            elif (src_part != "engine" and dst_part == "engine"
                  and imp.target not in (f"{package}.engine", f"{package}.engine.api")):
                problems.append(f"{where}: {module.name} imports {imp.target}: the layers "
                                f"above reach the engine only through its face, "
                                f"{package}.engine.api")
            elif src_part == "ros" and dst_part == "plugins":
                problems.append(f"{where}: {module.name} imports {imp.target}: ros never "
                                f"imports plugins (they are loaded through entry points)")
            elif (src_part == "plugins" and dst_part == "ros"
                  and imp.target.split(".", 1)[1] not in ROS_HELPERS):
                problems.append(f"{where}: {module.name} imports {imp.target}: plugins import "
                                f"only the ROS message helpers ({', '.join(sorted(ROS_HELPERS))}),"
                                f" never the node or its services")
    return list(dict.fromkeys(problems))        # (one line importing several names: once)


def import_cycles(modules: dict, package: str) -> list[list[str]]:
    """The cycles of the module import graph: one cycle (a list of modules, the first
    repeated at the end) per strongly connected component of more than one module or with a
    module importing itself."""
    graph = {name: sorted({i.target for i in imports_of(m, modules, package)
                           if i.target in modules})
             for name, m in modules.items()}
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def connect(v):     # Tarjan, iterative enough for a package's depth
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                components.append(set(component))

    for v in graph:
        if v not in index:
            connect(v)
    cycles = []
    for component in components:
        start = min(component)
        cycles.append(_cycle_through(start, component, graph))
    return cycles


def _cycle_through(start: str, component: set, graph: dict) -> list[str]:
    # a shortest path start -> ... -> start inside the component (breadth first)
    previous = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in graph[v]:
                if w == start:
                    path = [v]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if w in component and w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    return [start, start]


def private_definitions(modules: dict, package: str) -> dict[int, set]:
    """layer -> the private names (_x) its modules define: functions, classes, attributes
    assigned (self._x = ..., obj._x = ...), module and class variables."""
    defined: dict[int, set] = {}
    for module in modules.values():
        names = defined.setdefault(layer_of(module.name, package), set())
        if module.tree is None:
            for match in _CYTHON_PRIVATE.finditer(module.path.read_text()):
                names.add(match.group(1) or match.group(2))
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Attribute):
                            names.add(sub.attr)
                        elif isinstance(sub, ast.Name):
                            names.add(sub.id)
    return {layer: {n for n in names if _private(n)} for layer, names in defined.items()}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_access(modules: dict, root: Path, package: str) -> list[str]:
    defined = private_definitions(modules, package)
    problems = []
    for module in modules.values():
        src = layer_of(module.name, package)
        if module.tree is None or src == LAYERS["engine"]:
            continue
        own = defined.get(src, set())
        others = set().union(*(names for layer, names in defined.items() if layer != src))
        rel = _rel(module, root)
        accesses = []
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                accesses.append((node.attr, node.lineno, ast.unparse(node)))
        for imp in imports_of(module, modules, package):
            if layer_of(imp.target, package) != src:
                accesses += [(n, imp.line, f"from {imp.target} import {n}")
                             for n in imp.names if _private(n)]
        for name, line, text in accesses:
            if name in own or name not in others or (rel, name) in ALLOWED:
                continue
            problems.append(f"{rel}:{line}: {text} reads '{name}', a private member of "
                            f"another layer: use (or add) a public API of that layer")
    return list(dict.fromkeys(problems))


def check(root: Path) -> list[str]:
    """Every layering problem of the package at root (a directory named like the package)."""
    package = root.name
    modules = load_modules(root)
    problems = upward_imports(modules, root, package)
    problems += [f"import cycle: {' -> '.join(cycle)}" for cycle in import_cycles(modules,
                                                                                   package)]
    problems += private_access(modules, root, package)
    return problems


# -- the package -----------------------------------------------------------------------------
def test_the_package_imports_downward_without_cycles_or_private_access():
    problems = check(PACKAGE)
    assert not problems, "\n" + "\n".join(problems)


def test_allowed_exceptions_are_still_needed_and_explained():
    # an entry of ALLOWED that no longer matches anything is stale: remove it
    for (path, name), reason in ALLOWED.items():
        assert reason.strip(), f"ALLOWED[{path}, {name}] needs a reason"
        assert (PACKAGE / path).exists(), f"ALLOWED names {path}, which does not exist"
        assert re.search(rf"\b{re.escape(name)}\b", (PACKAGE / path).read_text()), \
            f"ALLOWED[{path}, {name}]: {path} no longer uses {name}"


def test_every_module_is_assigned_a_layer():
    modules = load_modules(PACKAGE)
    assert len(modules) > 50
    for name in modules:
        parts = name.split(".")
        assert len(parts) == 1 or parts[1] in LAYERS or parts[1] in ("__main__", "tour"), \
            f"{name}: no layer (add it to LAYERS in tests/test_layers.py)"


# -- the checker itself, on planted trees ----------------------------------------------------
def _tree(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "pkg"
    for rel, text in {"__init__.py": "", "engine/__init__.py": "", "model/__init__.py": "",
                      "sim/__init__.py": "", "ros/__init__.py": "", "plugins/__init__.py": "",
                      **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_clean_tree_passes(tmp_path):
    root = _tree(tmp_path, {
        "engine/kernel.pyx": "from libc.math cimport sqrt\ncdef double _scratch\n",
        "model/world.py": "from pkg.engine.api import kernel\n",
        "sim/simulator.py": "from pkg.model.world import *\nclass S:\n"
                            "    def f(self):\n        return self._x\n",
        "ros/stamps.py": "import math\n",
        "plugins/imu.py": "from pkg.ros.stamps import math\nfrom pkg.sim import simulator\n",
        "ros/node.py": "from pkg.sim.simulator import S\nfrom . import stamps\n"})
    assert check(root) == []


def test_an_upward_import_is_named_with_file_line_and_rule(tmp_path):
    root = _tree(tmp_path, {"model/world.py": "import math\n\n\ndef f():\n"
                                              "    from pkg.sim import simulator\n",
                            "sim/simulator.py": ""})
    [problem] = check(root)
    assert problem.startswith("model/world.py:5: pkg.model.world (layer 1) imports "
                              "pkg.sim.simulator (layer 2): layers import downward only")


def test_a_relative_upward_import_is_found(tmp_path):
    root = _tree(tmp_path, {"sim/simulator.py": "from ..ros import node\n", "ros/node.py": ""})
    [problem] = check(root)
    assert problem.startswith("sim/simulator.py:1: pkg.sim.simulator (layer 2) imports "
                              "pkg.ros.node (layer 4)")


def test_a_cython_upward_cimport_is_found(tmp_path):
    root = _tree(tmp_path, {"engine/scene.pyx": "import numpy\nfrom pkg.model.robot cimport R\n",
                            "model/robot.py": ""})
    [problem] = check(root)
    assert problem.startswith("engine/scene.pyx:2: pkg.engine.scene (layer 0) imports "
                              "pkg.model.robot (layer 1)")


def test_the_engine_is_reached_only_through_its_face(tmp_path):
    root = _tree(tmp_path, {"engine/api.pyx": "from pkg.engine import kernel\n",
                            "engine/kernel.pyx": "cdef double x\n",
                            "model/robot.py": "from pkg.engine.api import kernel\n",
                            "sim/body.py": "def f():\n    from pkg.engine import kernel\n"})
    problems = check(root)
    assert len(problems) == 1, problems
    assert problems[0].startswith("sim/body.py:2: pkg.sim.body imports pkg.engine.kernel")
    assert "only through its face, pkg.engine.api" in problems[0]


def test_ros_importing_plugins_and_plugins_importing_the_node_are_refused(tmp_path):
    root = _tree(tmp_path, {"ros/demo.py": "from pkg.plugins.common import JointLayout\n",
                            "plugins/common.py": "JointLayout = 1\n",
                            "plugins/imu.py": "def f():\n    import pkg.ros.node\n",
                            "ros/node.py": ""})
    problems = check(root)
    assert len(problems) == 2
    assert problems[0].startswith("plugins/imu.py:2: pkg.plugins.imu imports pkg.ros.node: "
                                  "plugins import only the ROS message helpers") \
        or problems[1].startswith("plugins/imu.py:2")
    assert any(p.startswith("ros/demo.py:1: pkg.ros.demo imports pkg.plugins.common: ros "
                            "never imports plugins") for p in problems)


def test_an_import_cycle_is_reported_with_its_modules(tmp_path):
    root = _tree(tmp_path, {"model/world.py": "def read():\n    from pkg.model import worldfile\n",
                            "model/worldfile.py": "from pkg.model.world import read\n",
                            "model/a.py": "import pkg.model.b\n", "model/b.py": "import pkg.model.c\n",
                            "model/c.py": "from pkg.model import a\n"})
    problems = check(root)
    assert sorted(problems) == ["import cycle: pkg.model.a -> pkg.model.b -> pkg.model.c -> "
                                "pkg.model.a",
                                "import cycle: pkg.model.world -> pkg.model.worldfile -> "
                                "pkg.model.world"]


def test_private_access_across_layers_is_refused(tmp_path):
    root = _tree(tmp_path, {
        "sim/simulator.py": "class Simulator:\n    def __init__(self):\n"
                            "        self._layout = None\n\n\ndef _helper():\n    pass\n",
        "model/surface.py": "def _harmonic(a, b):\n    return a\n",
        "sim/body.py": "from pkg.model.surface import _harmonic\n\n\n"
                       "def f(sim):\n    return sim._layout\n",     # same layer: fine
        "plugins/common.py": "def f(sim):\n    return sim._layout\n",
        "ros/node.py": "from pkg.sim.simulator import _helper\n"})
    problems = check(root)
    assert sorted(problems) == [
        "plugins/common.py:2: sim._layout reads '_layout', a private member of another layer:"
        " use (or add) a public API of that layer",
        "ros/node.py:1: from pkg.sim.simulator import _helper reads '_helper', a private "
        "member of another layer: use (or add) a public API of that layer",
        "sim/body.py:1: from pkg.model.surface import _harmonic reads '_harmonic', a private "
        "member of another layer: use (or add) a public API of that layer"]


@pytest.mark.parametrize("receiver", ["self", "cls"])
def test_own_private_members_are_fine(tmp_path, receiver):
    root = _tree(tmp_path, {"model/robot.py": "class R:\n    _n = 1\n",
                            "plugins/imu.py": f"class P:\n    def f({receiver}):\n"
                                              f"        return {receiver}._n\n"})
    assert check(root) == []
