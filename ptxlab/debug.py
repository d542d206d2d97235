"""Debug switches: the one place that parses ``PTXLAB_DEBUG`` (and the CLI ``--debug`` flag).

``PTXLAB_DEBUG`` is a comma-separated list of flags:

* ``dump_ptx``   write every compiled module's PTX to ``$PTXLAB_DUMP_DIR`` (default ``./ptxlab_dump``)
* ``dump_sass``  write every compiled module's SASS (nvdisasm) to the dump dir
* ``lineinfo``   compile with ``-lineinfo`` (source line info in PTX/SASS)
* ``tmem_check`` ptxas ``-g-tmem-access-check`` (sm_100-family only; checks TMEM accesses at run time)
* ``verbose``    print the ptxas/nvJitLink resource log of each compile to stderr
* ``all``        all of the above
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import FrozenSet, Iterable, Mapping, Optional, Union

from ptxlab.errors import PtxlabError

ENV_DEBUG = "PTXLAB_DEBUG"
ENV_DUMP_DIR = "PTXLAB_DUMP_DIR"
DEFAULT_DUMP_DIR = "ptxlab_dump"

KNOWN_FLAGS: FrozenSet[str] = frozenset({"dump_ptx", "dump_sass", "lineinfo", "tmem_check", "verbose"})

__all__ = ["KNOWN_FLAGS", "DebugFlags", "parse_flags", "current", "set_flags", "dump_dir"]


def parse_flags(text: Union[str, Iterable[str], None]) -> FrozenSet[str]:
    """Parse ``"dump_ptx,lineinfo"`` (or an iterable of names) into a set; unknown names raise PtxlabError."""
    if text is None:
        return frozenset()
    items = text.replace(";", ",").split(",") if isinstance(text, str) else list(text)
    out = set()
    for raw in items:
        name = raw.strip().lower().replace("-", "_")
        if not name or name in ("0", "none", "off"):
            continue
        if name in ("all", "1"):
            out |= KNOWN_FLAGS
        elif name in KNOWN_FLAGS:
            out.add(name)
        else:
            raise PtxlabError(
                f"unknown debug flag {raw.strip()!r} in {ENV_DEBUG}/--debug; "
                f"use a comma-separated subset of: {', '.join(sorted(KNOWN_FLAGS))} (or 'all')"
            )
    return frozenset(out)


@dataclass(frozen=True)
class DebugFlags:
    """Snapshot of the active debug switches."""

    flags: FrozenSet[str] = frozenset()
    dump_dir: Path = Path(DEFAULT_DUMP_DIR)

    @property
    def dump_ptx(self) -> bool:
        return "dump_ptx" in self.flags

    @property
    def dump_sass(self) -> bool:
        return "dump_sass" in self.flags

    @property
    def lineinfo(self) -> bool:
        return "lineinfo" in self.flags

    @property
    def tmem_check(self) -> bool:
        return "tmem_check" in self.flags

    @property
    def verbose(self) -> bool:
        return "verbose" in self.flags

    def __contains__(self, name: str) -> bool:
        return name in self.flags


def dump_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """Directory for PTX/SASS dumps: ``$PTXLAB_DUMP_DIR`` or ``./ptxlab_dump``."""
    env = os.environ if env is None else env
    return Path(env.get(ENV_DUMP_DIR) or DEFAULT_DUMP_DIR)


def current(env: Optional[Mapping[str, str]] = None) -> DebugFlags:
    """Read the debug switches from the environment (re-read on every call, so tests may monkeypatch)."""
    env = os.environ if env is None else env
    return DebugFlags(flags=parse_flags(env.get(ENV_DEBUG, "")), dump_dir=dump_dir(env))


def set_flags(text: Union[str, Iterable[str], None], dump: Union[str, Path, None] = None) -> DebugFlags:
    """Validate and export flags (and optionally the dump dir) to the environment; used by ``--debug``/``--dump``."""
    flags = parse_flags(text)
    os.environ[ENV_DEBUG] = ",".join(sorted(flags))
    if dump is not None:
        os.environ[ENV_DUMP_DIR] = str(dump)
    return current()
