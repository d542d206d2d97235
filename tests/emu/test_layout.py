"""The emulator's layered layout (ptxlab/emu/__init__.py): every module sits in a layer, the tests mirror the layers,
and the flat module names of before the layers still import, as the same module objects, with a DeprecationWarning."""
from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from repo_root import REPO

EMU = REPO / "ptxlab" / "emu"
LAYERS = ("core", "checks", "hw", "engine", "ops")


def test_emulator_folder_holds_only_layers() -> None:
    flat = sorted(p.name for p in EMU.glob("*.py") if p.name not in ("__init__.py", "device.py"))
    assert not flat, f"modules outside the layers: {flat} (put them in one of {LAYERS})"
    assert sorted(p.name for p in EMU.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(LAYERS)


def test_tests_mirror_the_layers() -> None:
    tests = Path(__file__).resolve().parent
    rooms = sorted(p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert rooms == sorted(LAYERS), rooms
    for room in rooms:
        assert list((tests / room).glob("test_*.py")), f"tests/emu/{room}/ has no tests"


@pytest.mark.parametrize("old", sorted(importlib.import_module("ptxlab.emu").MOVED))
def test_old_module_names_still_import(old: str) -> None:
    import ptxlab.emu

    new = importlib.import_module(f"ptxlab.emu.{ptxlab.emu.MOVED[old]}")
    sys.modules.pop(f"ptxlab.emu.{old}", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module(f"ptxlab.emu.{old}")
    assert mod is new and mod.__spec__.name == new.__name__  # one module object; its own spec kept
    assert any(issubclass(w.category, DeprecationWarning) and ptxlab.emu.MOVED[old] in str(w.message) for w in caught)


def test_public_names_and_old_imports_in_a_fresh_interpreter() -> None:
    code = ("import warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
            "from ptxlab.emu import EmuDevice, EmuWarning, EmuFidelityWarning, load_families, FAMILY_ERRORS\n"
            "import ptxlab\nassert isinstance(ptxlab.open_device('emu'), EmuDevice)\n"
            "warnings.simplefilter('ignore', DeprecationWarning)\n"
            "from ptxlab.emu.tma_model import plan_tensor_load\nfrom ptxlab.emu.machine import run_kernel\n"
            "from ptxlab.emu import ops_float\nimport ptxlab.emu.hw.tma as t\n"
            "assert t.plan_tensor_load is plan_tensor_load and ops_float.__name__ == 'ptxlab.emu.ops.floating_point'\n"
            "print('ok')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO.parent,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_unknown_name_is_an_attribute_error() -> None:
    import ptxlab.emu

    with pytest.raises(AttributeError, match="no_such"):
        ptxlab.emu.no_such
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ptxlab.emu.no_such_module")


def _imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every module a file's import statements name (relative ones resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    rel = path.relative_to(REPO).with_suffix("").parts
    here = list(rel[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - (node.level - 1)] if node.level else []
            src = ".".join(base + ([node.module] if node.module else []))
            out += [(node.lineno, src)] + [(node.lineno, f"{src}.{a.name}") for a in node.names]
    return out


def test_nothing_in_the_repo_uses_the_old_names() -> None:
    import ptxlab.emu

    old = {f"ptxlab.emu.{name}" for name in ptxlab.emu.MOVED}
    files = [p for top in ("ptxlab", "tests", "benchmarks", "tools", "stages") for p in (REPO / top).rglob("*.py")]
    files.append(REPO / "lab.py")
    bad = [f"{p.relative_to(REPO)}:{line}: {name}" for p in files if p != Path(__file__).resolve()
           for line, name in _imported_names(p) if name in old or any(name.startswith(o + ".") for o in old)]
    assert len(files) > 200 and not bad, "imports of moved emulator modules (use the new path):\n" + "\n".join(bad)
