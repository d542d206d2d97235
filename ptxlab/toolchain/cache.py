"""On-disk compile cache: one directory per sha256 key holding ptx, cubin and log (atomic, xdist-safe)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional, Tuple

from ptxlab.toolchain.paths import cache_dir

__all__ = ["cache_key", "include_digest", "load", "store"]

_HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".cu", ".inl", ".inc")

SCHEMA = 1


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


def load(key: str) -> Optional[Tuple[str, bytes, str]]:
    """Return (ptx, cubin, log) for a key, or None on a miss or an unreadable entry."""
    d = cache_dir(create=False) / key[:2] / key
    try:
        return (
            (d / "k.ptx").read_text(),
            (d / "k.cubin").read_bytes(),
            (d / "k.log").read_text(),
        )
    except OSError:
        return None


def store(key: str, ptx: str, cubin: bytes, log: str) -> Optional[Path]:
    """Write an entry atomically (temp dir + rename); failures to write the cache are not fatal."""
    parent = cache_dir() / key[:2]
    final = parent / key
    if final.is_dir():
        return final
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parent))
        (tmp / "k.ptx").write_text(ptx)
        (tmp / "k.cubin").write_bytes(cubin)
        (tmp / "k.log").write_text(log)
        try:
            os.rename(tmp, final)
        except OSError:  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
        return final
    except OSError:
        return None
