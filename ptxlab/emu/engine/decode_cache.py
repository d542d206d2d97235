"""Decode once: the parsed form (``core.ir.Module``) of a PTX module, cached on disk by content hash.

Parsing a large module is the slowest part of loading it (a CUTLASS example's 4.5 MB of PTX takes 10-17 s on the
reference machine); unpickling its parsed form takes a fraction of a second.  Entries live under
``$PTXLAB_CACHE/emu-decode/<k[:2]>/<k>.pkl`` (the compile cache's directory, ``toolchain.paths.cache_dir``), keyed by
the sha256 of the PTX text, the module name and the source of the modules that shape the parsed form (parser, IR,
types): editing the parser invalidates every entry.  Writes are atomic (temp file + rename), so parallel test workers
may share the cache; an unreadable entry is a miss.  ``PTXLAB_EMU_DECODE_CACHE=0`` turns the cache off.

Decoding also runs with the cyclic garbage collector paused (``no_gc``): a parsed module is millions of small
objects, and each full collection during the decode would traverse all of them (this alone made building a
``Program`` of a CUTLASS example 3x slower).
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import pickle
from pathlib import Path
from typing import Optional

from ...fileio import atomic_open
from ..core import ir
from ..core.parser import parse

ENV = "PTXLAB_EMU_DECODE_CACHE"
SCHEMA = 1
_SHAPERS = ("parser.py", "ir.py", "types.py")     # core modules whose source defines the parsed form
_digest: Optional[str] = None


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector (reference counting still frees memory) for a bulk allocation.  (Not
    gc.freeze: frozen objects that later become cyclic garbage -- a finished wave -- would never be freed, and a long
    test session would grow until it is killed.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def enabled() -> bool:
    from ... import settings
    return bool(settings.get(ENV))


def _code_digest() -> str:
    global _digest
    if _digest is None:
        h = hashlib.sha256()
        core = Path(__file__).resolve().parents[1] / "core"
        for name in _SHAPERS:
            h.update(name.encode() + b"\0" + (core / name).read_bytes())
        _digest = h.hexdigest()
    return _digest


def key_of(ptx: str, name: str) -> str:
    h = hashlib.sha256()
    h.update(f"emu-decode/{SCHEMA}/{_code_digest()}/{name}\0".encode())
    h.update(ptx.encode())
    return h.hexdigest()


def _path(key: str, create: bool) -> Path:
    from ...toolchain.paths import cache_dir
    return cache_dir(create=create) / "emu-decode" / key[:2] / f"{key}.pkl"


def load(key: str) -> Optional[ir.Module]:
    try:
        data = _path(key, create=False).read_bytes()
    except OSError:
        return None
    try:
        with no_gc():
            mod = pickle.loads(data)
    except Exception:       # a truncated or stale entry is a miss (it is rewritten below)
        return None
    return mod if isinstance(mod, ir.Module) else None


def store(key: str, mod: ir.Module) -> None:
    """Write an entry atomically; failing to write the cache is not an error."""
    try:
        path = _path(key, create=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb") as f:         # a temporary file renamed into place (removed on failure)
            pickle.dump(mod, f, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        pass


def parse_cached(ptx: str, name: str = "<ptx>") -> ir.Module:
    """``parse(ptx, name)``, from the disk cache when this exact text was parsed before."""
    if not enabled():
        with no_gc():
            return parse(ptx, name)
    key = key_of(ptx, name)
    mod = load(key)
    if mod is None:
        with no_gc():
            mod = parse(ptx, name)
        store(key, mod)
    return mod
