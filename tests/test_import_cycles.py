"""No import cycles among ptxlab's modules: a static check (each module's imports read with ``ast``; nothing imported).

What counts (decided here, checked by ``test_ptxlab_has_no_import_time_cycle``): **import-time imports**, i.e. the
import statements a module runs while it is being imported: those of its body, including the ones under
``if``/``try``/``with`` and in class bodies, but not those inside functions (they run at call time, when every module
has finished initialising, so they cannot leave a module half-initialised) and not those under
``if TYPE_CHECKING:``.

Edges: ``import a.b.c`` -> ``a.b.c``; ``from a.b import c`` -> ``a.b.c`` when that is a module of the package, else
``a.b``; relative imports are resolved against the importing module's package (``from ..x import y`` in
``p/q/m.py`` -> ``p.x.y`` or ``p.x``). The implicit import of parent packages is no edge: importing ``p.q.m`` runs
``p/q/__init__.py`` first whoever imports it, so counting that would make every package ``__init__`` that re-exports
its modules a cycle.

Deferred (function-level) imports count too (``test_no_cycle_with_deferred_imports``): a lazy import that closes a
circle is a circle all the same, only hidden until the function runs.

The emulator's layers (``ptxlab/emu/``: core < checks < hw < engine < ops < device, ``LAYERS``) are checked the same
way at package level (``test_emulator_layers_point_down``): a module imports only its own layer and those beneath.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

REPO = Path(__file__).resolve().parents[1]

# ptxlab/emu's layers, bottom first: a module of layer i imports (also inside functions) only layers <= i
LAYERS = ("core", "checks", "hw", "engine", "ops", "device")


def module_files(root: Path, package: str) -> Dict[str, Tuple[Path, bool]]:
    """{dotted module name: (file, is_package)} for every .py file of `package` under `root`."""
    mods = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(body: List[ast.stmt], deferred: bool) -> Iterator[ast.stmt]:
    """Import statements of a statement list: import-time ones; with deferred=True also those in function bodies."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if deferred:
                yield from _import_nodes(node.body, deferred)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _import_nodes(node.orelse, deferred)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, None) or ():
                    yield from _import_nodes([child] if isinstance(child, ast.stmt) else child.body, deferred)


def import_graph(root: Path, package: str, deferred: bool = False) -> Dict[str, Set[str]]:
    """{module: modules of `package` it imports} (import-time imports; deferred=True adds function-level ones)."""
    mods = module_files(root, package)
    graph: Dict[str, Set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        here = name if is_pkg else name.rpartition(".")[0]
        targets = set()
        for node in _import_nodes(ast.parse(path.read_text(), str(path)).body, deferred):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            for alias in node.names:
                targets.add(f"{src}.{alias.name}" if f"{src}.{alias.name}" in mods else src)
        graph[name] = {t for t in targets if t in mods and t != name}
    return graph


def find_cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def describe(graph: Dict[str, Set[str]], cycles: List[List[str]]) -> str:
    lines = []
    for comp in cycles:
        members = set(comp)
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a] & members)]
        lines.append("cycle among " + ", ".join(comp) + ":\n    " + "\n    ".join(edges))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ the package
def test_ptxlab_has_no_import_time_cycle() -> None:
    graph = import_graph(REPO, "ptxlab")
    assert len(graph) > 50
    assert graph["ptxlab.production.gemv"] == {"ptxlab.production.host_io", "ptxlab.production.plan_gemv"}
    cycles = find_cycles(graph)
    assert not cycles, describe(graph, cycles)


def test_no_cycle_with_deferred_imports() -> None:
    graph = import_graph(REPO, "ptxlab", deferred=True)
    cycles = find_cycles(graph)
    assert not cycles, describe(graph, cycles) + "\n(function-level imports count here too)"


def emu_layer(module: str) -> str | None:
    """The layer of a module of ptxlab.emu (None for the package itself, which re-exports)."""
    parts = module.split(".")
    if parts[:2] != ["ptxlab", "emu"] or len(parts) == 2:
        return None
    return parts[2] if parts[2] in LAYERS else "?" + parts[2]


def test_emulator_layers_point_down() -> None:
    graph = import_graph(REPO, "ptxlab", deferred=True)
    emu = [m for m in graph if emu_layer(m)]
    assert {emu_layer(m) for m in emu} == set(LAYERS), sorted({emu_layer(m) for m in emu})  # every module in a layer
    up = [f"{a} -> {b}" for a in emu for b in sorted(graph[a])
          if emu_layer(b) and LAYERS.index(emu_layer(b)) > LAYERS.index(emu_layer(a))]
    assert not up, "emulator imports that point up a layer:\n    " + "\n    ".join(up)


# ------------------------------------------------------------------------------------- the detector itself
def _write(root: Path, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    """pkg: a -> b (relative), b -> sub.c (absolute), sub.c -> a (two-level relative): a cycle of three modules;
    d -> e at import time and e -> d only inside a function; f imports g only under TYPE_CHECKING and g imports f."""
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg.a import X\n",
        "pkg/a.py": "from . import b\nX = 1\n",
        "pkg/b.py": "import os\nfrom pkg.sub import c\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "try:\n    from ..a import X\nexcept ImportError:\n    X = None\n",
        "pkg/d.py": "import pkg.e\n",
        "pkg/e.py": "def f():\n    from pkg import d\n    return d\n",
        "pkg/f.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.g import G\n",
        "pkg/g.py": "from pkg.f import TYPE_CHECKING as G\n",
    })
    return tmp_path


def test_detector_resolves_edges(synthetic: Path) -> None:
    g = import_graph(synthetic, "pkg")
    assert g["pkg"] == {"pkg.a"}
    assert g["pkg.a"] == {"pkg.b"}
    assert g["pkg.b"] == {"pkg.sub.c"}
    assert g["pkg.sub"] == set()
    assert g["pkg.sub.c"] == {"pkg.a"}          # `from ..a import X` inside try: resolved, import-time
    assert g["pkg.d"] == {"pkg.e"} and g["pkg.e"] == set()   # the function-level import is deferred
    assert g["pkg.f"] == set() and g["pkg.g"] == {"pkg.f"}   # TYPE_CHECKING imports never run
    assert import_graph(synthetic, "pkg", deferred=True)["pkg.e"] == {"pkg.d"}


def test_detector_finds_the_cycles(synthetic: Path) -> None:
    assert find_cycles(import_graph(synthetic, "pkg")) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    deferred = find_cycles(import_graph(synthetic, "pkg", deferred=True))
    assert sorted(deferred) == [["pkg.a", "pkg.b", "pkg.sub.c"], ["pkg.d", "pkg.e"]]
    g = import_graph(synthetic, "pkg")
    assert "pkg.sub.c -> pkg.a" in describe(g, find_cycles(g))


def test_detector_passes_an_acyclic_package(synthetic: Path) -> None:
    (synthetic / "pkg" / "sub" / "c.py").write_text("X = 2\n")  # break a -> b -> c -> a
    assert find_cycles(import_graph(synthetic, "pkg")) == []
