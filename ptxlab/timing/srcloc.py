"""Source locations of trace events that name files that exist, at their lines in those files.

NVRTC records a module's main file under the ``name`` given to ``ptxlab.compile`` (resolved against the process's
working directory when relative), and counts lines of the source text it was given.  A module whose source is a
kernel file with lines prepended (the production GEMV: ``#define`` lines for its configuration, then
``ptxlab/kernels/nvfp4_gemv_cudacore.cu``) therefore has ``.loc`` entries naming a file that does not exist, shifted
by the prepended lines.  ``resolver(module)`` maps such a (file, line) to the real file (same base name, found in
the module's ``-I`` directories or ``ptxlab/kernels``) and line, when the module's source ends with that file's text;
a line inside the prepended part is named ``<name> (prepended line N)``.  Files that exist are kept.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional


def _candidates(module) -> list:
    dirs = []
    for o in getattr(module, "options", ()) or ():
        o = str(o)
        if o.startswith("-I") and len(o) > 2:
            dirs.append(Path(o[2:]))
    from ptxlab.kernels import KERNELS_DIR
    dirs.append(Path(KERNELS_DIR))
    return dirs


def resolver(module) -> Callable[[Optional[tuple]], Optional[tuple]]:
    """fn((file, line)) -> (file, line) as described in the module docstring (cached per file name)."""
    src = getattr(module, "source", "") or ""
    cache: dict = {}

    def fix(name: str):
        if name in cache:
            return cache[name]
        out = None
        if not os.path.isfile(name):
            base = os.path.basename(name)
            for d in _candidates(module):
                p = d / base
                if p.is_file():
                    text = p.read_text(errors="replace")
                    if text and src.endswith(text):
                        out = (str(p), src[:len(src) - len(text)].count("\n"))
                        break
        cache[name] = out
        return out

    def resolve(loc):
        if not loc:
            return loc
        f, n = loc[0], int(loc[1])
        hit = fix(f)
        if hit is None:
            return (f, n)
        path, off = hit
        if n > off:
            return (path, n - off)
        return (f"{os.path.basename(f)} (prepended line {n})", n)
    return resolve


def short(path: str) -> str:
    """A path relative to the working directory when it lies below it (events and tables stay readable)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path
