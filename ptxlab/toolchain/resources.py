"""Per-kernel resource usage parsed from the ptxas verbose log (``-Xptxas -v`` / nvJitLink ``-verbose``)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict

__all__ = ["KernelResources", "parse_ptxas_log"]


@dataclass(frozen=True)
class KernelResources:
    """Resource usage of one kernel entry as reported by ptxas."""

    name: str
    registers: int = 0
    shared_bytes: int = 0  # static shared memory ("smem")
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0
    cmem0_bytes: int = 0


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_BARS = re.compile(r"used (\d+) barriers")
_CMEM0 = re.compile(r"(\d+) bytes cmem\[0\]")


def parse_ptxas_log(log: str) -> Dict[str, KernelResources]:
    """Parse ptxas ``-v`` output into {kernel name: KernelResources}; lines not from ptxas are ignored."""
    out: Dict[str, dict] = {}
    entry = None  # kernel whose "Used ..." line comes next
    props_for = None  # function whose stack-frame line comes next
    for line in log.splitlines():
        if not line.startswith("ptxas"):
            continue
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
            out.setdefault(entry, {"name": entry})
            continue
        m = _PROPS.search(line)
        if m:
            props_for = m.group(1).strip("'")
            continue
        m = _FRAME.search(line)
        if m and props_for is not None:
            if props_for in out or props_for == entry:
                d = out.setdefault(props_for, {"name": props_for})
                d["stack_bytes"], d["spill_stores"], d["spill_loads"] = (int(g) for g in m.groups())
            props_for = None
            continue
        m = _USED.search(line)
        if m and entry is not None:
            d = out[entry]
            d["registers"] = int(m.group(1))
            for key, rx in (("shared_bytes", _SMEM), ("barriers", _BARS), ("cmem0_bytes", _CMEM0)):
                mm = rx.search(line)
                if mm:
                    d[key] = int(mm.group(1))
    return {k: KernelResources(**v) for k, v in out.items()}
