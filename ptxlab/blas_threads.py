"""Run numpy's BLAS single-threaded around the small matrix products of the tensor-core model.

The MMA model's float64 products are small (128 x 64 x 256): single-threaded OpenBLAS does one in ~0.1 ms, while a
multi-threaded OpenBLAS on a loaded 2-core machine (CI, parallel pytest workers) measured 10-16 ms for the same
product, spinning threads against each other. :func:`single_threaded` switches numpy's bundled OpenBLAS to one thread
for the duration of a ``with`` block and restores the previous count. Where the BLAS is not numpy's bundled
scipy-openblas (or its symbols are absent) it does nothing: only speed depends on it, never a result.
"""
from __future__ import annotations

import ctypes
import glob
import os
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator, Optional, Tuple

__all__ = ["single_threaded", "controls"]

_SUFFIXES = ("64_", "_64_", "")


@lru_cache(maxsize=1)
def controls() -> Optional[Tuple[object, object]]:
    """(get_num_threads, set_num_threads) of numpy's bundled OpenBLAS, or None."""
    import numpy

    libdir = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libdir, "lib*openblas*.so*"))):
        try:
            lib = ctypes.CDLL(path)     # already loaded by numpy: same handle
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suf in _SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suf}", None)
                set_ = getattr(lib, f"{prefix}_set_num_threads{suf}", None)
                if get is not None and set_ is not None:
                    get.restype = ctypes.c_int
                    set_.argtypes = [ctypes.c_int]
                    return get, set_
    return None


@contextmanager
def single_threaded() -> Iterator[None]:
    ctl = controls()
    if ctl is None:
        yield
        return
    get, set_ = ctl
    prev = get()
    if prev == 1:
        yield
        return
    set_(1)
    try:
        yield
    finally:
        set_(prev)
