"""Locate toolchain pieces installed from pip wheels: nvdisasm, CUTLASS headers, the compile cache dir."""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from ptxlab.errors import PtxlabError

ENV_CACHE = "PTXLAB_CACHE"
ENV_NVDISASM = "PTXLAB_NVDISASM"

__all__ = ["cache_dir", "cache_warning", "CacheWarning", "cuda_include_dirs", "cutlass_include_dir", "nvdisasm_path",
           "nvidia_roots"]


def nvidia_roots() -> Iterator[Path]:
    """Yield every directory of the ``nvidia`` namespace package (where the pip CUDA wheels install)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            yield Path(loc)
    for sp in sys.path:
        cand = Path(sp) / "nvidia"
        if cand.is_dir():
            yield cand


def nvdisasm_path() -> Path:
    """Path of the nvdisasm binary: ``$PTXLAB_NVDISASM``, the nvidia-cuda-nvdisasm wheel, or ``PATH``."""
    env = os.environ.get(ENV_NVDISASM)
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise PtxlabError(f"{ENV_NVDISASM}={env!r} is not an executable file; fix or unset it")
    seen = []
    for root in nvidia_roots():
        for sub in ("cu13", "cu12", "cuda_nvdisasm", ""):
            cand = root / sub / "bin" / "nvdisasm" if sub else root / "bin" / "nvdisasm"
            seen.append(str(cand))
            if cand.is_file() and os.access(cand, os.X_OK):
                return cand
    which = shutil.which("nvdisasm")
    if which:
        return Path(which)
    raise PtxlabError(
        "nvdisasm not found (looked in: " + ", ".join(dict.fromkeys(seen)) + ", and PATH); "
        "install it with `pip install nvidia-cuda-nvdisasm` or set PTXLAB_NVDISASM=/path/to/nvdisasm"
    )


def cuda_include_dirs() -> list:
    """CUDA headers from the pip wheels (nvidia-cuda-runtime: cuda_fp16.h ...; nvidia-cuda-cccl: cuda/std ...).

    NVRTC ships only its builtin headers; these make ``#include <cuda_fp16.h>`` and CuTe/CUTLASS includes work.
    """
    out = []
    for root in nvidia_roots():
        for sub in ("cu13", "cu12"):
            inc = root / sub / "include"
            if (inc / "cuda_fp16.h").is_file() and inc not in out:
                out.append(inc)
            if (inc / "cccl").is_dir() and inc / "cccl" not in out:
                out.append(inc / "cccl")
    if not any((d / "cuda" / "std").is_dir() for d in out):
        # no pip CCCL (e.g. an image with the CUDA toolkit and no nvidia-cuda-cccl wheel): the toolkit's own headers,
        # last, so the standard-header shims (toolchain/stdshim.py) find <cuda/std/...>
        for base in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
            if not base:
                continue
            for inc in (Path(base) / "include" / "cccl", Path(base) / "include"):
                if (inc / "cuda" / "std").is_dir():
                    out.append(inc)
                    break
            else:
                continue
            break
    return out


def cutlass_include_dir() -> Path:
    """Include directory of the CUTLASS/CuTe headers shipped in the nvidia-cutlass wheel (contains cute/, cutlass/)."""
    spec = importlib.util.find_spec("cutlass_library")
    roots = []
    if spec is not None and spec.submodule_search_locations:
        roots = [Path(p) for p in spec.submodule_search_locations]
    elif spec is not None and spec.origin:
        roots = [Path(spec.origin).parent]
    for root in roots:
        cand = root / "source" / "include"
        if (cand / "cutlass").is_dir():
            return cand
    raise PtxlabError(
        "CUTLASS headers not found (expected cutlass_library/source/include from the nvidia-cutlass wheel); "
        "install them with `pip install nvidia-cutlass`"
    )


_USABLE: dict = {}     # configured cache dir -> the dir actually used (itself, or the fallback after one warning)


def _probe(path: Path) -> None:
    """Create ``path`` if needed and write + remove a file there; OSError when that is impossible."""
    path.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path, prefix=".probe-")
    os.close(fd)
    os.unlink(tmp)


def cache_dir(create: bool = True) -> Path:
    """Compile cache directory: ``$PTXLAB_CACHE`` or ``~/.cache/ptxlab``. When it cannot be used (not a directory,
    read-only, full, no permission) a per-user temporary cache is used instead, after one warning line
    (:class:`CacheWarning`); when that fails too, a PtxlabError says so."""
    env = os.environ.get(ENV_CACHE)
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "ptxlab"
    used = _USABLE.get(path)
    if used is not None:
        return used
    try:
        _probe(path)
        _USABLE[path] = path
        return path
    except OSError as exc:
        why = exc.strerror or str(exc)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    fallback = Path(tempfile.gettempdir()) / f"ptxlab-cache-{uid}"
    try:
        _probe(fallback)
    except OSError as exc2:
        raise PtxlabError(f"compile cache {path} is unusable ({why}) and so is the fallback {fallback} "
                          f"({exc2.strerror or exc2}); set {ENV_CACHE} to a writable directory") from None
    cache_warning(f"compile cache {path} is unusable ({why}); using {fallback} for this run (set {ENV_CACHE} to a "
                  "writable directory)")
    _USABLE[path] = fallback
    return fallback


class CacheWarning(UserWarning):
    """The compile cache could not be used as configured (unusable directory, damaged or unwritable entry)."""


def cache_warning(msg: str) -> None:
    """One line on stderr (``<ptxlab cache>: CacheWarning: ...``), through Python's warnings so it can be filtered."""
    import warnings

    warnings.warn_explicit(CacheWarning(msg), CacheWarning, "<ptxlab cache>", 0)
