"""`import ptxlab` alone makes the documented subpackages reachable (README: ptxlab.toolchain.cutlass_include_dir()),
in a fresh interpreter where nothing else imported them."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repo_root import REPO


def _fresh(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO.parent,
                          timeout=120)


def test_cutlass_include_dir_right_after_import_ptxlab() -> None:
    p = _fresh("import sys, ptxlab\n"
               "assert 'ptxlab.toolchain' not in sys.modules\n"
               "d = ptxlab.toolchain.cutlass_include_dir()\n"
               "assert (d / 'cute' / 'atom' / 'copy_traits_sm100.hpp').is_file() and (d / 'cutlass').is_dir()\n"
               "print(ptxlab.__file__)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(REPO / "ptxlab" / "__init__.py")


@pytest.mark.parametrize("name", ["toolchain", "device", "emu", "desc", "lab", "gpumode", "tensormap", "progress"])
def test_subpackage_attribute(name: str) -> None:
    p = _fresh(f"import ptxlab\nm = ptxlab.{name}\nassert m.__name__ == 'ptxlab.{name}', m\n")
    assert p.returncode == 0, p.stderr


def test_unknown_attribute_is_an_attribute_error() -> None:
    p = _fresh("import ptxlab\ntry:\n    ptxlab.no_such_thing\nexcept AttributeError as e:\n    print(e)\n")
    assert p.returncode == 0 and "no attribute 'no_such_thing'" in p.stdout, p.stderr
