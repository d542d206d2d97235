"""Compile the native engine's C (engine.c and its headers) with the system C compiler and load it (ctypes), cached
on disk by content hash.

Entries: ``$PTXLAB_CACHE/emu-native/<k[:2]>/<k>.so``, ``k`` = sha256 of the C sources, the compiler's identity and
the flags, so an edited engine or another compiler makes a new entry.  The shared object is written to a temporary
name and renamed into place (parallel test workers may build it at the same time).  ``CC`` picks the compiler
(default ``cc``, then ``gcc``); ``available()`` says whether one works, once per process.

Flags that matter for bit-exactness: ``-ffp-contract=off`` (no fused multiply-add the interpreter does not do),
no ``-ffast-math``, ``-fwrapv`` (the translations rely on two's-complement wrap-around of signed casts).
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

FLAGS = ("-O3", "-std=gnu11", "-fPIC", "-shared", "-ffp-contract=off", "-fwrapv", "-fno-strict-aliasing",
         "-fno-math-errno", "-w")
_compiler: Optional[tuple] = None      # (path, version line) or () when none works
_libs: dict = {}


class NativeBuildError(RuntimeError):
    pass


def compiler() -> tuple:
    """(path, identity) of a working C compiler, or () (probed once)."""
    global _compiler
    if _compiler is None:
        _compiler = ()
        names = [os.environ["CC"]] if os.environ.get("CC") else ["cc", "gcc"]
        for name in names:
            path = shutil.which(name)
            if not path:
                continue
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.SubprocessError):
                continue
            if out.returncode == 0:
                _compiler = (path, out.stdout.splitlines()[0] if out.stdout else name)
                break
    return _compiler


def available() -> bool:
    return bool(compiler())


def _cache_path(key: str) -> Path:
    from ....toolchain.paths import cache_dir
    return cache_dir() / "emu-native" / key[:2] / f"{key}.so"


HERE = Path(__file__).resolve().parent
SOURCES = ("engine.c", "runtime.h", "alu.h", "fpu.h", "mem.h", "mem_range.h", "fast.h")


def key_of() -> str:
    cc = compiler()
    h = hashlib.sha256()
    h.update(f"emu-native/2/{cc[1] if cc else ''}/{' '.join(FLAGS)}\0".encode())
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (HERE / name).read_bytes())
    return h.hexdigest()


def engine():
    """The engine's ctypes library (compiled now, or from the disk cache; once per process: the sources are read
    the first time only, so editing them under a running process does not change its engine)."""
    lib = _libs.get("engine")
    if lib is not None:
        return lib
    key = key_of()
    path = _cache_path(key)
    if not path.exists():
        _compile(path)
    lib = ctypes.CDLL(str(path))
    _libs["engine"] = lib
    return lib


def _compile(path: Path) -> None:
    cc = compiler()
    if not cc:
        raise NativeBuildError("no C compiler")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_so = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".so")
    os.close(fd)
    try:
        out = subprocess.run([cc[0], *FLAGS, "-o", tmp_so, str(HERE / "engine.c"), "-lm"], capture_output=True,
                             text=True)
        if out.returncode != 0:
            raise NativeBuildError(f"the C compiler failed on the native engine ({cc[0]}):\n"
                                   + (out.stderr or out.stdout)[-4000:])
        os.replace(tmp_so, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp_so)
