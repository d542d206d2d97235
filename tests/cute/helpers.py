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

# the CuTe DSL comes with the optional extra .[cute]; .ci/run installs it (a skip for this reason fails CI)
needs_cute = pytest.mark.skipif(importlib.util.find_spec("cutlass") is None or
                                importlib.util.find_spec("cutlass.cute") is None,
                                reason="CuTe DSL not installed: pip install -e '.[cute]'")


def run_exec(script, *args: str, timeout: int = 600, env: dict | None = None, opts=("--no-torch-cuda",)):
    """``python lab.py exec [opts] script args`` from the repository root; returns the CompletedProcess."""
    e = dict(os.environ)
    e.update(env or {})
    e.pop("CUTE_DSL_DUMP_DIR", None)
    return subprocess.run([sys.executable, str(REPO / "lab.py"), "exec", *opts, str(script), *map(str, args)],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout, env=e)
