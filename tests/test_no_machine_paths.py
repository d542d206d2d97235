"""No absolute path of one developer's machine in the code, tests, benchmarks and docs a clone ships (a test that
reads a fixed site-packages path silently skipped 75 CUTLASS cross-checks); paths come from ptxlab.toolchain."""
from __future__ import annotations

import re
from pathlib import Path

from repo_root import REPO as ROOT

SCANNED = ("ptxlab", "stages", "tests", "benchmarks", "ptx_docs", ".ci", "lab.py", "README.md", "pyproject.toml")
SUFFIXES = {".py", ".sh", ".md", ".cu", ".cuh", ".toml", ".txt", ".json", ".cfg", ""}
# home directories, this team's work tree, a temporary virtualenv, another interpreter's site-packages
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|Users|root|scratch)/|/tmp/venv|/(?:usr|opt)/[^\s`'\"]*site-packages")


def _files() -> list[Path]:
    out = []
    for name in SCANNED:
        p = ROOT / name
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out += [f for f in p.rglob("*") if f.is_file() and f.suffix in SUFFIXES and "__pycache__" not in f.parts]
    return out


def test_pattern_catches_machine_paths() -> None:
    for bad in ("/tmp/venv/lib/python3.11/site-packages/cutlass_library", "see /work/shared/reference/x.md",
                "/home/alice/ptxlab", "`/Users/bob/x`", "/usr/lib/python3/site-packages/foo"):
        assert MACHINE_PATH.search(bad), bad
    for ok in ("tests/work/x", "~/.cache/ptxlab", "site-packages/nvidia/cu13/include", "/usr/local/cuda/include"):
        assert not MACHINE_PATH.search(ok), ok


def test_no_machine_paths() -> None:
    files = _files()
    assert len(files) > 100
    me = Path(__file__).resolve()
    hits = []
    for f in files:
        if f.resolve() == me:
            continue
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "absolute paths of a developer machine (use ptxlab.toolchain helpers or relative paths):\n" + \
        "\n".join(hits)
