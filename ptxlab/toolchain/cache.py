"""On-disk compile cache: one directory per sha256 key holding ptx, cubin, log and their checksums (atomic, xdist-safe).

An entry is written into a temporary directory (each file through ptxlab/fileio.py) and renamed into place, so a
reader sees a whole entry or none. ``k.sum`` holds the sha256 of the three files; :func:`load` checks it, and a
damaged entry (a bit flip, a truncated file, an edited cubin) is reported with one warning line and treated as a
miss, so the compile rebuilds it (:func:`store` replaces it). Entries written before checksums existed are accepted
when they look whole (a cubin that is an ELF file, PTX with a ``.version``) and get their ``k.sum`` then. A cache
directory that cannot be used falls back to a temporary one (paths.cache_dir); a store that fails (disk full) warns
once and the compile goes on uncached.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional, Tuple

from ptxlab.toolchain.paths import cache_dir, cache_warning

__all__ = ["cache_key", "include_digest", "load", "store"]

_HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".cu", ".inl", ".inc")
_FILES = ("k.ptx", "k.cubin", "k.log")

SCHEMA = 1
_WARNED: set = set()


def cache_key(**fields: Any) -> str:
    """sha256 over a canonical JSON of the fields (source, options, arch, compiler versions, ...)."""
    blob = json.dumps({"schema": SCHEMA, **fields}, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def include_digest(dirs) -> str:
    """Digest of every header under the caller's include dirs (relative path, size, mtime), so that editing a
    header invalidates the compiled modules that may include it, without hashing the headers' contents."""
    h = hashlib.sha256()
    for d in dirs:
        root = Path(d)
        h.update(str(root.resolve()).encode() + b"\0")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for fn in sorted(filenames):
                if fn.endswith(_HEADER_SUFFIXES):
                    st = os.stat(os.path.join(dirpath, fn))
                    rel = os.path.relpath(os.path.join(dirpath, fn), root)
                    h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _sums(blobs: dict) -> str:
    return "".join(f"{hashlib.sha256(blobs[n]).hexdigest()}  {n}\n" for n in _FILES)


def _warn_once(key: str, msg: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        cache_warning(msg)


def _entry(key: str) -> Path:
    return cache_dir() / key[:2] / key


def load(key: str) -> Optional[Tuple[str, bytes, str]]:
    """Return (ptx, cubin, log) for a key, or None on a miss, an unreadable entry or a damaged one (warned)."""
    d = _entry(key)
    try:
        blobs = {n: (d / n).read_bytes() for n in _FILES}
    except OSError:
        return None
    try:
        recorded = (d / "k.sum").read_text()
    except OSError:
        recorded = None
    if recorded is None:        # an entry from before checksums: accept it when it looks whole, and add its k.sum
        if not (blobs["k.cubin"][:4] == b"\x7fELF" and b".version" in blobs["k.ptx"]):
            _warn_once(str(d), f"compile cache entry {d} is damaged (no checksum, and its cubin/PTX are not whole); "
                               "rebuilding it")
            return None
        try:
            from ptxlab.fileio import atomic_write
            atomic_write(d / "k.sum", _sums(blobs))
        except OSError:
            pass
    elif recorded != _sums(blobs):
        bad = [n for n in _FILES if f"{hashlib.sha256(blobs[n]).hexdigest()}  {n}" not in recorded]
        _warn_once(str(d), f"compile cache entry {d} is damaged ({', '.join(bad) or 'k.sum'} does not match its "
                           "checksum); rebuilding it")
        return None
    try:
        return blobs["k.ptx"].decode(), blobs["k.cubin"], blobs["k.log"].decode()
    except UnicodeDecodeError:
        _warn_once(str(d), f"compile cache entry {d} is damaged (undecodable text); rebuilding it")
        return None


def store(key: str, ptx: str, cubin: bytes, log: str) -> Optional[Path]:
    """Write an entry atomically (temp dir + rename), replacing a damaged one; failures to write the cache are not
    fatal (one warning)."""
    from ptxlab.fileio import atomic_write

    try:
        final = _entry(key)
        parent = final.parent
        blobs = {"k.ptx": ptx.encode(), "k.cubin": bytes(cubin), "k.log": log.encode()}
        if final.is_dir():
            if load(key) is not None:
                return final
            junk = Path(tempfile.mkdtemp(prefix=".damaged-", dir=parent))
            try:
                os.rename(final, junk / "entry")
            except OSError:
                pass
            shutil.rmtree(junk, ignore_errors=True)
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parent))
        try:
            for name, blob in blobs.items():
                atomic_write(tmp / name, blob)
            atomic_write(tmp / "k.sum", _sums(blobs))
            try:
                os.rename(tmp, final)
            except OSError:  # another process won the race
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final
    except OSError as exc:
        _warn_once("store", f"could not write the compile cache ({exc.strerror or exc}); compiles are not cached in "
                            "this run")
        return None
