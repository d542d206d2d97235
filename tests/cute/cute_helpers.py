"""Running scripts under ``lab.py exec`` in a fresh process (the stand-in libcuda.so.1 must never be loaded into the
pytest worker: later tests there would find an emulated "GPU" through cuda-python)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"

def _need_cute():
    spec = importlib.util.find_spec("cutlass")        # (not imported here: the scripts import it in their process)
    if spec is None or not any((Path(p) / "cute").is_dir() for p in spec.submodule_search_locations or ()):
        pytest.fail("the CuTe DSL is not installed: pip install -e '.[test,cute]' (the README's and .ci/run's "
                    "install; these tests do not skip)", pytrace=False)


# the CuTe DSL comes with the extra .[cute], which .ci/run installs: without it these tests fail (never skip)
needs_cute = pytest.mark.usefixtures("cute_dsl")


@pytest.fixture
def cute_dsl():
    _need_cute()


def run_exec(script, *args: str, timeout: int = 600, env: dict | None = None, opts=("--no-torch-cuda",)):
    """``python lab.py exec [opts] script args`` from the repository root; returns the CompletedProcess."""
    e = dict(os.environ)
    e.update(env or {})
    e.pop("CUTE_DSL_DUMP_DIR", None)
    return subprocess.run([sys.executable, str(REPO / "lab.py"), "exec", *opts, str(script), *map(str, args)],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout, env=e)
