"""The compiled-module object returned by ``ptxlab.compile``."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from ptxlab.toolchain.resources import KernelResources, parse_ptxas_log

__all__ = ["Module", "ptx_entries"]

_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$%][\w$.]*)", re.M)


def ptx_entries(ptx: str) -> List[str]:
    """Names of the ``.entry`` kernels in PTX text, in order."""
    return list(_entries(ptx))


@functools.lru_cache(maxsize=16)
def _entries(ptx: str) -> tuple:
    # every launch asks (Device.launch checks the kernel name): scanning a CUTLASS example's 4.5 MB of PTX took
    # 0.1 s each time; a str caches its hash, so a hit costs one dict look-up
    return tuple(_ENTRY.findall(ptx))


@dataclass
class Module:
    """PTX + cubin for one arch, with resources and lazily-disassembled SASS."""

    ptx: str
    cubin: bytes
    arch: str
    name: str
    source: str
    log: str = ""
    options: tuple = ()
    key: str = ""
    cache_hit: bool = False
    dump_paths: List[Path] = field(default_factory=list)
    _sass: Optional[str] = field(default=None, repr=False)

    @property
    def kernels(self) -> List[str]:
        """Entry (kernel) names, as they appear in PTX (mangled unless declared extern "C")."""
        return ptx_entries(self.ptx)

    @property
    def resources(self) -> Dict[str, KernelResources]:
        """Per-kernel registers / shared memory / spills / stack, from the ptxas verbose log."""
        res = parse_ptxas_log(self.log)
        for k in self.kernels:  # ptxas omits nothing in practice, but keep every entry present
            res.setdefault(k, KernelResources(name=k))
        return res

    def sass(self) -> str:
        """SASS text of the cubin (nvdisasm -c), cached on the module."""
        if self._sass is None:
            from ptxlab.toolchain.sass import disassemble

            self._sass = disassemble(self.cubin, where=f"{self.name} ({self.arch})")
        return self._sass

    def __repr__(self) -> str:
        return f"Module(name={self.name!r}, arch={self.arch!r}, kernels={self.kernels}, cubin={len(self.cubin)} B)"
