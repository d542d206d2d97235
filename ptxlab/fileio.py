"""Every file ptxlab writes goes through here: a temporary file in the target's directory, flushed and fsync'ed, then
renamed over the target (``os.replace`` is atomic on POSIX). A reader sees the old file or the new one, never a
truncated one: an interrupt, a full disk or a second writer cannot leave a half-written export, dump, state file,
cache entry, trace or PNG behind (the temporary file is removed on any failure and the old file stays as it was).

    with atomic_open(path, "w") as f: f.write(text)        # or atomic_write(path, text_or_bytes)

The new file gets the permissions a plain ``open(path, "w")`` would give it (0o666 minus the umask), or the old
file's when it replaces one. ``tests/test_atomic_writes.py`` checks that no module of ptxlab or stages writes a file
any other way.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator, Union

__all__ = ["atomic_open", "atomic_write"]

PathLike = Union[str, os.PathLike]


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path`` for writing (``mode`` "w" or "wb"); on a clean exit it is fsync'ed and
    renamed to ``path``; on an exception it is removed and ``path`` is untouched."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode {mode!r}; use 'w' or 'wb'")
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        try:
            perm = os.stat(p).st_mode & 0o7777
        except OSError:
            perm = 0o666 & ~_umask()
        os.fchmod(fd, perm)
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": encoding})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path: PathLike, data: Union[str, bytes], encoding: str = "utf-8") -> Path:
    """Write ``data`` (text or bytes) to ``path`` atomically (see :func:`atomic_open`); returns the path."""
    with atomic_open(path, "wb" if isinstance(data, (bytes, bytearray, memoryview)) else "w", encoding) as f:
        f.write(data)
    return Path(path)
